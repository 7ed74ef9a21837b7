//! Who Helm is for one release: the field manager whose managedFields entries own the recorded
//! fields of the release's objects, written with the operation the record's apply method
//! implies, at or before the revision was recorded. The `helm` command writes as `helm`; a
//! controller built on Helm's SDK as its own name (Flux `helm-controller`, CAAPH `manager`).
//! The name only decides how helm-drift names and writes Helm's fields, so a name that could
//! hide drift or borrow another's hands is never taken: the control plane's, a person's tool,
//! helm-drift's own.

use super::attribution::is_person;
use super::managed::{SYSTEM_MANAGERS, manager_of};
use super::ownership::owned_leaves;
use super::provenance::Deployed;
use crate::model::{FieldPath, HELM_COMMAND, HelmWriter, ObjectId, WriterFound};
use jiff::Timestamp;
use serde_json::Value;
use std::collections::BTreeMap;

/// The longest field manager name the API server takes.
const LONGEST: usize = 128;

/// Why `manager` cannot be Helm's writer (learnt or given), if it cannot.
pub(crate) fn refusal(manager: &str) -> Option<&'static str> {
    if manager.is_empty() || manager.len() > LONGEST || manager.chars().any(|c| c.is_control()) {
        return Some("not a field manager name the API server takes");
    }
    if is_control_plane(manager) {
        return Some("a control-plane manager");
    }
    if manager.starts_with("helm-drift") {
        return Some("helm-drift's own manager");
    }
    if is_person(manager) {
        return Some("a person's tool");
    }
    None
}

/// Whether `manager` is a name the control plane's components write as: the known ones, and every
/// name of their families (`kube-*`, `*controller-manager`, a `system:` identity, a kubelet or
/// bootstrapper, the client library's default), so that no controller of the control plane,
/// nor anyone borrowing its name, is taken for Helm.
fn is_control_plane(manager: &str) -> bool {
    const NAMES: [&str; 6] = ["kubelet", "kubeadm", "k3s", "rke2", "cluster-autoscaler", "go-http-client"];
    let m = manager.to_ascii_lowercase();
    SYSTEM_MANAGERS.contains(&manager)
        || m.starts_with("system:")
        || m.starts_with("kube-")
        || m.ends_with("controller-manager")
        || NAMES.iter().any(|n| m == *n || m.starts_with(&format!("{n}/")) || m.starts_with(&format!("{n}-")))
}

/// A writer the operator named that cannot be Helm's, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--helm-manager {manager:?} cannot be Helm's writer: {why}")]
pub(crate) struct NotHelms {
    manager: String,
    why: &'static str,
}

/// The writer the operator named (`--helm-manager`), unless it cannot be Helm's.
pub(crate) fn given(manager: &str) -> Result<HelmWriter, NotHelms> {
    match refusal(manager) {
        Some(why) => Err(NotHelms { manager: manager.to_string(), why }),
        None => Ok(HelmWriter { manager: manager.to_string(), found: WriterFound::Given }),
    }
}

/// The writers the operator pins (`--helm-manager`, repeated): `NAME` for every release,
/// `NAMESPACE=NAME` for the releases of one namespace (the one their record is stored in, else
/// the one they install into), which wins; `MEMBER:NAMESPACE=NAME` (`MEMBER:*=NAME`: every
/// namespace) for one cluster of a fleet (a kubeconfig context or an inventory's member), which
/// wins in that cluster. A pin is never learnt, so a name borrowed on a few objects cannot move
/// it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct WriterPins {
    every: Option<HelmWriter>,
    by_namespace: Vec<(String, HelmWriter)>,
    /// Per member: the namespace (`*`: every one) and the writer.
    by_member: Vec<(String, String, HelmWriter)>,
}

