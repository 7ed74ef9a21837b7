//! Probe values and what a probe render shows: each candidate value gets a probe no chart
//! writes by chance (`web-zq3x`, `86003`), so one render tells which values a field is built
//! from and the field's shape (`{image.repository}:{image.tag}`); the live value is then split
//! along that shape into the values that would give it.

use super::values::printed;
use serde_json::Value;

/// Whole-number probes start here; they stay under a million, which Helm's templates print
/// without an exponent (values are floats).
const NUMBER_PROBES: i64 = 86_000;
/// At most this many candidates get a probe of their own in one render.
pub(crate) const MAX_PROBES: usize = 10_000;

/// The probe of candidate `n` whose current value is `v`: a string keeps its value as a prefix
/// (so `6.5.0` stays a version: `6.5.0-zq3x`), a number becomes `86000 + n`, a boolean flips, an
/// empty or absent value becomes text.
pub(crate) fn probe(n: usize, v: &Value) -> Value {
    match v {
        // Empty, absent, or a template the chart renders with `tpl`: the probe alone (a
        // template's text would not survive `tpl`; a literal does).
        Value::Null => Value::String(format!("zq{n}x")),
        Value::String(s) if s.is_empty() || s.contains("{{") => Value::String(format!("zq{n}x")),
        Value::String(s) => Value::String(format!("{s}-zq{n}x")),
        Value::Number(_) => Value::from(NUMBER_PROBES + n as i64),
        Value::Bool(b) => Value::Bool(!b),
        other => other.clone(),
    }
}

/// A second probe for a text value the chart refused with the first (a template that checks
/// it with a pattern of letters): letters only, `infozqdx`.
pub(crate) fn letters(n: usize, v: &Value) -> Option<Value> {
    let Value::String(s) = v else { return None };
    let (mut n, mut tag) = (n, String::new());
    loop {
        tag.insert(0, (b'a' + (n % 26) as u8) as char);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    Some(Value::String(format!("{s}zq{tag}x")))
}

/// A piece of a field: text the template writes, or candidate `n`'s value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Value(usize),
}

/// The pieces of a rendered field, given the probes of that render (`(n, probe)`); `None` when
/// no probe shows in it.
pub(crate) fn read(rendered: &Value, probes: &[(usize, Value)]) -> Option<Vec<Piece>> {
    let text = match rendered {
        Value::String(s) => s.as_str(),
        Value::Number(_) => {
            let n = probes.iter().find(|(_, p)| p.is_number() && p.as_f64() == rendered.as_f64())?.0;
            return Some(vec![Piece::Value(n)]);
        }
        _ => return None,
    };
    let tokens: Vec<(usize, String, bool)> = probes
        .iter()
        .filter_map(|(n, p)| match p {
            Value::String(s) => Some((*n, s.clone(), false)),
            Value::Number(_) => Some((*n, printed(p), true)),
            _ => None,
        })
        .collect();
    let (mut pieces, mut literal, mut found) = (Vec::new(), String::new(), false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let before_digit = text[..text.len() - rest.len()].ends_with(|c: char| c.is_ascii_digit());
        let hit = tokens
            .iter()
            .filter(|(_, t, digits)| {
                rest.starts_with(t.as_str())
                    && (!digits || (!before_digit && !rest[t.len()..].starts_with(|c: char| c.is_ascii_digit())))
            })
            .max_by_key(|(_, t, _)| t.len());
        match hit {
            Some((n, t, _)) => {
                if !literal.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut literal)));
                }
                pieces.push(Piece::Value(*n));
                found = true;
                rest = &rest[t.len()..];
            }
            None => {
                literal.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    if !literal.is_empty() {
        pieces.push(Piece::Text(literal));
    }
    found.then_some(pieces)
}

/// The shape of a field, each value written `{name}`.
pub(crate) fn shape(pieces: &[Piece], name: &dyn Fn(usize) -> String) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.clone(),
            Piece::Value(n) => format!("{{{}}}", name(*n)),
        })
        .collect()
}

