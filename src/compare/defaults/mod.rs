//! What the server would hold for Helm's object: the defaults the API server fills in for
//! built-in kinds (its defaulting functions, as data in `table`), the values it or a
//! controller chooses (a Service's cluster IP, a node port, a Deployment's revision annotation),
//! and a CRD's schema `default`s. A field another manager owns whose live value is one of these
//! is ownership, not an addition; an empty value Helm sent where the server chooses (`clusterIP:
//! ""`, `nodePort: 0`) sets nothing.

mod table;

pub(crate) use table::is_built_in;

use super::subset::scalar_equal;
use crate::model::FieldPath;
use serde_json::Value;
use table::Fill::{ChosenWhenAbsent, Json, PullPolicy, Sibling};
use table::When::Present;
use table::{Fill, When, rules_for};

/// Stands for a value the server (or a controller) chooses: any live value is what it holds.
pub(crate) const CHOSEN: &str = "\u{1}chosen by the server";

/// A rule placed for a kind: its path as tokens.
type Placed = (Vec<String>, Fill, When);

/// The rules of a kind, placed once per process.
fn placed(group: &str, kind: &str) -> &'static [Placed] {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    type ByKind = HashMap<(String, String), &'static [Placed]>;
    static PLACED: LazyLock<Mutex<ByKind>> = LazyLock::new(Default::default);
    let mut all = PLACED.lock().expect("defaults lock");
    all.entry((group.to_string(), kind.to_string())).or_insert_with(|| {
        let rules: Vec<Placed> =
            rules_for(group, kind).into_iter().map(|(at, fill, when)| (tokens(&at), fill, when)).collect();
        Box::leak(rules.into_boxed_slice())
    })
}

/// How [`fill`] treats what it finds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FillMode {
    /// Everything the server would hold: absent fields filled, chosen ones as [`CHOSEN`].
    Held,
    /// Only empty values Helm sent where the server chooses: replaced by the default, or by
    /// `null` ("sets nothing") where the server picks the value.
    Empties,
}

/// `desired` as the server would hold it: built-in defaults, then the CRD `schema`'s
/// (`openAPIV3Schema` of the served version) for a custom resource. Chosen values are
/// [`CHOSEN`].
pub(crate) fn held(group: &str, kind: &str, desired: &Value, schema: Option<&Value>) -> Value {
    let mut out = desired.clone();
    for (at, rule, when) in placed(group, kind) {
        apply(&mut out, at, *rule, *when, FillMode::Held);
    }
    if let Some(schema) = schema {
        schema_defaults(&mut out, schema);
    }
    out
}

/// `desired` with the empty values that mean "let the server choose" (`clusterIP: ""`,
/// `nodePort: 0`, `imagePullPolicy: ""`...) as `null`: they set nothing, like a `null` in a
/// chart. Borrowed when there is none.
pub(crate) fn without_empty_choices<'a>(group: &str, kind: &str, desired: &'a Value) -> std::borrow::Cow<'a, Value> {
    fn has_empty(v: &Value) -> bool {
        match v {
            Value::String(s) => s.is_empty(),
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::Object(o) => o.values().any(has_empty),
            Value::Array(a) => a.iter().any(has_empty),
            _ => false,
        }
    }
    if !has_empty(desired) {
        return std::borrow::Cow::Borrowed(desired);
    }
    let mut out = desired.clone();
    for (at, rule, when) in placed(group, kind) {
        apply(&mut out, at, *rule, *when, FillMode::Empties);
    }
    if out == *desired { std::borrow::Cow::Borrowed(desired) } else { std::borrow::Cow::Owned(out) }
}

fn tokens(at: &str) -> Vec<String> {
    at.split('/').filter(|t| !t.is_empty()).map(str::to_string).collect()
}

/// Applies one rule at `path` below `v` (`*` every item of a list).
fn apply(v: &mut Value, path: &[String], fill: Fill, when: When, mode: FillMode) {
    match path {
        [] => merge_rule(v, fill, mode, None),
        [last] if last != "*" => {
            let Value::Object(parent) = v else { return };
            let sibling = match fill {
                Sibling(name) => parent.get(name).cloned(),
                PullPolicy => Some(pull_policy(parent.get("image"))),
                _ => None,
            };
            match parent.get_mut(last.as_str()) {
                Some(child) if !child.is_null() => merge_rule(child, fill, mode, sibling),
                _ if when == Present || mode == FillMode::Empties => {}
                _ => {
                    if let Some(value) = rule_value(fill, sibling) {
                        parent.insert(last.clone(), value);
                    }
                }
            }
        }
        [first, rest @ ..] if first == "*" => {
            if let Value::Array(items) = v {
                items.iter_mut().for_each(|item| apply(item, rest, fill, when, mode));
            }
        }
        [first, rest @ ..] => {
            if let Some(child) = v.get_mut(first.as_str()) {
                apply(child, rest, fill, when, mode);
            }
        }
    }
}

