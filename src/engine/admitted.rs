//! The reader's word on fields no manager owns when the server cannot be asked (the read-only
//! engine, a dry-run refused): admission's configuration, as far as a reader can tell
//! ([`crate::compare::admitted`]). A built-in plugin's value is the server's; a field on an
//! object that a mutating webhook or policy covers is admitted (shown, not counted); anything
//! else is drift. The same objects and owners give the same verdict, whenever it is asked.

use super::grounds::{Inquiry, Judge};
use crate::compare::admitted::{AdmittedObject, built_in, matching};
use crate::live::mutators::{Admission, Mutator};
use crate::model::{Expected, Foreign};
use serde_json::{Map, Value};
use std::sync::Arc;

/// `nobodys` split into drift and what admission may have added.
pub(crate) async fn judged(
    judge: &Judge<'_>,
    asked: &Inquiry<'_>,
    nobodys: Vec<Foreign>,
) -> (Vec<Foreign>, Vec<Expected>) {
    let (admission, mut covering) = cover(judge, asked).await;
    // Evidence destroyed is no excuse: on an object that holds no entry of Helm's writer (its
    // managedFields wiped), admission's coverage explains nothing.
    if !crate::compare::managed::holds_entry_of(asked.live, &judge.grounds.writer.manager) {
        covering.clear();
    }
    let obj = asked.obj;
    let (mut drift, mut admitted) = (Vec::new(), Vec::new());
    for f in nobodys {
        if built_in(&admission, obj.group(), &obj.kind, &f.path.pointer(), &f.value).is_some() {
            continue;
        }
        if covering.is_empty() {
            drift.push(f);
            continue;
        }
        let reason = format!(
            "added at admission by {}, as far as a reader can tell: the read-only engine cannot tell it from an edit that cleared the object's managedFields",
            names(&covering).join(" or ")
        );
        admitted.push(Expected { path: f.path, value: f.value, reason, changed_by: None });
    }
    (drift, admitted)
}

/// The mutating webhooks and policies that cover `asked`'s object, by name (a changed value
/// the read-only engine reports may be their rewrite).
pub(crate) async fn covering(judge: &Judge<'_>, asked: &Inquiry<'_>) -> Vec<String> {
    names(&cover(judge, asked).await.1)
}

fn names(mutators: &[Mutator]) -> Vec<String> {
    let name =
        |m: &Mutator| if m.conditional { format!("{} (if its conditions hold)", m.name) } else { m.name.clone() };
    mutators.iter().map(name).collect()
}

/// Admission's configuration, and what of it covers `asked`'s object at create or update.
async fn cover(judge: &Judge<'_>, asked: &Inquiry<'_>) -> (Arc<Admission>, Vec<Mutator>) {
    let admission = judge.cache.admission(judge.client).await;
    let namespace = asked.at.namespace.as_deref();
    let namespace_labels = match namespace {
        Some(ns) => judge.cache.namespace_labels(judge.client, ns).await,
        None => None,
    };
    let empty = Map::new();
    let labels = asked.live.pointer("/metadata/labels").and_then(Value::as_object).unwrap_or(&empty);
    let target = AdmittedObject {
        group: &asked.at.resource.group,
        version: &asked.at.resource.version,
        plural: &asked.at.resource.plural,
        namespace,
        namespace_labels: namespace_labels.as_deref(),
        labels,
    };
    let covering = matching(&admission, &target).into_iter().cloned().collect();
    (admission, covering)
}
