//! One audit event (`audit.k8s.io/v1` `Event`) as helm-drift keeps it: a successful write to a
//! named object, with who made it, every string bounded. What the event's sender wrote is
//! trusted only as far as the sender was authenticated (the caller's concern); here it is
//! refused when it is not what an API server writes, and never truncated where it names a
//! person (a cut name could be another person's).

use super::Target;
use crate::model::Actor;
use jiff::Timestamp;
use serde::Deserialize;

/// The longest user name, user agent, group or address kept; a longer user name refuses the
/// event, a longer agent is cut.
pub(crate) const MAX_TEXT: usize = 256;
/// The most groups and source addresses read from one event.
const MAX_LIST: usize = 32;
/// The longest event read from a log file or a batch (a metadata-level event is about 1 KiB; a
/// `RequestResponse` one holds the object twice, and an object is at most 1.5 MiB in etcd).
pub(crate) const MAX_EVENT_BYTES: usize = 4 << 20;

/// A successful write to one object, as its audit event tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AuditedWrite {
    pub(crate) target: Target,
    pub(crate) subresource: Option<String>,
    /// The field manager the request named (`?fieldManager=`), else the user agent's first word
    /// (what the API server records for an update that names none).
    pub(crate) manager: String,
    pub(crate) actor: Actor,
    pub(crate) received: Timestamp,
    pub(crate) completed: Timestamp,
}

impl AuditedWrite {
    /// About how many bytes it holds (for the window's bound).
    pub(crate) fn size(&self) -> usize {
        let a = &self.actor;
        let lists: usize = a.groups.iter().chain(&a.source_ips).map(|s| s.len() + 24).sum();
        let texts = [&self.target.group, &self.target.plural, &self.target.name, &self.manager, &a.user, &a.user_agent];
        let more =
            self.target.namespace.as_ref().map_or(0, String::len) + self.subresource.as_ref().map_or(0, String::len);
        192 + more
            + lists
            + texts.iter().map(|s| s.len()).sum::<usize>()
            + a.audit_id.len()
            + a.verb.len()
            + a.time.len()
    }
}

/// Why an event was refused (counted as a rejected input; not every skipped event is refused:
/// reads, failed requests and earlier stages are only not kept).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum Rejected {
    #[error("not an audit.k8s.io/v1 event: {0}")]
    Malformed(String),
    #[error("an audit event over {MAX_EVENT_BYTES} bytes")]
    TooLarge,
    #[error("a user name over {MAX_TEXT} characters")]
    LongName,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(rename = "auditID")]
    audit_id: String,
    stage: String,
    #[serde(default, rename = "requestURI")]
    request_uri: String,
    verb: String,
    user: RawUser,
    impersonated_user: Option<RawUser>,
    #[serde(default, rename = "sourceIPs")]
    source_ips: Capped,
    #[serde(default)]
    user_agent: String,
    object_ref: Option<RawRef>,
    response_status: Option<RawStatus>,
    request_received_timestamp: Timestamp,
    stage_timestamp: Timestamp,
    #[serde(default)]
    annotations: Annotations,
}

/// The one annotation read (the authorizer's reason); every other is skipped unread.
#[derive(Deserialize, Default)]
struct Annotations {
    #[serde(rename = "authorization.k8s.io/reason")]
    reason: Option<String>,
}

/// The first [`MAX_LIST`] strings of a list, each cut to [`MAX_TEXT`]; the rest is skipped as
/// it is read, never built.
#[derive(Default)]
struct Capped(Vec<String>);

impl<'de> Deserialize<'de> for Capped {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Capped, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Capped;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of strings")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Capped, A::Error> {
                let mut kept = Vec::new();
                while kept.len() < MAX_LIST {
                    match seq.next_element::<std::borrow::Cow<'de, str>>()? {
                        Some(s) => kept.push(cut(&s)),
                        None => return Ok(Capped(kept)),
                    }
                }
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Capped(kept))
            }
        }
        d.deserialize_seq(Visitor)
    }
}