/// The value a rule fills in, `sibling` the value it copies.
fn rule_value(fill: Fill, sibling: Option<Value>) -> Option<Value> {
    match fill {
        Json(text) => Some(parse(text).clone()),
        ChosenWhenAbsent => Some(Value::String(CHOSEN.into())),
        PullPolicy | Sibling(_) => sibling.filter(|s| !is_unset(s)),
    }
}

/// A rule's JSON with `"@chosen"` as [`CHOSEN`], parsed once per process (the rules are a
/// fixed set of constants).
fn parse(text: &'static str) -> &'static Value {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    static PARSED: LazyLock<Mutex<HashMap<usize, &'static Value>>> = LazyLock::new(Default::default);
    fn chosen(v: &mut Value) {
        match v {
            Value::String(s) if s == "@chosen" => *s = CHOSEN.into(),
            Value::Object(o) => o.values_mut().for_each(chosen),
            Value::Array(a) => a.iter_mut().for_each(chosen),
            _ => {}
        }
    }
    let mut parsed = PARSED.lock().expect("defaults lock");
    parsed.entry(text.as_ptr() as usize).or_insert_with(|| {
        let mut v: Value = serde_json::from_str(text).expect("built-in defaults are JSON");
        chosen(&mut v);
        Box::leak(Box::new(v))
    })
}

/// Merges a rule's value into a value Helm sent.
fn merge_rule(v: &mut Value, fill: Fill, mode: FillMode, sibling: Option<Value>) {
    match fill {
        ChosenWhenAbsent => {}
        Json(text) => merge(v, parse(text), mode),
        PullPolicy | Sibling(_) if mode == FillMode::Empties => {
            if is_unset(v) {
                *v = Value::Null;
            }
        }
        PullPolicy | Sibling(_) => {
            if is_unset(v)
                && let Some(s) = rule_value(fill, sibling)
            {
                *v = s;
            }
        }
    }
}

/// An empty value where the server fills one in: `""`, or `0` for a number it chooses.
fn is_unset(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

/// Fills `default` into `v`: absent fields (with [`FillMode::Held`]) and empty strings, and zero
/// numbers where the server chooses.
fn merge(v: &mut Value, default: &Value, mode: FillMode) {
    let (Value::Object(have), Value::Object(defaults)) = (&mut *v, default) else { return };
    for (k, d) in defaults {
        let chosen = d.as_str() == Some(CHOSEN);
        match have.get_mut(k) {
            None | Some(Value::Null) if mode == FillMode::Held => {
                have.insert(k.clone(), d.clone());
            }
            None | Some(Value::Null) => {}
            // An empty value sent sets nothing: the server fills in its default, which may
            // depend on more than this field (`externalTrafficPolicy` only for node ports).
            Some(Value::String(s)) if s.is_empty() && !d.is_object() && !d.is_array() => {
                have.insert(k.clone(), if mode == FillMode::Empties { Value::Null } else { d.clone() });
            }
            Some(Value::Number(n)) if chosen && n.as_f64() == Some(0.0) => {
                have.insert(k.clone(), if mode == FillMode::Empties { Value::Null } else { d.clone() });
            }
            Some(child @ Value::Object(_)) => merge(child, d, mode),
            Some(_) => {}
        }
    }
}

/// The `imagePullPolicy` the server gives a container running `image`.
fn pull_policy(image: Option<&Value>) -> Value {
    let image = image.and_then(Value::as_str).unwrap_or("");
    let name = image.rsplit('/').next().unwrap_or(image);
    let latest = !image.contains('@') && name.split_once(':').is_none_or(|(_, tag)| tag == "latest");
    Value::String(if latest { "Always" } else { "IfNotPresent" }.into())
}

/// A CRD schema's `default`s filled into absent (or `null`) fields, as the API server defaults
/// a custom resource (structural defaulting: outside in, into lists and maps).
fn schema_defaults(v: &mut Value, schema: &Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (k, s) in props {
                    if o.get(k).is_none_or(Value::is_null)
                        && let Some(d) = s.get("default")
                    {
                        o.insert(k.clone(), d.clone());
                    }
                    if let Some(child) = o.get_mut(k) {
                        schema_defaults(child, s);
                    }
                }
            } else if let Some(s) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                o.values_mut().for_each(|child| schema_defaults(child, s));
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                items.iter_mut().for_each(|item| schema_defaults(item, s));
            }
        }
        _ => {}
    }
}

