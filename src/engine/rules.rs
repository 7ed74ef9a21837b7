//! What the rules say of one object before it is compared: whether it is left out altogether
//! (a release turned off, an opt-out annotation, a rule ignoring the whole object) and which
//! of its fields are ignored (annotations, the config file's and flags' rules, the drift rules
//! of the Flux HelmRelease that installs it, an HPA owning its replicas).

use super::grounds::Grounds;
use crate::compare::IgnorePrefix;
use crate::desired::DesiredObject;
use crate::policy::ignore::{self, ObjectRef};
use serde_json::Value;

/// The object as rules select it (group, version, kind, name, namespace).
pub(super) fn object_ref(obj: &DesiredObject) -> ObjectRef<'_> {
    ObjectRef {
        group: obj.group(),
        version: obj.version(),
        kind: &obj.kind,
        name: &obj.name,
        namespace: obj.namespace.as_deref(),
        metadata: obj.object.get("metadata"),
    }
}

/// Why an object is left out of the comparison altogether (an opt-out annotation, a rule
/// ignoring the whole object).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Excluded(pub(super) String);

/// Why an object is left out whatever the cluster holds (as helm-controller leaves it out before
/// reading it): the chart's opt-out annotation (helm-drift's,
/// or Flux's `helm.toolkit.fluxcd.io/driftDetection: disabled`), a rule ignoring the whole
/// object (Flux's path `""`).
pub(super) fn left_out(ctx: &Grounds<'_>, me: &ObjectRef, obj: &DesiredObject) -> Option<Excluded> {
    if ctx.options.upgrade {
        return None;
    }
    let chart_off = ignore::from_annotations(&[&obj.object], false).0;
    let whole = || {
        [&ctx.options.rules[..], ctx.flux.for_object(me.namespace, None)]
            .into_iter()
            .flat_map(|rules| ignore::paths_for(rules, me, ctx.release, &Value::Null))
            .find(|(path, _)| path.is_empty())
            .map(|(_, why)| format!("{why} ignores the whole object (path \"\")"))
    };
    chart_off.or_else(whole).map(Excluded)
}

/// The ignore prefixes for this object (annotations, rules, an HPA owning replicas), or why it
/// is excluded altogether (the live object's opt-out annotation, when trusted).
pub(super) fn rules(
    ctx: &Grounds<'_>,
    obj: &DesiredObject,
    me: &ObjectRef,
    live: &Value,
) -> Result<Vec<IgnorePrefix>, Excluded> {
    // The chart's annotations opt out; the live object's only when trusted: whoever made the
    // drift could otherwise hide it (and the annotation is then reported like any edit).
    let trusted = ctx.options.trust_live_annotations;
    let sources: &[&Value] = if trusted { &[&obj.object, live] } else { &[&obj.object] };
    let mut ignores = Vec::new();
    if !ctx.options.upgrade {
        let (disabled, annotated) = ignore::from_annotations(sources, trusted);
        if let Some(reason) = disabled {
            return Err(Excluded(reason));
        }
        ignores = annotated;
        ignores.extend(ignore::paths_for(&ctx.options.rules, me, ctx.release, live));
        ignores.extend(ignore::paths_for(ctx.flux.for_object(me.namespace, Some(live)), me, ctx.release, live));
    }
    if let Some(s) = ctx.scaled.iter().find(|s| {
        Some(s.namespace.as_str()) == me.namespace && s.group == me.group && s.kind == me.kind && s.name == me.name
    }) {
        ignores.push(("/spec/replicas".into(), format!("HorizontalPodAutoscaler {} manages replicas", s.hpa)));
    }
    Ok(ignores)
}