impl WriterPins {
    /// The pins of `--helm-manager` values, each refused as [`given`] refuses a name.
    pub(crate) fn parse(values: &[String]) -> Result<WriterPins, NotHelms> {
        let mut pins = WriterPins::default();
        let malformed = |value: &String| NotHelms { manager: value.clone(), why: "a pin is [[MEMBER:]NAMESPACE=]NAME" };
        for value in values {
            let Some((scope, name)) = value.split_once('=') else {
                pins.every = Some(given(value)?);
                continue;
            };
            let writer = given(name).map_err(|e| NotHelms { manager: value.clone(), why: e.why })?;
            match scope.rsplit_once(':') {
                Some((member, namespace)) if !member.is_empty() && !namespace.is_empty() => {
                    pins.by_member.push((member.to_string(), namespace.to_string(), writer));
                }
                Some(_) => return Err(malformed(value)),
                None if scope.is_empty() => return Err(malformed(value)),
                None if scope == "*" => pins.every = Some(writer),
                None if !pins.by_namespace.iter().any(|(ns, _)| ns == scope) => {
                    pins.by_namespace.push((scope.to_string(), writer));
                }
                None => {}
            }
        }
        Ok(pins)
    }

    /// The pins in fleet member `member`'s cluster: its own pins over the rest.
    pub(crate) fn of_member(&self, member: &str) -> WriterPins {
        let mut pins = WriterPins { by_member: Vec::new(), ..self.clone() };
        for (_, namespace, writer) in self.by_member.iter().filter(|(m, _, _)| m == member).rev() {
            match namespace.as_str() {
                "*" => pins.every = Some(writer.clone()),
                ns => pins.by_namespace.insert(0, (ns.to_string(), writer.clone())),
            }
        }
        pins
    }

    /// The writer pinned for a release at `home`, if any.
    pub(crate) fn for_release(&self, home: crate::model::Home<'_>) -> Option<&HelmWriter> {
        let pinned = |ns: &str| self.by_namespace.iter().find(|(n, _)| n == ns).map(|(_, w)| w);
        pinned(home.stored).or_else(|| pinned(home.release)).or(self.every.as_ref())
    }
}

/// A manager that owned recorded fields and cannot be Helm's writer, with why.
type NotWriter = (String, &'static str);

/// One object of the release as read: what Helm sent (`desired`, release metadata added) and
/// the live object.
pub(crate) struct Read<'a> {
    pub(crate) id: ObjectId,
    pub(crate) desired: &'a Value,
    pub(crate) live: &'a Value,
}

/// The release's writer, learnt from its objects: each object's vote is the manager that owns
/// the most of its recorded fields among the entries that could be Helm's apply of `deployed`;
/// the manager with the most votes wins (then the most fields, then `helm`, then by name).
/// Nothing told: `helm`.
pub(crate) fn learn<'a>(objects: impl IntoIterator<Item = Read<'a>>, deployed: &Deployed) -> HelmWriter {
    let mut votes: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut cast: Vec<(ObjectId, String)> = Vec::new();
    let mut refused: Vec<NotWriter> = Vec::new();
    for o in objects {
        let (vote, turned_away) = vote(&o, deployed);
        for r in turned_away {
            if !refused.iter().any(|(m, _)| *m == r.0) {
                refused.push(r);
            }
        }
        if let Some((manager, fields)) = vote {
            let tally = votes.entry(manager.clone()).or_default();
            tally.0 += 1;
            tally.1 += fields;
            cast.push((o.id, manager));
        }
    }
    let winner = votes.iter().max_by(|(a, x), (b, y)| {
        (x.0, x.1).cmp(&(y.0, y.1)).then_with(|| (*a == HELM_COMMAND).cmp(&(*b == HELM_COMMAND))).then_with(|| b.cmp(a))
    });
    let Some((manager, (objects, _))) = winner else {
        return HelmWriter { found: WriterFound::Default { refused }, ..HelmWriter::helm_command() };
    };
    let of = cast.len();
    let others = cast.into_iter().filter(|(_, m)| m != manager).collect();
    HelmWriter { manager: manager.clone(), found: WriterFound::Learnt { objects: *objects, of, others } }
}

