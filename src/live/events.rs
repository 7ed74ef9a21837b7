//! Kubernetes Events helm-drift writes: the Event itself (component `helm-drift`), where an
//! Event about an object goes, and the one a repair records on the object it repaired.

use crate::api::ApiError;
use kube::api::Api;
use serde_json::Value;

/// A core/v1 Event by helm-drift about `involved`, named `name` in `namespace`.
pub fn event(
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
        message: Some(message.to_string()),
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

/// Where an Event about an object in `namespace` is recorded: its namespace, or `default` for a
/// cluster-scoped object (the API server requires an Event's namespace to match its object's, and
/// takes cluster-scoped objects' Events in `default`, as kubectl and controllers record them).
pub fn event_namespace(namespace: Option<&str>) -> &str {
    namespace.unwrap_or("default")
}

/// Records a Kubernetes Event about `object` (best effort: the error is returned for a warning).
pub async fn record_event(
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