/// The values (candidate, new value) that make the template write `live`, given each
/// candidate's current value; of several ways to split it, the one that keeps most values as
/// they are. `None` when the live value does not have the shape.
pub(crate) fn fit(pieces: &[Piece], live: &Value, current: &dyn Fn(usize) -> Value) -> Option<Vec<(usize, Value)>> {
    if let [Piece::Value(n)] = pieces {
        return Some(vec![(*n, typed(&current(*n), live)?)]);
    }
    let target = match live {
        Value::String(s) => s.clone(),
        Value::Number(_) | Value::Bool(_) => live.to_string(),
        _ => return None,
    };
    let mut splits = Vec::new();
    split(pieces, &target, &mut Vec::new(), &mut splits);
    splits
        .into_iter()
        .filter_map(|parts| {
            let mut out: Vec<(usize, Value)> = Vec::new();
            for (n, part) in parts {
                let value = typed(&current(n), &Value::String(part))?;
                match out.iter().find(|(m, _)| *m == n) {
                    Some((_, v)) if *v != value => return None,
                    Some(_) => {}
                    None => out.push((n, value)),
                }
            }
            Some(out)
        })
        .max_by_key(|out| {
            (out.iter().filter(|(n, v)| printed(v) == printed(&current(*n))).count(), usize::MAX - out.len())
        })
}

/// When the live value lacks the shape's last part (`{tag}@{digest}` where the live image has
/// no digest): the fit of the shape without its last separator and value, with that value
/// emptied (templates often write `@{digest}` only when there is one). Only a guess, to be
/// verified by a render.
pub(crate) fn fit_without_tail(
    pieces: &[Piece],
    live: &Value,
    current: &dyn Fn(usize) -> Value,
) -> Option<Vec<(usize, Value)>> {
    let [head @ .., Piece::Text(_), Piece::Value(n)] = pieces else { return None };
    let emptiable = matches!(current(*n), Value::String(s) if !s.is_empty());
    if !emptiable || head.contains(&Piece::Value(*n)) || head.is_empty() {
        return None;
    }
    let mut parts = fit(head, live, current)?;
    parts.push((*n, Value::String(String::new())));
    Some(parts)
}

/// At most this many ways to split a live value are weighed.
const MAX_SPLITS: usize = 256;

fn split(pieces: &[Piece], rest: &str, parts: &mut Vec<(usize, String)>, out: &mut Vec<Vec<(usize, String)>>) {
    if out.len() >= MAX_SPLITS {
        return;
    }
    match pieces.split_first() {
        None if rest.is_empty() => out.push(parts.clone()),
        None => {}
        Some((Piece::Text(t), more)) => {
            if let Some(after) = rest.strip_prefix(t.as_str()) {
                split(more, after, parts, out);
            }
        }
        Some((Piece::Value(n), more)) => {
            for end in (0..=rest.len()).filter(|i| rest.is_char_boundary(*i)) {
                parts.push((*n, rest[..end].to_string()));
                split(more, &rest[end..], parts, out);
                parts.pop();
            }
        }
    }
}