/// One object's vote (the manager owning the most recorded fields, and how many), and the
/// managers that owned some and cannot be Helm's.
fn vote(o: &Read<'_>, deployed: &Deployed) -> (Option<(String, usize)>, Vec<NotWriter>) {
    let entries = o.live.pointer("/metadata/managedFields").and_then(Value::as_array);
    let operation = deployed.apply.operation();
    let mut best: Option<(String, usize)> = None;
    let mut refused = Vec::new();
    for e in entries.into_iter().flatten() {
        // The control plane's entries are not skipped here: they are refused below, and said.
        if e.get("subresource").and_then(Value::as_str).is_some_and(|s| !s.is_empty())
            || e.get("operation").and_then(Value::as_str) != Some(operation)
            || written_after(e, deployed)
        {
            continue;
        }
        let Some(fields) = e.get("fieldsV1").and_then(Value::as_object) else { continue };
        let mut owned = Vec::new();
        owned_leaves(fields, o.desired, o.live, &mut FieldPath::root(), &mut owned);
        if owned.is_empty() {
            continue;
        }
        let manager = manager_of(e);
        if let Some(why) = refusal(manager) {
            refused.push((manager.to_string(), why));
            continue;
        }
        let better = best.as_ref().is_none_or(|(m, n)| {
            owned.len() > *n
                || (owned.len() == *n && (manager == HELM_COMMAND || (m != HELM_COMMAND && manager < m.as_str())))
        });
        if better {
            best = Some((manager.to_string(), owned.len()));
        }
    }
    (best, refused)
}

