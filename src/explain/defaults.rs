//! The values a template reads through `default`, `coalesce` or `tpl`, or reads though
//! values.yaml leaves them out: an empty string, a null, a key values.yaml lacks, a template
//! string. The first search cannot see them (their value is not in the field), so the fields
//! whose live value its shape cannot give are searched again with these probed too: `{{
//! .Values.image.tag | default .Chart.AppVersion }}` is then `{image.repository}:{image.tag}`.

use super::field::{Appearance, Field};
use super::search::Search;
use super::shape::{self, Piece};
use super::values::{Key, KeyPart};
use crate::release::Release;
use anyhow::Result;
use base64::Engine as _;
use serde_json::Value;
use std::collections::BTreeSet;

/// The keys the chart's templates name (`.Values.a.b`, `$.Values.a`), in order, once each.
pub(super) fn named(release: &Release) -> Vec<Key> {
    let Some(chart) = &release.chart else { return Vec::new() };
    let Ok(templates) = chart.templates() else { return Vec::new() };
    let mut out: BTreeSet<Key> = BTreeSet::new();
    for t in templates {
        let Some(text) = t.data.and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok()) else {
            continue;
        };
        let text = String::from_utf8_lossy(&text);
        out.extend(keys_in(&text));
    }
    out.into_iter().collect()
}

/// The `.Values.` keys a template's text names.
fn keys_in(text: &str) -> Vec<Key> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices(".Values.") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `.Chart.Values.` or `$x.Values.`: not the release's values
        }
        let rest = &text[at + ".Values.".len()..];
        let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).unwrap_or(rest.len());
        let steps: Vec<KeyPart> =
            rest[..end].split('.').take_while(|k| !k.is_empty()).map(|k| KeyPart::Key(k.to_string())).collect();
        if !steps.is_empty() {
            out.push(Key(steps));
        }
    }
    out
}

/// Whether a value is one the first search cannot see in a field: empty, absent, a template.
pub(super) fn unseen(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty() || s.contains("{{"),
        _ => false,
    }
}

/// Searches again, with the values the first search could not see, the fields whose live
/// value their shape cannot give (or that showed none); keeps what it finds when the live
/// value then fits, else what the first search found.
pub(super) async fn unseen_again(search: &mut Search<'_>, fields: &mut [Field<'_>]) -> Result<()> {
    let hidden: BTreeSet<usize> =
        search.leaves.iter().enumerate().filter(|(_, (_, v))| unseen(v)).map(|(n, _)| n).collect();
    if hidden.is_empty() {
        return Ok(());
    }
    let current = |n: usize| search.leaves[n].1.clone();
    let mut before = Vec::new();
    for (i, f) in fields.iter_mut().enumerate() {
        let shown: Vec<usize> = match &f.found {
            Some(Appearance::Pieces(p)) if f.fitted.is_none() && shape::fit(p, &f.live, &current).is_none() => {
                p.iter().filter_map(|p| if let Piece::Value(n) = p { Some(*n) } else { None }).collect()
            }
            None if f.grown.is_none() && !f.added && !f.live.is_object() && !f.live.is_array() => Vec::new(),
            _ => continue,
        };
        before.push((i, f.found.take(), std::mem::take(&mut f.trouble)));
        f.untried = hidden.iter().copied().chain(shown).collect();
        f.regroups = 0;
    }
    if before.is_empty() {
        return Ok(());
    }
    search.run(fields).await?;
    for (i, found, trouble) in before {
        let f = &mut fields[i];
        let fits = matches!(&f.found, Some(Appearance::Pieces(p)) if shape::fit(p, &f.live, &current).is_some());
        if !fits {
            (f.found, f.trouble) = (found, trouble);
        }
        f.untried.clear();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_templates_name() {
        let text = r#"image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
level: {{ $.Values.logLevel | default "info" }} {{ .Chart.Values.not }} {{ include "x" . }}"#;
        let keys: Vec<String> = keys_in(text).iter().map(Key::to_string).collect();
        assert_eq!(keys, ["image.repository", "image.tag", "logLevel"]);
        assert!(unseen(&Value::Null) && unseen(&Value::String(String::new())));
        assert!(unseen(&Value::String("{{ .Release.Name }}-web".into())) && !unseen(&Value::from(1)));
    }
}