#[derive(Deserialize)]
struct RawUser {
    #[serde(default)]
    username: String,
    #[serde(default)]
    groups: Capped,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRef {
    #[serde(default)]
    resource: String,
    namespace: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    api_group: String,
    subresource: Option<String>,
}

#[derive(Deserialize)]
struct RawStatus {
    #[serde(default)]
    code: u16,
}

const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];
/// Subresources whose writes change nothing a drift is made of.
const UNCHANGING: [&str; 7] = ["status", "token", "proxy", "exec", "attach", "portforward", "log"];

/// Parses one line of a log backend's file: `Ok(None)` when it is well formed but nothing
/// helm-drift keeps (a read, a failed request, an earlier stage, a write to no named object).
pub(crate) fn parse_line(line: &str) -> Result<Option<AuditedWrite>, Rejected> {
    parse_text(line, false)
}

/// Parses one item of a webhook's `audit.k8s.io/v1` `EventList` (whose items need not carry
/// their kind and version).
pub(crate) fn parse_item(item: &str) -> Result<Option<AuditedWrite>, Rejected> {
    parse_text(item, true)
}

fn parse_text(text: &str, listed: bool) -> Result<Option<AuditedWrite>, Rejected> {
    if text.len() > MAX_EVENT_BYTES {
        return Err(Rejected::TooLarge);
    }
    let raw: Raw = serde_json::from_str(text).map_err(|e| Rejected::Malformed(e.to_string()))?;
    typed(raw, listed)
}

/// An event that says it is one; in a list, one that says nothing of its type too.
fn typed(raw: Raw, listed: bool) -> Result<Option<AuditedWrite>, Rejected> {
    let untyped = listed && raw.api_version.is_empty() && raw.kind.is_empty();
    if !untyped && (raw.api_version != "audit.k8s.io/v1" || raw.kind != "Event") {
        return Err(Rejected::Malformed(format!("{} {}", raw.api_version, raw.kind)));
    }
    kept(raw)
}

fn kept(raw: Raw) -> Result<Option<AuditedWrite>, Rejected> {
    let success = raw.response_status.as_ref().is_some_and(|s| (200..300).contains(&s.code));
    // A dry run (helm-drift's own exact engine sends them) changes nothing.
    let dry_run = query(&raw.request_uri, "dryRun").is_some();
    if raw.stage != "ResponseComplete" || !WRITES.contains(&raw.verb.as_str()) || !success || dry_run {
        return Ok(None);
    }
    // A write through `status` is the object's controller reporting, and those through these
    // others change nothing of the object (a token, a connection): never a drift's write.
    let changes = |r: &RawRef| !r.subresource.as_deref().is_some_and(|s| UNCHANGING.contains(&s));
    // A `deletecollection` names its collection only (kept as the collection, its name empty).
    let collection = raw.verb == "deletecollection";
    let named = |r: &RawRef| (collection || !r.name.is_empty()) && !r.resource.is_empty() && changes(r);
    let Some(r) = raw.object_ref.filter(named) else { return Ok(None) };
    let (acting, impersonated_by) = match raw.impersonated_user {
        Some(i) => (i, Some(raw.user.username)),
        None => (raw.user, None),
    };
    let names = std::iter::once(&acting.username).chain(impersonated_by.as_ref());
    if names.into_iter().any(|n| n.chars().count() > MAX_TEXT) {
        return Err(Rejected::LongName);
    }
    let reason = raw.annotations.reason.as_deref().unwrap_or("");
    let manager = field_manager(&raw.request_uri).unwrap_or_else(|| agent_word(&raw.user_agent));
    let actor = Actor {
        groups: deciding(&acting.groups.0, reason),
        user: acting.username,
        impersonated_by,
        user_agent: cut(&raw.user_agent),
        source_ips: raw.source_ips.0,
        audit_id: cut(&raw.audit_id),
        verb: raw.verb,
        time: format!("{:.0}", raw.stage_timestamp),
    };
    let name = if collection { String::new() } else { r.name };
    let target = Target { group: r.api_group, plural: r.resource, namespace: r.namespace, name };
    let subresource = r.subresource.filter(|s| !s.is_empty()).map(|s| cut(&s));
    let (received, completed) = (raw.request_received_timestamp, raw.stage_timestamp);
    Ok(Some(AuditedWrite { target, subresource, manager: cut(&manager), actor, received, completed }))
}