/// `held` without the values the server chooses: what holds for a field whose owner did not
/// create the object (a node port owned by `kubectl edit` was changed by it, not chosen).
pub(crate) fn without_chosen(held: &Value) -> Value {
    match held {
        Value::Object(o) => Value::Object(
            o.iter().filter(|(_, v)| v.as_str() != Some(CHOSEN)).map(|(k, v)| (k.clone(), without_chosen(v))).collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_chosen).collect()),
        v => v.clone(),
    }
}

/// Whether `live` is what the server holds where it would hold `held` (a value of [`held`]):
/// every field of `live` as held, [`CHOSEN`] matching anything.
pub(crate) fn holds(live: &Value, held: &Value) -> bool {
    if held.as_str() == Some(CHOSEN) {
        return true;
    }
    match (live, held) {
        (Value::Object(l), Value::Object(h)) => l.iter().all(|(k, lv)| h.get(k).is_some_and(|hv| holds(lv, hv))),
        (Value::Array(l), Value::Array(h)) => l.len() == h.len() && l.iter().zip(h).all(|(lv, hv)| holds(lv, hv)),
        _ => scalar_equal(held, live, &FieldPath::root()),
    }
}

/// Where `live` and `held` (a value of [`held`]) disagree, as JSON pointers: `+` a field of
/// `live` that `held` does not hold, `-` one `held` predicts that `live` lacks (not a chosen or
/// null one), `~` a value that differs. What [`holds`] decides, said field by field (the tests of
/// each Kubernetes version compare the server with the table through it).
pub(crate) fn disagreements(live: &Value, held: &Value) -> Vec<String> {
    let mut out = Vec::new();
    disagree(live, held, "", &mut out);
    out
}