/// `live` as a value of the type `current` has (`9999` for a number, `"9999"` for a string).
fn typed(current: &Value, live: &Value) -> Option<Value> {
    let text = match live {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match current {
        Value::String(_) => Some(Value::String(text)),
        Value::Number(_) => match live {
            Value::Number(_) => Some(live.clone()),
            _ => text.parse::<i64>().map(Value::from).ok().or_else(|| text.parse::<f64>().ok().map(Value::from)),
        },
        Value::Bool(_) => text.parse::<bool>().ok().map(Value::Bool),
        // A value the chart leaves out: what the live value is.
        Value::Null if !live.is_null() && !live.is_object() && !live.is_array() => Some(live.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn probes() -> Vec<(usize, Value)> {
        vec![
            (0, probe(0, &json!("registry.example"))),
            (1, probe(1, &json!("team/web"))),
            (2, probe(2, &json!("6.5.0"))),
            (3, probe(3, &json!(9898))),
            (4, probe(4, &json!(1))),
        ]
    }

    #[test]
    fn a_probe_render_shows_the_values_and_the_shape() {
        let rendered = json!("registry.example-zq0x/team/web-zq1x:6.5.0-zq2x");
        let pieces = read(&rendered, &probes()).unwrap();
        let names = ["image.registry", "image.repository", "image.tag", "port", "replicas"];
        assert_eq!(shape(&pieces, &|n| names[n].to_string()), "{image.registry}/{image.repository}:{image.tag}");
        assert_eq!(read(&json!("--port=86003"), &probes()).unwrap(), [Piece::Text("--port=".into()), Piece::Value(3)]);
        assert_eq!(read(&json!(86004), &probes()).unwrap(), [Piece::Value(4)]);
        assert_eq!(read(&json!("--port=186003"), &probes()), None, "digits around a number are not a probe");
        assert_eq!(read(&json!("unchanged"), &probes()), None);
    }

    #[test]
    fn the_live_value_splits_along_the_shape_keeping_most_values() {
        let current = |n: usize| [json!("localhost:5000"), json!("team/web"), json!("6.5.0")][n].clone();
        let pieces =
            vec![Piece::Value(0), Piece::Text("/".into()), Piece::Value(1), Piece::Text(":".into()), Piece::Value(2)];
        let parts = fit(&pieces, &json!("localhost:5000/team/web:6.6.0"), &current).unwrap();
        assert_eq!(parts, vec![(0, json!("localhost:5000")), (1, json!("team/web")), (2, json!("6.6.0"))]);
        assert_eq!(fit(&pieces, &json!("web"), &current), None, "no slash, no colon: not the shape");
        let port = vec![Piece::Text("--port=".into()), Piece::Value(3)];
        assert_eq!(fit(&port, &json!("--port=9999"), &|_| json!(9898)).unwrap(), vec![(3, json!(9999))]);
        assert_eq!(fit(&port, &json!("--port=http"), &|_| json!(9898)), None, "a number key takes a number");
        assert_eq!(fit(&[Piece::Value(4)], &json!(3), &|_| json!(1)).unwrap(), vec![(4, json!(3))]);
        assert_eq!(fit(&[Piece::Value(4)], &json!("3"), &|_| json!("1")).unwrap(), vec![(4, json!("3"))]);
    }

    #[test]
    fn probes_stay_printable() {
        assert_eq!(probe(3, &json!(1)), json!(86003));
        assert_eq!(probe(3, &json!("")), json!("zq3x"));
        assert_eq!(probe(3, &json!(true)), json!(false));
        assert_eq!(letters(3, &json!("info")), Some(json!("infozqdx")));
        assert_eq!(letters(27, &json!("")), Some(json!("zqbbx")));
        assert_eq!(letters(3, &json!(1)), None);
        assert_eq!(printed(&json!((NUMBER_PROBES + MAX_PROBES as i64) as f64)), "96000");
    }

    #[test]
    fn a_live_value_without_the_last_part_empties_that_value() {
        use serde_json::json;
        let pieces =
            vec![Piece::Value(0), Piece::Text(":".into()), Piece::Value(1), Piece::Text("@".into()), Piece::Value(2)];
        let current = |n: usize| [json!("nginx"), json!("1.15"), json!("sha256:abc")][n].clone();
        assert_eq!(fit(&pieces, &json!("nginx:1.0"), &current), None);
        let mut parts = fit_without_tail(&pieces, &json!("nginx:1.0"), &current).unwrap();
        parts.sort_by_key(|(n, _)| *n);
        assert_eq!(parts, vec![(0, json!("nginx")), (1, json!("1.0")), (2, json!(""))]);
        let no_digest = |n: usize| [json!("nginx"), json!("1.15"), json!("")][n].clone();
        assert_eq!(fit_without_tail(&pieces, &json!("nginx:1.0"), &no_digest), None, "nothing to empty");
    }
}