/// The groups that decided the request: `system:masters` (which passes every authorizer), and
/// those the authorizer's reason names (`... to Group "platform"`).
fn deciding(groups: &[String], reason: &str) -> Vec<String> {
    let named = |g: &String| g == "system:masters" || reason.contains(&format!("Group \"{g}\""));
    groups.iter().take(MAX_LIST).filter(|g| named(g)).map(|g| cut(g)).collect()
}

/// The `fieldManager` query parameter of a request URI.
fn field_manager(uri: &str) -> Option<String> {
    // A Go server reads `+` in a query as a space.
    let value = query(uri, "fieldManager")?.replace('+', " ");
    Some(crate::model::percent_decoded(&value)).filter(|m| !m.is_empty())
}

/// A query parameter of a request URI, as sent.
fn query<'a>(uri: &'a str, name: &str) -> Option<&'a str> {
    let params = uri.split_once('?')?.1.split('&');
    params.filter_map(|p| p.split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v)
}

/// What the API server names an update's manager when the request names none: the user agent
/// up to its first `/`.
fn agent_word(agent: &str) -> String {
    agent.split('/').next().unwrap_or_default().to_string()
}

/// A string cut to [`MAX_TEXT`] characters (`…` marks the cut).
fn cut(s: &str) -> String {
    match s.char_indices().nth(MAX_TEXT) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    pub(crate) fn parse(value: Value) -> Result<Option<AuditedWrite>, Rejected> {
        parse_line(&value.to_string())
    }

    /// An event as kube-apiserver 1.36 writes it for `kubectl --as=alice patch` by the admin.
    pub(crate) fn impersonated_patch() -> Value {
        json!({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"db260f28","stage":"ResponseComplete",
            "requestURI":"/api/v1/namespaces/default/configmaps/probe?fieldManager=kubectl-patch","verb":"patch",
            "user":{"username":"admin","groups":["system:masters","system:authenticated"]},
            "impersonatedUser":{"username":"alice@example.com","groups":["team-a","system:authenticated"]},
            "sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.36.3 (linux/amd64) kubernetes/$Format",
            "objectRef":{"resource":"configmaps","namespace":"default","name":"probe","apiVersion":"v1"},
            "responseStatus":{"metadata":{},"code":200},
            "requestReceivedTimestamp":"2026-12-02T14:47:43.104658Z","stageTimestamp":"2026-12-02T14:47:43.106570Z",
            "annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by RoleBinding \"alice/default\" of Role \"edit-cm\" to Group \"team-a\""}})
    }

    #[test]
    fn an_impersonated_write_names_the_user_and_who_impersonated_them() {
        let w = parse(impersonated_patch()).unwrap().unwrap();
        assert_eq!(w.actor.user, "alice@example.com");
        assert_eq!(w.actor.impersonated_by.as_deref(), Some("admin"));
        assert_eq!(w.actor.groups, vec!["team-a"], "only the group the authorizer named");
        assert_eq!(w.manager, "kubectl-patch");
        assert_eq!(
            w.target,
            Target {
                group: "".into(),
                plural: "configmaps".into(),
                namespace: Some("default".into()),
                name: "probe".into()
            }
        );
        assert_eq!(w.actor.time, "2026-12-02T14:47:43Z");
        assert_eq!(w.actor.source_ips, vec!["127.0.0.1"]);
    }

    #[test]
    fn system_masters_decides_and_the_agent_names_an_unnamed_manager() {
        let mut e = impersonated_patch();
        e.as_object_mut().unwrap().remove("impersonatedUser");
        e["requestURI"] = json!("/apis/apps/v1/namespaces/default/deployments/web/scale");
        e["objectRef"]["subresource"] = json!("scale");
        let w = parse(e).unwrap().unwrap();
        assert_eq!((w.actor.user.as_str(), w.actor.groups.clone()), ("admin", vec!["system:masters".to_string()]));
        assert_eq!((w.manager.as_str(), w.subresource.as_deref()), ("kubectl", Some("scale")));
    }

    #[test]
    fn reads_failures_dry_runs_early_stages_and_status_are_not_kept() {
        for (key, value) in [("verb", json!("get")), ("stage", json!("ResponseStarted"))] {
            let mut e = impersonated_patch();
            e[key] = value;
            assert_eq!(parse(e), Ok(None));
        }
        let mut e = impersonated_patch();
        e["responseStatus"]["code"] = json!(403);
        assert_eq!(parse(e), Ok(None), "a refused write changed nothing");
        let mut e = impersonated_patch();
        e["objectRef"]["subresource"] = json!("status");
        assert_eq!(parse(e), Ok(None), "a controller's status");
        let mut e = impersonated_patch();
        e["requestURI"] = json!("/api/v1/namespaces/default/configmaps/probe?dryRun=All&fieldManager=helm");
        assert_eq!(parse(e), Ok(None), "a dry run changed nothing");
    }

    #[test]
    fn what_no_api_server_writes_is_refused() {
        let mut e = impersonated_patch();
        e["impersonatedUser"]["username"] = json!("a".repeat(MAX_TEXT + 1));
        assert_eq!(parse(e), Err(Rejected::LongName), "a cut name could be someone else's");
        let mut e = impersonated_patch();
        e["apiVersion"] = json!("audit.k8s.io/v1beta1");
        assert!(matches!(parse(e), Err(Rejected::Malformed(_))));
        assert!(matches!(parse(json!({"kind":"Event"})), Err(Rejected::Malformed(_))));
        let mut untyped = impersonated_patch();
        untyped.as_object_mut().unwrap().retain(|k, _| k != "kind" && k != "apiVersion");
        assert!(matches!(parse(untyped.clone()), Err(Rejected::Malformed(_))), "a log line says what it is");
        assert!(parse_item(&untyped.to_string()).unwrap().is_some(), "a list's item need not");
        assert!(matches!(parse_line(&"x".repeat(MAX_EVENT_BYTES + 1)), Err(Rejected::TooLarge)));
        let mut e = impersonated_patch();
        e["userAgent"] = json!("k".repeat(10 * MAX_TEXT));
        assert_eq!(parse(e).unwrap().unwrap().actor.user_agent.chars().count(), MAX_TEXT + 1, "an agent is cut");
    }

    #[test]
    fn long_lists_are_skipped_as_read_and_every_kept_text_is_counted() {
        let mut e = impersonated_patch();
        e.as_object_mut().unwrap().remove("impersonatedUser");
        e["user"]["groups"] =
            json!((0..10_000).map(|i| format!("g{i}")).chain(["system:masters".into()]).collect::<Vec<_>>());
        e["sourceIPs"] = json!(vec!["10.0.0.1"; 10_000]);
        e["objectRef"]["subresource"] = json!("s".repeat(10 * MAX_TEXT));
        e["annotations"] = json!((0..5_000).map(|i| (format!("k{i}"), json!("v"))).collect::<serde_json::Map<_, _>>());
        let w = parse(e).unwrap().unwrap();
        assert_eq!(w.actor.source_ips.len(), MAX_LIST);
        assert!(w.actor.groups.is_empty(), "system:masters past the first {MAX_LIST} groups is not read");
        assert_eq!(w.subresource.as_ref().unwrap().chars().count(), MAX_TEXT + 1, "a subresource is cut");
        assert!(w.size() > MAX_TEXT, "the subresource counts in the window's bytes: {}", w.size());
    }

    #[test]
    fn a_field_manager_is_decoded_from_the_query() {
        assert_eq!(field_manager("/x?a=1&fieldManager=my%20tool&b=2").as_deref(), Some("my tool"));
        assert_eq!(field_manager("/x?fieldManager="), None);
        assert_eq!(field_manager("/x"), None);
    }
}
