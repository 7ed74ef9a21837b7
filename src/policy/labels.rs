//! Label selector text as Kubernetes parses it (`labels.Parse`): `k=v`, `k==v`, `k!=v`,
//! `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, comma-separated, every requirement to hold. A Flux
//! ignore rule selects objects by their labels or annotations with it.

use serde_json::{Map, Value};

/// A parsed selector: every requirement must hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LabelSelector(Vec<Requirement>);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    /// `k=v`, `k==v`, `k in (…)`: present with one of the values.
    In(String, Vec<String>),
    /// `k!=v`, `k notin (…)`: absent, or none of the values.
    NotIn(String, Vec<String>),
    Exists(String),
    Absent(String),
}

/// Why a selector's text is not one Kubernetes takes.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid selector {text:?}: {why}")]
pub(crate) struct SelectorTextError {
    text: String,
    why: String,
}

/// What is wrong with one part of the text, in words.
struct SelectorFault(String);

impl From<&str> for SelectorFault {
    fn from(why: &str) -> SelectorFault {
        SelectorFault(why.to_string())
    }
}

/// The longest selector text read (a label key and value are at most 316 characters together).
const MOST: usize = 4096;

impl LabelSelector {
    pub(crate) fn parse(text: &str) -> Result<LabelSelector, SelectorTextError> {
        let fail = |SelectorFault(why)| SelectorTextError { text: text.chars().take(120).collect(), why };
        if text.len() > MOST {
            return Err(fail(SelectorFault(format!("longer than {MOST} bytes"))));
        }
        let mut out = Vec::new();
        for part in split_top(text).map_err(&fail)? {
            out.push(requirement(part.trim()).map_err(&fail)?);
        }
        Ok(LabelSelector(out))
    }

    /// Whether `map` (labels or annotations; `None`: none) meets every requirement.
    pub(crate) fn matches(&self, map: Option<&Map<String, Value>>) -> bool {
        let get = |k: &str| map.and_then(|m| m.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::In(k, vs) => get(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|v| !vs.iter().any(|x| x == v)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::Absent(k) => get(k).is_none(),
        })
    }
}

/// The requirements of `text`, split at commas outside parentheses (empty text: none).
fn split_top(text: &str) -> Result<Vec<&str>, SelectorFault> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let (mut depth, mut start, mut out) = (0u32, 0, Vec::new());
    for (i, c) in text.char_indices() {
        match c {
            '(' if depth == 0 => depth = 1,
            '(' => return Err("nested parentheses".into()),
            ')' if depth == 1 => depth = 0,
            ')' => return Err("a ')' without its '('".into()),
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("a '(' without its ')'".into());
    }
    out.push(&text[start..]);
    Ok(out)
}

/// One requirement's text.
fn requirement(part: &str) -> Result<Requirement, SelectorFault> {
    if part.is_empty() {
        return Err("an empty requirement".into());
    }
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement::Absent(key_text(key.trim())?));
    }
    for (op, negated) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((k, v)) = part.split_once(op) {
            let (key, value) = (key_text(k.trim())?, value_text(v.trim())?);
            return Ok(if negated { Requirement::NotIn(key, vec![value]) } else { Requirement::In(key, vec![value]) });
        }
    }
    if let Some(open) = part.find('(') {
        let (head, list) = (part[..open].trim(), part[open..].trim());
        let inner =
            list.strip_prefix('(').and_then(|l| l.strip_suffix(')')).ok_or(SelectorFault::from("text after ')'"))?;
        let values = inner.split(',').map(|v| value_text(v.trim())).collect::<Result<Vec<_>, _>>()?;
        let (key, op) =
            head.rsplit_once(char::is_whitespace).ok_or(SelectorFault::from("expected KEY in (…) or KEY notin (…)"))?;
        let key = key_text(key.trim())?;
        return match op {
            "in" => Ok(Requirement::In(key, values)),
            "notin" => Ok(Requirement::NotIn(key, values)),
            other => Err(SelectorFault(format!("unknown operator {other:?}"))),
        };
    }
    if part.contains(['<', '>']) {
        return Err("the numeric operators < and > are not supported".into());
    }
    Ok(Requirement::Exists(key_text(part)?))
}

/// A label key: `[prefix/]name`, the name 1–63 characters of alphanumerics, `-`, `_`, `.`,
/// beginning and ending alphanumeric; the prefix a DNS subdomain.
fn key_text(key: &str) -> Result<String, SelectorFault> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let dns = |p: &str| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| {
                !l.is_empty()
                    && l.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            })
    };
    if !name_text(name) || name.is_empty() || prefix.is_some_and(|p| !dns(p)) {
        return Err(SelectorFault(format!("{key:?} is not a label key")));
    }
    Ok(key.to_string())
}

/// A label value: empty, or a name as in [`key_text`].
fn value_text(value: &str) -> Result<String, SelectorFault> {
    if !name_text(value) {
        return Err(SelectorFault(format!("{value:?} is not a label value")));
    }
    Ok(value.to_string())
}

fn name_text(s: &str) -> bool {
    let edge = |c: Option<char>| c.is_none_or(|c| c.is_ascii_alphanumeric());
    s.len() <= 63
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && edge(s.chars().next())
        && edge(s.chars().last())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sel(text: &str) -> LabelSelector {
        LabelSelector::parse(text).unwrap()
    }

    #[test]
    fn every_operator_as_kubernetes_reads_it() {
        let labels = json!({"app": "web", "tier": "front", "example.com/team": "a"});
        let m = labels.as_object();
        for yes in [
            "app=web",
            "app==web",
            "app = web",
            "tier!=back",
            "missing!=x",
            "app in (web, api)",
            "tier notin (back)",
            "missing notin (x)",
            "app",
            "!missing",
            "app=web,tier=front",
            "example.com/team=a",
            "",
        ] {
            assert!(sel(yes).matches(m), "{yes}");
        }
        for no in ["app=api", "app!=web", "app in (api)", "missing in (x)", "app notin (web)", "missing", "!app"] {
            assert!(!sel(no).matches(m), "{no}");
        }
        assert!(!sel("app=web,tier=back").matches(m), "every requirement holds");
        assert!(sel("!app").matches(None) && !sel("app").matches(None));
    }

    #[test]
    fn text_kubernetes_refuses_is_refused() {
        for bad in ["app=(web", "app in web", "app in (a", "x,", "-a=b", "a=b c", "a in (b) c", "a > 1", "UPPER/a=b"] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad}");
        }
        let e = LabelSelector::parse("a=b c").unwrap_err().to_string();
        assert_eq!(e, "invalid selector \"a=b c\": \"b c\" is not a label value");
        assert!(LabelSelector::parse(&"a".repeat(5000)).is_err());
    }
}
