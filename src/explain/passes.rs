//! The passes after the probe search: lists and maps that only grew (by hand, or added outside
//! Helm) explained by the values a chart leaves empty to fill them, and live values that lack
//! the shape's last part (an image without its digest) fitted with that value emptied. Each is
//! verified by a render.

use super::field::{Appearance, Field};
use super::search::{MAX_RENDERS, Search, find};
use super::{extension, shape, values};
use crate::compare::subset::scalar_equal;
use crate::model::{DriftReport, FieldPath, Segment};
use anyhow::Result;
use serde_json::Value;
use std::collections::{BTreeSet, VecDeque};

/// The lists and maps that fields added outside Helm made grow (an item appended, an entry
/// added, a map the chart leaves out added whole), one field each: live as it is, recorded as
/// it is without what was added. Secrets are left out.
pub(super) fn added_fields(report: &DriftReport) -> Vec<Field<'_>> {
    let mut out = Vec::new();
    for o in report.objects.iter().filter(|o| !o.id.is_secret()) {
        let Some(live) = &o.live else { continue };
        // Each addition's list or map: its parent, or itself when a whole map was added.
        let owner = |a: &crate::model::Foreign| {
            let whole = a.value.is_object() && matches!(a.path.0.last(), Some(Segment::Field(_)));
            if whole { a.path.clone() } else { FieldPath(a.path.0[..a.path.0.len().saturating_sub(1)].to_vec()) }
        };
        let mut owners: Vec<FieldPath> = Vec::new();
        for a in &o.added {
            let p = owner(a);
            if !owners.contains(&p) && !p.0.is_empty() {
                owners.push(p);
            }
        }
        for path in owners {
            let Some(pointer) = path.live_pointer() else { continue };
            let Some(now) = live.pointer(&pointer) else { continue };
            let mine: Vec<&crate::model::Foreign> = o.added.iter().filter(|a| owner(a) == path).collect();
            let recorded = match now {
                Value::Array(items) => {
                    let mut left = items.clone();
                    for a in &mine {
                        if let Some(at) = left.iter().position(|i| *i == a.value) {
                            left.remove(at);
                        }
                    }
                    Value::Array(left)
                }
                Value::Object(_) if mine.iter().any(|a| a.path == path) => Value::Object(Default::default()),
                Value::Object(m) => {
                    let mut left = m.clone();
                    for a in &mine {
                        if let Some(Segment::Field(k)) = a.path.0.last() {
                            left.remove(k);
                        }
                    }
                    Value::Object(left)
                }
                _ => continue,
            };
            let at = path.recorded_pointer().unwrap_or(pointer);
            out.push(Field {
                object: o,
                path,
                at,
                recorded,
                live: now.clone(),
                untried: BTreeSet::new(),
                trouble: Vec::new(),
                regroups: 0,
                found: None,
                grown: None,
                added: true,
                fitted: None,
            });
        }
    }
    out
}

/// Lists that only grew and no value explains: the chart's empty values (`extraArgs: {}`)
/// each get a probe, rendered together (in halves when a render fails, within the bound);
/// the one whose probe shows in the list, in a form every added item fits, explains it.
pub(super) async fn grown(search: &mut Search<'_>, fields: &mut [Field<'_>]) -> Result<()> {
    if !fields.iter().any(|f| f.found.is_none() && extension::growth(&f.recorded, &f.live).is_some()) {
        return Ok(());
    }
    let empties = extension::empties(search.values);
    let dir = tempfile::Builder::new().prefix("helm-drift-explain-").tempdir()?;
    let mut queue: VecDeque<Vec<usize>> = VecDeque::from([(0..empties.len()).collect::<Vec<usize>>()]);
    while let Some(group) = queue.pop_front() {
        if group.is_empty() || search.renders >= MAX_RENDERS {
            continue;
        }
        let mut tree = search.values.clone();
        for &n in &group {
            let empty = values::get(search.values, &empties[n]).cloned().unwrap_or(Value::Null);
            values::set(&mut tree, &empties[n], extension::probe(n, &empty));
        }
        let Ok(objects) = search.render_tree(&tree, &dir).await else {
            if group.len() > 1 {
                let (a, b) = group.split_at(group.len() / 2);
                queue.push_front(b.to_vec());
                queue.push_front(a.to_vec());
            }
            continue;
        };
        for f in fields.iter_mut().filter(|f| f.found.is_none() && f.grown.is_none()) {
            let Some(grown) = extension::growth(&f.recorded, &f.live) else { continue };
            let Some(rendered) = find(&objects, f.object).and_then(|o| o.object.pointer(&f.at)) else { continue };
            let form = group.iter().filter_map(|&n| extension::Form::of(n, rendered)).find_map(|form| {
                let value = form.value_for(&grown)?;
                Some((empties[form.empty].clone(), form.shape(), value))
            });
            f.grown = form;
        }
    }
    Ok(())
}

/// Fields whose live value lacks the shape's last part (an image without the digest the
/// shape ends with): the shape without it, that value emptied, is rendered once and kept
/// when the template then writes the live value.
pub(super) async fn tails(search: &mut Search<'_>, fields: &mut [Field<'_>]) -> Result<()> {
    let dir = tempfile::Builder::new().prefix("helm-drift-explain-").tempdir()?;
    let current = |n: usize| search.leaves[n].1.clone();
    let mut guesses = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let Some(Appearance::Pieces(pieces)) = &f.found else { continue };
        if shape::fit(pieces, &f.live, &current).is_none()
            && let Some(parts) = shape::fit_without_tail(pieces, &f.live, &current)
        {
            guesses.push((i, parts));
        }
    }
    for (i, parts) in guesses {
        if search.renders >= MAX_RENDERS {
            break;
        }
        let mut tree = search.values.clone();
        for (n, v) in &parts {
            values::set(&mut tree, &search.leaves[*n].0, v.clone());
        }
        let Ok(objects) = search.render_tree(&tree, &dir).await else { continue };
        let f = &mut fields[i];
        let rendered = find(&objects, f.object).and_then(|o| o.object.pointer(&f.at));
        if rendered.is_some_and(|r| scalar_equal(r, &f.live, &f.path)) {
            f.fitted = Some(parts);
        }
    }
    Ok(())
}
