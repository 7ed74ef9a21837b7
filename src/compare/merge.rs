//! Helm 3's client-side upgrade, as the object it leaves: the live object, less what the new
//! chart stops setting (the three-way merge's deletions), with the new chart's values laid over
//! it (a built-in kind's strategic merge: maps key by key, keyed lists item by item; a custom
//! resource's JSON merge patch: lists whole). What someone added by hand stays.

use crate::compare::merge_keys;
use crate::model::{FieldDiff, FieldPath, Segment};
use serde_json::Value;

/// The fields the recorded object sets, the new one does not, and the live one holds: the
/// upgrade removes them (maps key by key, keyed lists item by item: Helm 3's three-way merge
/// deletes them, Helm 4's apply lets go of them; a list without keys is the chart's whole).
pub(crate) fn no_longer_set(before: &Value, after: &Value, live: &Value) -> Vec<FieldDiff> {
    let mut out = Vec::new();
    walk(before, after, live, &FieldPath::root(), &mut out);
    out
}

fn walk(before: &Value, after: &Value, live: &Value, at: &FieldPath, out: &mut Vec<FieldDiff>) {
    match (before, after, live) {
        (Value::Object(b), _, Value::Object(l)) => {
            for (k, v) in b {
                let Some(now) = l.get(k) else { continue };
                let here = at.field(k);
                match after.get(k) {
                    None if !(at.is_root() && k == "status") => out.push(FieldDiff::new(here, Some(now), None)),
                    Some(next) => walk(v, next, now, &here, out),
                    None => {}
                }
            }
        }
        (Value::Array(b), Value::Array(a), Value::Array(l)) => {
            let field = match at.0.last() {
                Some(Segment::Field(f)) => f.as_str(),
                _ => return,
            };
            let keys = |list: &[Value]| merge_keys::keys(field, list);
            let (Some(kb), Some(ka), Some(kl)) = (keys(b), keys(a), keys(l)) else { return };
            for (i, key) in kb.iter().enumerate() {
                let Some(j) = kl.iter().position(|k| k == key) else { continue };
                let here = at.item(Some(i), Some(j), Some(key.clone()));
                match ka.iter().position(|k| k == key) {
                    None => out.push(FieldDiff::new(here, Some(&l[j]), None)),
                    Some(n) => walk(&b[i], &a[n], &l[j], &here, out),
                }
            }
        }
        _ => {}
    }
}

/// The object Helm 3's upgrade leaves: `live` without `gone` (found by [`no_longer_set`]), with
/// `desired` laid over it (`null` removes, as in a merge patch).
pub(crate) fn client_side(live: &Value, gone: &[FieldDiff], desired: &Value, strategic: bool) -> Value {
    let mut after = live.clone();
    // Deepest and last items first, so that the indices of the others hold.
    let mut pointers: Vec<String> = gone.iter().filter_map(|g| g.path.live_pointer()).collect();
    let rank = |t: String| t.parse::<usize>().map_or((1, 0, t.clone()), |n| (0, n, String::new()));
    pointers.sort_by_cached_key(|p| {
        std::cmp::Reverse(crate::model::path::tokens(p).into_iter().map(rank).collect::<Vec<_>>())
    });
    for pointer in pointers {
        crate::model::path::remove(&mut after, &pointer);
    }
    overlay(&mut after, desired, "", strategic);
    after
}

fn overlay(slot: &mut Value, desired: &Value, field: &str, strategic: bool) {
    match (slot, desired) {
        (Value::Object(at), Value::Object(d)) => {
            for (k, v) in d {
                match (v, at.get_mut(k)) {
                    (Value::Null, _) => _ = at.remove(k),
                    (v, Some(here)) => overlay(here, v, k, strategic),
                    (v, None) => _ = at.insert(k.clone(), v.clone()),
                }
            }
        }
        (Value::Array(at), Value::Array(d)) if strategic => {
            match (merge_keys::keys(field, at), merge_keys::keys(field, d)) {
                (Some(have), Some(want)) => {
                    for (item, key) in d.iter().zip(&want) {
                        match have.iter().position(|k| k == key) {
                            Some(j) => overlay(&mut at[j], item, field, strategic),
                            None => at.push(item.clone()),
                        }
                    }
                }
                _ => *at = d.clone(),
            }
        }
        (slot, d) => *slot = d.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_port_renumbered_replaces_the_old_one_and_hand_additions_stay() {
        let before = json!({"spec": {"ports": [{"name": "http", "port": 80}]}});
        let after = json!({"spec": {"ports": [{"name": "http", "port": 8080}]}});
        let live = json!({"metadata": {"labels": {"by-hand": "x"}}, "spec": {"ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80}], "clusterIP": "10.0.0.1"}});
        let gone = no_longer_set(&before, &after, &live);
        let left = client_side(&live, &gone, &after, true);
        assert_eq!(left["spec"]["ports"], json!([{"name": "http", "port": 8080}]));
        assert_eq!(
            (left["spec"]["clusterIP"].clone(), left["metadata"]["labels"]["by-hand"].clone()),
            (json!("10.0.0.1"), json!("x"))
        );
    }

    #[test]
    fn keyed_items_merge_lists_without_keys_and_custom_resources_are_whole() {
        let live = json!({"env": [{"name": "A", "value": "1"}, {"name": "HAND", "value": "2"}], "args": ["a", "b"]});
        let desired = json!({"env": [{"name": "A", "value": "3"}], "args": ["c"], "gone": null});
        let left = client_side(&live, &[], &desired, true);
        assert_eq!(left, json!({"env": [{"name": "A", "value": "3"}, {"name": "HAND", "value": "2"}], "args": ["c"]}));
        let left = client_side(&live, &[], &desired, false);
        assert_eq!(left["env"], json!([{"name": "A", "value": "3"}]));
    }

    #[test]
    fn removals_go_deepest_and_last_first() {
        let live = json!({"env": [{"name": "A"}, {"name": "B"}, {"name": "C"}]});
        let before = json!({"env": [{"name": "A"}, {"name": "B"}, {"name": "C"}]});
        let after = json!({"env": [{"name": "B"}]});
        let gone = no_longer_set(&before, &after, &live);
        assert_eq!(client_side(&live, &gone, &after, true), json!({"env": [{"name": "B"}]}));
    }
}
