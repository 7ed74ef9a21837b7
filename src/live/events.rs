//! Kubernetes Events helm-drift writes: the Event itself (component `helm-drift`), where an
//! Event about an object goes, and the one a repair records on the object it repaired.

use crate::api::ApiError;
use kube::api::Api;
use serde_json::Value;

/// A core/v1 Event by helm-drift about `involved`, named `name` in `namespace`.
pub(crate) fn event(
    involved: k8s_openapi::api::core::v1::ObjectReference,
    namespace: &str,
    name: String,
    reason: &str,
    message: &str,
    warning: bool,
    action: &str,
) -> k8s_openapi::api::core::v1::Event {
    use k8s_openapi::api::core::v1::{Event, EventSource};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
    let now = k8s_openapi::jiff::Timestamp::now();
    Event {
        metadata: ObjectMeta { name: Some(name), namespace: Some(namespace.to_string()), ..Default::default() },
        involved_object: involved,
        reason: Some(reason.to_string()),
        message: Some(fit(&escaped(message))),
        type_: Some(if warning { "Warning" } else { "Normal" }.to_string()),
        source: Some(EventSource { component: Some("helm-drift".into()), ..Default::default() }),
        reporting_component: Some("helm-drift".into()),
        reporting_instance: Some("helm-drift".into()),
        action: Some(action.into()),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        event_time: Some(MicroTime(now)),
        count: Some(1),
        ..Default::default()
    }
}

/// `message` with every control character written as an escape (`\u001b`): Event messages
/// carry names and reasons others wrote (a pause's reason, a forged record's chart), and are
/// read in terminals (`kubectl describe`, `get events`). The one door every Event goes through.
fn escaped(message: &str) -> std::borrow::Cow<'_, str> {
    if !message.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(message);
    }
    let mut out = String::with_capacity(message.len() + 16);
    for c in message.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The most bytes an Event's message may hold (the API server refuses more: "can have at most
/// 1024 characters", counted in bytes).
pub(crate) const MESSAGE_MAX: usize = 1024;

/// `message` cut to fit an Event, at a character boundary, saying how much was left out.
pub(crate) fn fit(message: &str) -> String {
    if message.len() <= MESSAGE_MAX {
        return message.to_string();
    }
    let left_out = |kept: usize| format!(" … ({} more bytes)", message.len() - kept);
    let mut cut = MESSAGE_MAX - left_out(0).len();
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{}", &message[..cut], left_out(cut))
}

/// Where an Event about an object in `namespace` is recorded: its namespace, or `default` for a
/// cluster-scoped object (the API server requires an Event's namespace to match its object's, and
/// takes cluster-scoped objects' Events in `default`, as kubectl and controllers record them).
pub(crate) fn event_namespace(namespace: Option<&str>) -> &str {
    namespace.unwrap_or("default")
}

/// Records a Kubernetes Event about `object` (best effort: the error is returned for a warning).
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn record_event(
    client: &kube::Client,
    namespace: &str,
    object: &Value,
    reason: &str,
    message: &str,
) -> Result<(), ApiError> {
    use k8s_openapi::api::core::v1::{Event, ObjectReference};
    let text = |p: &str| object.pointer(p).and_then(Value::as_str).map(str::to_string);
    let name = text("/metadata/name").unwrap_or_default();
    let involved = ObjectReference {
        api_version: text("/apiVersion"),
        kind: text("/kind"),
        name: Some(name.clone()),
        namespace: text("/metadata/namespace"),
        uid: text("/metadata/uid"),
        ..Default::default()
    };
    let unique = format!("{name}.helm-drift.{}", k8s_openapi::jiff::Timestamp::now().as_nanosecond());
    let event = event(involved, namespace, unique, reason, message, false, "Repair");
    let api: Api<Event> = Api::namespaced(client.clone(), namespace);
    api.create(&Default::default(), &event).await.map(|_| ()).map_err(|e| ApiError::from_kube(&e, "create", "events"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_fit_an_event_and_say_what_was_left_out() {
        assert_eq!(fit("short"), "short");
        for long in ["x".repeat(5000), "é".repeat(3000), format!("a{}", "日本".repeat(800))] {
            let cut = fit(&long);
            assert!(cut.len() <= MESSAGE_MAX, "{}", cut.len());
            let kept = cut.split(" … (").next().unwrap().len();
            assert!(cut.ends_with(&format!("({} more bytes)", long.len() - kept)), "{cut}");
        }
    }

    #[test]
    fn every_event_message_is_escaped_whatever_its_reason() {
        let involved = Default::default();
        let hostile = "paused: \u{1b}]0;owned\u{7}\u{1b}[2J\nWarning  Forged  fake line\r";
        for reason in ["DriftDetected", "DriftResolved", "DriftPaused", "DriftRepairRefused", "DriftRepaired"] {
            let e = event(Clone::clone(&involved), "ns", "n".into(), reason, hostile, true, "Check");
            let message = e.message.unwrap();
            assert!(!message.chars().any(char::is_control), "{reason}: {message:?}");
            assert!(message.contains("\\u001b]0;owned\\u0007") && message.contains("\\u000aWarning"), "{message}");
        }
        assert_eq!(escaped("plain é 日本"), "plain é 日本");
    }
}