/// Whether the entry was last written after the revision was recorded (a later write, not the
/// apply the record describes); unknown times decide nothing.
fn written_after(entry: &Value, deployed: &Deployed) -> bool {
    let at = entry.get("time").and_then(Value::as_str).and_then(|t| t.parse::<Timestamp>().ok());
    at.zip(deployed.recorded).is_some_and(|(at, recorded)| at.as_second() > recorded.as_second())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_pin_wins_over_the_plain_one_and_control_plane_names_are_refused() {
        let values = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let pins = WriterPins::parse(&values(&["helm", "flux-system=helm-controller", "capi=manager"])).unwrap();
        let home = |stored, release| crate::model::Home::new(stored, release, "web");
        let named = |h| pins.for_release(h).map(|w| w.manager.as_str());
        assert_eq!(named(home("flux-system", "apps")), Some("helm-controller"), "where the record is stored");
        assert_eq!(named(home("apps", "capi")), Some("manager"), "else where it installs");
        assert_eq!(named(home("apps", "apps")), Some("helm"), "else the plain pin");
        assert_eq!(WriterPins::parse(&[]).unwrap().for_release(home("a", "a")), None, "else learnt");
        let fleet =
            WriterPins::parse(&values(&["helm", "arn:aws:eks:eu:1:cluster/a:apps=manager", "fleet/b:*=manager"]))
                .unwrap();
        let of = |member: &str, h| fleet.of_member(member).for_release(h).map(|w| w.manager.clone());
        assert_eq!(
            of("arn:aws:eks:eu:1:cluster/a", home("apps", "apps")).as_deref(),
            Some("manager"),
            "a member's namespace"
        );
        assert_eq!(
            of("arn:aws:eks:eu:1:cluster/a", home("web", "web")).as_deref(),
            Some("helm"),
            "its other namespaces"
        );
        assert_eq!(of("fleet/b", home("web", "web")).as_deref(), Some("manager"), "a member's every namespace");
        assert_eq!(of("fleet/c", home("apps", "apps")).as_deref(), Some("helm"), "another member");
        for refused in
            ["apps=kube-controller-manager", "=helm", "apps=", "system:serviceaccount", ":apps=helm", "m:=helm"]
        {
            let err = WriterPins::parse(&values(&[refused])).unwrap_err().to_string();
            assert!(err.contains(refused), "{err}");
        }
    }
    use serde_json::json;

    fn desired() -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"app.kubernetes.io/managed-by": "Helm"}}, "data": {"key": "a", "other": "b"}})
    }

    fn entry(manager: &str, operation: &str, time: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "time": time, "fieldsV1": fields})
    }

    fn all() -> Value {
        json!({"f:data": {".": {}, "f:key": {}, "f:other": {}}, "f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/managed-by": {}}}})
    }

    fn live(entries: Vec<Value>) -> Value {
        let mut live = desired();
        live["metadata"]["managedFields"] = Value::Array(entries);
        live
    }

    fn id(name: &str) -> ObjectId {
        ObjectId::new("v1", "ConfigMap", Some("apps"), name)
    }

    fn deployed(server_side: bool) -> Deployed {
        Deployed {
            recorded: Some("2026-12-01T10:00:05Z".parse().unwrap()),
            apply: if server_side { crate::model::Apply::ServerSide } else { crate::model::Apply::ClientSide },
            ..Deployed::default()
        }
    }

    fn learnt(lives: &[Value], server_side: bool) -> HelmWriter {
        let d = desired();
        let reads = lives.iter().enumerate().map(|(i, l)| Read { id: id(&format!("c{i}")), desired: &d, live: l });
        learn(reads, &deployed(server_side))
    }

    #[test]
    fn the_manager_that_owns_the_recorded_fields_is_the_writer() {
        let caaph = live(vec![entry("manager", "Update", "2026-12-01T10:00:04Z", all())]);
        let w = learnt(&[caaph.clone(), caaph], false);
        assert_eq!((w.manager.as_str(), w.source()), ("manager", "learnt"));
        assert_eq!(w.found, WriterFound::Learnt { objects: 2, of: 2, others: Vec::new() });
    }

    #[test]
    fn a_later_write_or_another_operation_is_not_the_apply() {
        // A hand edit under another name after the record, and an Update on a server-side
        // applied release: neither is Helm's apply.
        let flux = live(vec![
            entry("helm-controller", "Apply", "2026-12-01T10:00:05Z", all()),
            entry("kubectl-patch", "Apply", "2026-12-01T11:00:00Z", all()),
            entry("kubectl-client-side-apply", "Update", "2026-12-01T09:00:00Z", all()),
        ]);
        assert_eq!(learnt(&[flux], true).manager, "helm-controller");
    }

    #[test]
    fn objects_that_disagree_are_named_and_the_majority_decides() {
        let by = |m: &str| live(vec![entry(m, "Update", "2026-12-01T10:00:00Z", all())]);
        let w = learnt(&[by("manager"), by("helm"), by("manager")], false);
        assert_eq!(w.manager, "manager");
        assert_eq!(w.found, WriterFound::Learnt { objects: 2, of: 3, others: vec![(id("c1"), "helm".into())] });
        // A tie goes to the helm command.
        assert_eq!(learnt(&[by("manager"), by("helm")], false).manager, "helm");
    }

    #[test]
    fn nothing_told_is_the_helm_command_said_once() {
        let w = learnt(&[], false);
        assert_eq!((w.manager.as_str(), w.source()), ("helm", "default"));
        let none = live(Vec::new());
        assert_eq!(learnt(&[none], true).source(), "default");
    }

    /// A tenant's objects whose fields a control-plane manager, a person's tool or helm-drift's
    /// own manager owns do not make helm-drift write as it (nor hide a hand edit as Helm's).
    #[test]
    fn a_name_that_cannot_be_helms_is_never_learnt() {
        for m in
            ["kube-controller-manager", "kubectl-edit", "kubectl", "helm-drift-leader", "system:serviceaccount:x:y"]
        {
            let forged = live(vec![entry(m, "Update", "2026-12-01T10:00:00Z", all())]);
            let w = learnt(&[forged], false);
            assert_eq!(w.manager, "helm", "{m} was learnt");
            assert!(w.why().contains(m) || SYSTEM_MANAGERS.contains(&m), "{m}: {}", w.why());
        }
        let status = json!({"manager": "manager", "operation": "Update", "subresource": "status", "fieldsV1": all()});
        assert_eq!(learnt(&[live(vec![status])], false).source(), "default", "a status write is not an apply");
    }

    #[test]
    fn a_given_name_is_refused_as_a_learnt_one_is() {
        assert_eq!(given("helm-controller").unwrap().found, WriterFound::Given);
        let control_plane = ["kube-proxy", "aws-cloud-controller-manager", "Go-http-client", "kubelet/v1.36.3", "k3s"];
        for bad in ["", "kube-scheduler", "helm-drift", "kubectl-edit", &"x".repeat(129), "a\nb"]
            .into_iter()
            .chain(control_plane)
        {
            let e = given(bad).unwrap_err().to_string();
            assert!(e.contains("cannot be Helm's writer"), "{e}");
        }
    }
}
