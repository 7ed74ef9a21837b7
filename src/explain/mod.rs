//! `check --explain`: for each modified field, which values of the release the template builds
//! it from, and the values that would make the template write the live value. Every value that
//! could produce a field gets a probe of its own (`shape`), the chart rebuilt from the record is
//! rendered with all of them at once, and the probes that show in the field name its values and
//! its shape; renders that fail or lose the field are split in halves until each value is
//! tried, within a bound in renders and time.

mod defaults;
mod effects;
mod extension;
mod field;
mod passes;
mod search;
mod shape;
mod values;

pub(crate) use values::merge as merge_values;

use crate::helm::{Capabilities, ChartFiles, HelmBinary};
use crate::model::{Built, Cause, DriftReport, Explanation};
use crate::release::Release;
use anyhow::{Context, Result};
use field::{Appearance, Field};
use search::Search;
use serde_json::Value;
use shape::Piece;
use values::Key;

/// Explains the modified fields of a report.
pub(crate) async fn explain(
    helm: &HelmBinary,
    release: &Release,
    files: &ChartFiles,
    cluster: &Capabilities,
    report: &DriftReport,
) -> Result<Vec<Explanation>> {
    let defaults = release.chart.as_ref().map(|c| c.default_values()).transpose().context("the chart's values")?;
    let user = release.user_values().context("the release's values")?;
    let values = values::merged(defaults.as_ref(), Some(&user));
    let mut leaves = values::leaves(&values);
    leaves.extend(values::absent(&values, &defaults::named(release)));
    let mut fields: Vec<Field> = report
        .objects
        .iter()
        .flat_map(|o| o.fields.iter().map(move |f| (o, f)))
        .filter_map(|(o, f)| Field::new(o, &f.path, f.recorded.as_ref()?, f.live.as_ref()?, &leaves))
        .collect();
    fields.extend(passes::added_fields(report));
    let mut search = Search { helm, release, files, cluster, values: &values, leaves: &leaves, renders: 0 };
    search.run(&mut fields).await?;
    passes::grown(&mut search, &mut fields).await?;
    passes::tails(&mut search, &mut fields).await?;
    defaults::unseen_again(&mut search, &mut fields).await?;
    let (mut out, keys, wanted) = conclude(fields, &values, &leaves);
    effects::effects(&mut search, &mut out, &keys, &wanted, &report.namespace).await?;
    Ok(out)
}

/// A field built from values (its `--set` and side effects are filled in later).
fn values_cause(keys: Vec<String>, shape: String, misfit: Option<String>) -> Cause {
    Cause::Values(Built { keys, shape, set: Vec::new(), misfit, also: Vec::new() })
}

/// The explanations, with the values that make every explained field live: one set of values
/// for the release, so a list holding two explained values is set once with both. Also the
/// keys each explanation changes, and the values with all of them changed.
fn conclude(fields: Vec<Field>, values: &Value, leaves: &[(Key, Value)]) -> (Vec<Explanation>, Vec<Vec<Key>>, Value) {
    let mut wanted = values.clone();
    let mut taken: Vec<(usize, Value, String)> = Vec::new();
    let mut out = Vec::new();
    let mut changes = Vec::new();
    for f in fields {
        let name = |n: usize| leaves[n].0.to_string();
        let place = format!("{} {}", f.object.id, f.path);
        let mut grown_keys: Vec<Key> = Vec::new();
        let (cause, changed) = match f.found {
            Some(Appearance::Transformed(n)) => (
                values_cause(
                    vec![name(n)],
                    String::new(),
                    Some("the template transforms the value (the field is not a copy of it)".into()),
                ),
                Vec::new(),
            ),
            Some(Appearance::Pieces(pieces)) => {
                let mut keys: Vec<String> = Vec::new();
                for p in &pieces {
                    if let Piece::Value(n) = p
                        && !keys.contains(&name(*n))
                    {
                        keys.push(name(*n));
                    }
                }
                let shape = shape::shape(&pieces, &name);
                let current = |n: usize| leaves[n].1.clone();
                let (changed, misfit) = match shape::fit(&pieces, &f.live, &current).or(f.fitted.clone()) {
                    None => (
                        Vec::new(),
                        Some("the live value does not have the template's shape (change the chart)".into()),
                    ),
                    Some(parts) => {
                        let changed: Vec<(usize, Value)> =
                            parts.into_iter().filter(|(n, v)| *v != leaves[*n].1).collect();
                        match changed.iter().find_map(|(n, v)| taken.iter().find(|(m, w, _)| m == n && w != v)) {
                            Some((n, _, other)) => (
                                Vec::new(),
                                Some(format!("{} also makes {other}, which asks for another value", name(*n))),
                            ),
                            None => (changed, None),
                        }
                    }
                };
                for (n, v) in &changed {
                    values::set(&mut wanted, &leaves[*n].0, v.clone());
                    taken.push((*n, v.clone(), place.clone()));
                }
                (values_cause(keys, shape, misfit), changed)
            }
            None if f.grown.is_some() => {
                let (key, shape, value) = f.grown.clone().expect("checked");
                values::set(&mut wanted, &key, value);
                grown_keys.push(key.clone());
                (values_cause(vec![key.to_string()], shape, None), Vec::new())
            }
            // An addition no empty value of the chart explains: nothing to say of it.
            None if f.added => continue,
            None if f.trouble.is_empty() => (Cause::HardCoded(f.object.source.clone()), Vec::new()),
            None => {
                let mut trouble = f.trouble;
                trouble.dedup();
                (Cause::NotFound(trouble.join("; ")), Vec::new())
            }
        };
        let mut keys: Vec<Key> = changed.into_iter().map(|(n, _)| leaves[n].0.clone()).collect();
        keys.append(&mut grown_keys);
        changes.push(keys);
        out.push(Explanation { object: f.object.id.clone(), path: f.path, live: f.live, cause });
    }
    for (e, keys) in out.iter_mut().zip(&changes) {
        if let Cause::Values(built) = &mut e.cause {
            built.set = values::set_pairs(&wanted, keys);
        }
    }
    (out, changes, wanted)
}
