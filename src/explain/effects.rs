//! What else an explanation's `--set` would change: the chart rendered with it, compared with a
//! render with today's values, field by field (an object added or removed whole). A difference
//! the render with today's values does not reproduce from the record (a random or time-made
//! value) is left out, and so is an explained field the change makes what it is live.

use super::search::Search;
use super::values::{self, Key};
use crate::desired::{self, DesiredObject};
use crate::model::{Cause, Explanation};
use anyhow::Result;
use serde_json::Value;

/// Renders for side effects, at most (one per distinct `--set`).
const MAX_RENDERS: usize = 8;
/// Changes listed per explanation, at most (the rest counted).
const MAX_LISTED: usize = 10;

/// Fills each explanation's `also` with what its `--set` changes besides the field.
pub(super) async fn effects(
    search: &mut Search<'_>,
    out: &mut [Explanation],
    keys: &[Vec<Key>],
    wanted: &Value,
    namespace: &str,
) -> Result<()> {
    if keys.iter().all(Vec::is_empty) {
        return Ok(());
    }
    let dir = tempfile::Builder::new().prefix("helm-drift-explain-").tempdir()?;
    let Ok(today) = search.render_tree(search.values, &dir).await else { return Ok(()) };
    let recorded = desired::parse_manifest(&search.release.manifest).into_iter().flatten().collect::<Vec<_>>();
    let mut seen: Vec<(Vec<Key>, Vec<String>)> = Vec::new();
    for (i, keys) in keys.iter().enumerate() {
        if keys.is_empty() {
            continue;
        }
        let mut keys = keys.iter().map(Key::settable).collect::<Vec<_>>();
        keys.sort();
        keys.dedup();
        let also = match seen.iter().find(|(k, _)| *k == keys) {
            Some((_, also)) => also.clone(),
            None if seen.len() >= MAX_RENDERS => vec!["(not worked out: too many distinct --set lines)".into()],
            None => {
                let mut tree = search.values.clone();
                for k in &keys {
                    if let Some(v) = values::get(wanted, k) {
                        values::set(&mut tree, k, v.clone());
                    }
                }
                let also = match search.render_tree(&tree, &dir).await {
                    Ok(after) => changes(&today, &after, &recorded, out, namespace),
                    Err(_) => vec!["(not worked out: the chart does not render with it)".into()],
                };
                seen.push((keys, also.clone()));
                also
            }
        };
        if let Cause::Values(built) = &mut out[i].cause {
            built.also = also;
        }
    }
    Ok(())
}

/// The fields `after` changes from `today` (`Kind namespace/name path`), without those today's
/// render does not reproduce from the record, nor explained fields it makes what they are live.
fn changes(
    today: &[DesiredObject],
    after: &[DesiredObject],
    recorded: &[DesiredObject],
    explained: &[Explanation],
    namespace: &str,
) -> Vec<String> {
    let same = |a: &DesiredObject, b: &DesiredObject| a.kind == b.kind && a.name == b.name;
    let name = |o: &DesiredObject| format!("{} {}/{}", o.kind, o.namespace.as_deref().unwrap_or(namespace), o.name);
    let mut out = Vec::new();
    for o in after {
        let Some(before) = today.iter().find(|t| same(t, o)) else {
            out.push(format!("{} (a new object)", name(o)));
            continue;
        };
        let record = recorded.iter().find(|r| same(r, o));
        let mut paths = Vec::new();
        differing(&before.object, &o.object, String::new(), &mut paths);
        for p in paths {
            let stable = record.is_none_or(|r| r.object.pointer(&p) == before.object.pointer(&p));
            let now = o.object.pointer(&p);
            let settled = explained.iter().any(|e| {
                e.object.kind == o.kind
                    && e.object.name == o.name
                    && e.path.recorded_pointer().as_deref() == Some(&p)
                    && now == Some(&e.live)
            });
            if stable && !settled {
                out.push(format!("{} {}", name(o), dotted(&p)));
            }
        }
    }
    for o in today.iter().filter(|t| !after.iter().any(|a| same(a, t))) {
        out.push(format!("{} (removed)", name(o)));
    }
    if out.len() > MAX_LISTED {
        let more = out.len() - MAX_LISTED;
        out.truncate(MAX_LISTED);
        out.push(format!("and {more} more"));
    }
    out
}

/// The pointers at which two values differ (maps key by key; lists, scalars whole).
fn differing(a: &Value, b: &Value, at: String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let next = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => differing(p, q, next, out),
                    _ => out.push(next),
                }
            }
        }
        // The same chart renders its lists in the same order: item by item when as long.
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differing(p, q, format!("{at}/{i}"), out);
            }
        }
        _ if a != b => out.push(at),
        _ => {}
    }
}

/// `data.greeting` for `/data/greeting`; a key with a dot or a slash in brackets.
fn dotted(pointer: &str) -> String {
    let mut out = String::new();
    for token in crate::model::path::tokens(pointer) {
        if token.parse::<usize>().is_ok() {
            out.push_str(&format!("[{token}]"));
        } else if token.contains(['.', '/']) {
            out.push_str(&format!("[{token:?}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(kind: &str, name: &str, v: Value) -> DesiredObject {
        DesiredObject {
            api_version: "v1".into(),
            kind: kind.into(),
            name: name.into(),
            namespace: None,
            source: None,
            object: v,
            hook: None,
        }
    }

    #[test]
    fn what_a_set_changes_besides_the_field() {
        let cm = |g: &str, stamp: &str| object("ConfigMap", "web", json!({"data": {"greeting": g, "at": stamp}}));
        let today = [cm("hi", "t1"), object("Secret", "old", json!({}))];
        let after = [cm("hi-by-hand", "t2"), object("Service", "new", json!({}))];
        let recorded = [cm("hi", "t0")];
        let got = changes(&today, &after, &recorded, &[], "apps");
        assert_eq!(
            got,
            ["ConfigMap apps/web data.greeting", "Service apps/new (a new object)", "Secret apps/old (removed)"],
            "the time-made value is left out"
        );
        assert_eq!(dotted("/metadata/labels/app.kubernetes.io~1name"), "metadata.labels[\"app.kubernetes.io/name\"]");
        assert_eq!(dotted("/spec/containers/0/image"), "spec.containers[0].image");
    }
}