fn disagree(live: &Value, held: &Value, at: &str, out: &mut Vec<String>) {
    let chosen = |v: &Value| v.as_str() == Some(CHOSEN);
    if chosen(held) {
        return;
    }
    match (live, held) {
        (Value::Object(l), Value::Object(h)) => {
            for (k, lv) in l {
                match h.get(k) {
                    Some(hv) => disagree(lv, hv, &format!("{at}/{k}"), out),
                    None => out.push(format!("+{at}/{k}")),
                }
            }
            let predicted = h.iter().filter(|(k, hv)| !l.contains_key(*k) && !chosen(hv) && !hv.is_null());
            out.extend(predicted.map(|(k, _)| format!("-{at}/{k}")));
        }
        (Value::Array(l), Value::Array(h)) if l.len() == h.len() => {
            for (i, (lv, hv)) in l.iter().zip(h).enumerate() {
                disagree(lv, hv, &format!("{at}/{i}"), out);
            }
        }
        _ if holds(live, held) => {}
        _ => out.push(format!("~{at}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 2, "strategy": {"type": "RollingUpdate"}, "template": {"spec": {
                "serviceAccountName": "sa",
                "containers": [{"name": "web", "image": "registry.example/web:1.0",
                    "ports": [{"containerPort": 8080}],
                    "livenessProbe": {"httpGet": {"path": "/", "port": 8080}}}]}}}})
    }

    #[test]
    fn a_deployment_is_held_with_the_servers_defaults_and_chosen_values() {
        let h = held("apps", "Deployment", &deployment(), None);
        assert_eq!(h["spec"]["replicas"], 2, "what Helm sent stays");
        assert_eq!(h["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(
            h["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
        );
        let pod = &h["spec"]["template"]["spec"];
        assert_eq!((pod["dnsPolicy"].as_str(), pod["serviceAccount"].as_str()), (Some("ClusterFirst"), Some("sa")));
        let c = &pod["containers"][0];
        assert_eq!(c["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c["ports"][0]["protocol"], "TCP");
        assert_eq!(c["livenessProbe"]["periodSeconds"], 10);
        assert_eq!(c["livenessProbe"]["httpGet"]["scheme"], "HTTP");
        assert!(c.get("readinessProbe").is_none(), "no probe is made up");
        assert_eq!(h["metadata"]["annotations"]["deployment.kubernetes.io/revision"], CHOSEN);
        assert!(holds(&json!("7"), &h["metadata"]["annotations"]["deployment.kubernetes.io/revision"]));
    }

    #[test]
    fn the_pull_policy_follows_the_image_tag() {
        assert_eq!(pull_policy(Some(&json!("nginx"))), "Always");
        assert_eq!(pull_policy(Some(&json!("nginx:latest"))), "Always");
        assert_eq!(pull_policy(Some(&json!("localhost:5000/nginx"))), "Always");
        assert_eq!(pull_policy(Some(&json!("localhost:5000/nginx:1.2"))), "IfNotPresent");
        assert_eq!(pull_policy(Some(&json!("nginx@sha256:abc"))), "IfNotPresent");
    }

    #[test]
    fn a_live_value_is_held_only_when_it_is_the_default() {
        let h = held("apps", "Deployment", &deployment(), None);
        assert!(holds(&json!({"maxSurge": "25%", "maxUnavailable": "25%"}), &h["spec"]["strategy"]["rollingUpdate"]));
        assert!(!holds(&json!({"maxSurge": "50%", "maxUnavailable": "25%"}), &h["spec"]["strategy"]["rollingUpdate"]));
        assert!(!holds(&json!({"maxSurge": "25%", "extra": 1}), &h["spec"]["strategy"]["rollingUpdate"]));
        let c = &h["spec"]["template"]["spec"]["containers"][0];
        assert!(!holds(&json!("Always"), &c["imagePullPolicy"]));
    }

    #[test]
    fn empty_values_that_let_the_server_choose_set_nothing() {
        let svc = json!({"spec": {"type": "NodePort", "clusterIP": "", "sessionAffinity": "",
            "ports": [{"port": 80, "nodePort": 0, "targetPort": 0, "protocol": ""}]}});
        let got = without_empty_choices("", "Service", &svc).into_owned();
        assert_eq!(
            got,
            json!({"spec": {"type": "NodePort", "clusterIP": null, "sessionAffinity": null,
                "ports": [{"port": 80, "nodePort": null, "targetPort": null, "protocol": null}]}})
        );
        let cluster_ip = json!({"spec": {"type": "ClusterIP", "externalTrafficPolicy": ""}});
        assert_eq!(
            without_empty_choices("", "Service", &cluster_ip).into_owned(),
            json!({"spec": {"type": "ClusterIP", "externalTrafficPolicy": null}}),
            "not the default of node-port Services"
        );
        let held = held("", "Service", &got, None);
        assert_eq!(
            (held["spec"]["sessionAffinity"].as_str(), held["spec"]["ports"][0]["targetPort"].as_i64()),
            (Some("None"), Some(80))
        );
        let pvc = json!({"spec": {"volumeName": "", "storageClassName": ""}});
        assert_eq!(
            without_empty_choices("", "PersistentVolumeClaim", &pvc).into_owned(),
            json!({"spec": {"volumeName": null, "storageClassName": ""}}),
            "an empty storage class means no class and stays"
        );
        let same = json!({"spec": {"replicas": 0}});
        assert!(
            matches!(without_empty_choices("apps", "Deployment", &same), std::borrow::Cow::Borrowed(_)),
            "0 replicas is a choice"
        );
    }

    #[test]
    fn a_crd_schema_defaults_absent_fields_outside_in() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer"}, "color": {"type": "string", "default": "blue"},
            "limits": {"type": "object", "default": {}, "properties": {"cpu": {"type": "string", "default": "1"}}},
            "items": {"type": "array", "items": {"type": "object", "properties": {"weight": {"type": "integer", "default": 1}}}}}}}});
        let cr = json!({"spec": {"size": 3, "items": [{}, {"weight": 5}]}});
        let h = held("test.helm-drift.io", "Widget", &cr, Some(&schema));
        assert_eq!(
            h["spec"],
            json!({"size": 3, "color": "blue", "limits": {"cpu": "1"}, "items": [{"weight": 1}, {"weight": 5}]})
        );
        assert_eq!(held("test.helm-drift.io", "Widget", &cr, None), cr);
        assert!(is_built_in("apps") && !is_built_in("test.helm-drift.io"));
    }

    #[test]
    fn a_pod_holds_the_default_service_account_never_any() {
        let pod = json!({"spec": {"containers": [{"name": "c", "image": "busybox:1"}]}});
        let h = held("", "Pod", &pod, None);
        assert_eq!(
            (h["spec"]["serviceAccountName"].as_str(), h["spec"]["serviceAccount"].as_str()),
            (Some("default"), Some("default"))
        );
        assert!(!holds(&json!("admin"), &h["spec"]["serviceAccountName"]));
        assert_eq!(h["spec"]["tolerations"].as_array().map(Vec::len), Some(2));
        assert_eq!(without_chosen(&h)["spec"].get("nodeName"), None, "a chosen value only for the object's creator");
    }
}
