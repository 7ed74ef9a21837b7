//! The one budgeted YAML parser for what others write (a record's manifest, a baseline): YAML to JSON exactly as Helm's conversion (sigs.k8s.io/yaml on go-yaml v2) does it: YAML 1.1
//! plain scalars (`yes`/`on` are booleans, `0777` is octal, `1_000` is 1000), merge keys, keys
//! turned into strings, integral numbers written as integers. Alias expansion and nesting are
//! bounded, so a hostile document is an error, not an exhausted machine.

use serde_json::{Map, Number, Value};
use std::collections::HashMap;
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Most nodes one release record's documents may expand to, all together (aliases included):
/// hundreds of small documents are bounded like one large one.
pub(crate) const MAX_NODES: usize = 1_000_000;
/// What a node costs in the bytes budget beside its text (a JSON value in memory).
const NODE_BYTES: usize = 16;

/// What a record's documents may expand to, all together: [`MAX_NODES`] nodes, and bytes in
/// proportion to the manifest's own size (aliases may repeat a value, not multiply the text by
/// thousands: go-yaml refuses "excessive aliasing" the same way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    nodes: usize,
    bytes: usize,
}

impl Budget {
    /// The budget of a manifest of `len` bytes ([`expansion`], what a record reserves of the
    /// process's memory before it is decoded).
    pub(crate) fn for_manifest(len: usize) -> Budget {
        Budget { nodes: MAX_NODES, bytes: expansion(len) }
    }
}

/// The most bytes a document of `len` bytes may expand to when parsed (aliases included): eight
/// times its text and one MiB, at most 64 MiB.
pub(crate) fn expansion(len: usize) -> usize {
    len.saturating_mul(8).saturating_add(1 << 20).min(64 * 1024 * 1024)
}
/// Deepest nesting of one document.
pub(crate) const MAX_DEPTH: usize = 256;

/// Why a document could not be converted.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum YamlError {
    #[error("line {line}: {message}")]
    Syntax { line: usize, message: String },
    #[error("line {line}: unknown alias")]
    UnknownAlias { line: usize },
    #[error("line {line}: {value:?} is not a finite number (JSON cannot hold it)")]
    NotFinite { line: usize, value: String },
    #[error("more than {MAX_NODES} nodes after alias expansion (all documents of the record together)")]
    TooLarge,
    #[error(
        "expands to more than {} KiB (all documents of the record together, aliases expanded; eight times the manifest and 1 MiB)", .0 / 1024
    )]
    TooManyBytes(usize),
    #[error("nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("more than one YAML document")]
    MultipleDocuments,
    #[error("line {line}: a mapping key must be a scalar, not a list or mapping")]
    ComplexKey { line: usize },
}

/// Converts one YAML document to JSON (`Null` for an empty document).
#[cfg(test)]
pub(crate) fn to_json(text: &str) -> Result<Value, YamlError> {
    let mut budget = Budget::for_manifest(text.len());
    to_json_within(text, &mut budget)
}

/// [`to_json`] within a budget shared by several documents (what is left is written back).
pub(crate) fn to_json_within(text: &str, budget: &mut Budget) -> Result<Value, YamlError> {
    let mut loader =
        Loader { parser: Parser::new_from_str(text), anchors: HashMap::new(), used: Used::default(), limit: *budget };
    let result = loader.document();
    budget.nodes = budget.nodes.saturating_sub(loader.used.nodes);
    budget.bytes = budget.bytes.saturating_sub(loader.used.bytes);
    result
}

/// What a document has used of its budget so far.
#[derive(Default)]
struct Used {
    nodes: usize,
    bytes: usize,
}

impl Loader<'_> {
    fn document(&mut self) -> Result<Value, YamlError> {
        let loader = self;
        let mut result = Value::Null;
        let mut documents = 0;
        loop {
            let (event, mark) = loader.next()?;
            match event {
                Event::StreamEnd => return Ok(result),
                Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
                Event::DocumentStart => {
                    documents += 1;
                    if documents > 1 {
                        return Err(YamlError::MultipleDocuments);
                    }
                }
                event => result = loader.node(event, mark, 0)?,
            }
        }
    }
}

struct Loader<'a> {
    parser: Parser<std::str::Chars<'a>>,
    anchors: HashMap<usize, Value>,
    used: Used,
    limit: Budget,
}

impl Loader<'_> {
    fn next(&mut self) -> Result<(Event, Marker), YamlError> {
        self.parser
            .next_token()
            .map_err(|e| YamlError::Syntax { line: e.marker().line(), message: e.info().to_string() })
    }

    /// Counts `nodes` nodes holding `text` bytes of strings.
    fn count(&mut self, nodes: usize, text: usize) -> Result<(), YamlError> {
        self.used.nodes = self.used.nodes.saturating_add(nodes);
        self.used.bytes = self.used.bytes.saturating_add(nodes.saturating_mul(NODE_BYTES)).saturating_add(text);
        if self.used.nodes > self.limit.nodes {
            Err(YamlError::TooLarge)
        } else if self.used.bytes > self.limit.bytes {
            Err(YamlError::TooManyBytes(self.limit.bytes))
        } else {
            Ok(())
        }
    }

    fn node(&mut self, event: Event, mark: Marker, depth: usize) -> Result<Value, YamlError> {
        if depth > MAX_DEPTH {
            return Err(YamlError::TooDeep);
        }
        let text_len = match &event {
            Event::Scalar(text, ..) => text.len(),
            _ => 0,
        };
        self.count(1, text_len)?;
        let (value, anchor) = match event {
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.map(|t| t.suffix);
                (scalar(&text, style, tag.as_deref(), mark.line())?, anchor)
            }
            Event::Alias(id) => {
                let v = self.anchors.get(&id).cloned().ok_or(YamlError::UnknownAlias { line: mark.line() })?;
                let (nodes, text) = size(&v);
                self.count(nodes, text)?;
                return Ok(v);
            }
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                loop {
                    let (e, m) = self.next()?;
                    if matches!(e, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(e, m, depth + 1)?);
                }
                (Value::Array(items), anchor)
            }
            Event::MappingStart(anchor, _) => (Value::Object(self.mapping(depth)?), anchor),
            other => {
                return Err(YamlError::Syntax { line: mark.line(), message: format!("unexpected {other:?}") });
            }
        };
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
        Ok(value)
    }

    /// A mapping's entries; `<<` merge keys add entries the mapping does not set itself.
    fn mapping(&mut self, depth: usize) -> Result<Map<String, Value>, YamlError> {
        let mut map = Map::new();
        let mut merged = Map::new();
        loop {
            let (e, m) = self.next()?;
            if matches!(e, Event::MappingEnd) {
                break;
            }
            let is_merge = matches!(&e, Event::Scalar(k, TScalarStyle::Plain, _, None) if k == "<<");
            let line = m.line();
            let key = self.node(e, m, depth + 1)?;
            if key.is_array() || key.is_object() {
                // As sigs.k8s.io/yaml: JSON keys are strings, so complex keys are refused.
                return Err(YamlError::ComplexKey { line });
            }
            let (ve, vm) = self.next()?;
            let value = self.node(ve, vm, depth + 1)?;
            if is_merge {
                let sources = match value {
                    Value::Array(items) => items,
                    other => vec![other],
                };
                for source in sources {
                    if let Value::Object(entries) = source {
                        for (k, v) in entries {
                            merged.entry(k).or_insert(v);
                        }
                    }
                }
            } else {
                map.insert(key_string(&key), value);
            }
        }
        for (k, v) in merged {
            map.entry(k).or_insert(v);
        }
        Ok(map)
    }
}

/// How many nodes a value holds, and the bytes of its strings (keys included).
fn size(v: &Value) -> (usize, usize) {
    let add = |(n, b): (usize, usize), (m, c): (usize, usize)| (n.saturating_add(m), b.saturating_add(c));
    match v {
        Value::Array(a) => a.iter().map(size).fold((1, 0), add),
        Value::Object(m) => m.iter().map(|(k, v)| add(size(v), (1, k.len()))).fold((1, 0), add),
        Value::String(s) => (1, s.len()),
        _ => (1, 0),
    }
}

/// A mapping key as sigs.k8s.io/yaml writes it in JSON.
fn key_string(key: &Value) -> String {
    match key {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Resolves one scalar the way go-yaml v2 does for an untyped (`interface{}`) target.
fn scalar(text: &str, style: TScalarStyle, tag: Option<&str>, line: usize) -> Result<Value, YamlError> {
    if style != TScalarStyle::Plain {
        return Ok(Value::String(text.to_string()));
    }
    match tag {
        Some("str") => return Ok(Value::String(text.to_string())),
        Some("null") => return Ok(Value::Null),
        _ => {}
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Ok(Value::Bool(true));
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Ok(Value::Bool(false));
        }
        _ => {}
    }
    if text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
        && let Some(n) = number(text)
    {
        return finite(n, text, line);
    }
    Ok(Value::String(text.to_string()))
}

enum Num {
    Int(i64),
    Uint(u64),
    Float(f64),
}

/// go-yaml v2's numeric resolution: underscores removed, Go base-0 integers (`0x`, `0o`, `0b`,
/// leading-zero octal), then a YAML float, then `.inf` / `.nan`.
fn number(text: &str) -> Option<Num> {
    match text {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Some(Num::Float(f64::INFINITY)),
        "-.inf" | "-.Inf" | "-.INF" => return Some(Num::Float(f64::NEG_INFINITY)),
        ".nan" | ".NaN" | ".NAN" => return Some(Num::Float(f64::NAN)),
        _ => {}
    }
    let plain = text.replace('_', "");
    if let Some(i) = go_int(&plain) {
        return Some(i);
    }
    if is_yaml_float(&plain) {
        return plain.parse::<f64>().ok().map(Num::Float);
    }
    None
}

/// `strconv.ParseInt(s, 0, 64)`, falling back to `ParseUint`.
fn go_int(s: &str) -> Option<Num> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = match body.get(..2) {
        Some("0x" | "0X") => (16, &body[2..]),
        Some("0b" | "0B") => (2, &body[2..]),
        Some("0o" | "0O") => (8, &body[2..]),
        _ if body.len() > 1 && body.starts_with('0') => (8, &body[1..]),
        _ => (10, body),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix).ok()?;
    if neg {
        let v = i128::try_from(magnitude).ok()?.checked_neg()?;
        i64::try_from(v).ok().map(Num::Int)
    } else if let Ok(v) = i64::try_from(magnitude) {
        Some(Num::Int(v))
    } else {
        u64::try_from(magnitude).ok().map(Num::Uint)
    }
}

/// go-yaml v2's float pattern: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((int, frac)) => digits(int) && (frac.is_empty() || digits(frac)),
        None => digits(mantissa),
    };
    let exp_ok = exp.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exp_ok
}

/// A JSON number as Go's encoding/json writes it: integral floats without a fraction.
fn finite(n: Num, text: &str, line: usize) -> Result<Value, YamlError> {
    Ok(Value::Number(match n {
        Num::Int(i) => Number::from(i),
        Num::Uint(u) => Number::from(u),
        Num::Float(f) if !f.is_finite() => return Err(YamlError::NotFinite { line, value: text.to_string() }),
        Num::Float(f) if f.fract() == 0.0 && f.abs() < 1e21 && f.abs() <= i64::MAX as f64 => Number::from(f as i64),
        Num::Float(f) => Number::from_f64(f).expect("finite"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn j(text: &str) -> Value {
        to_json(text).unwrap()
    }

    #[test]
    fn yaml_1_1_scalars_as_helm_sends_them() {
        let v = j(
            "a: yes\nb: off\nc: 'yes'\nd: 0777\ne: 1_000\nf: 0x1F\ng: 0b101\nh: 1e3\ni: 1.5\nj: ~\nk: 08\nl: +12\nm: \"0777\"\nday: 2024-01-01\no: y\np: 1.0\nq: .5\nn: x\n",
        );
        assert_eq!(
            v,
            json!({"a": true, "b": false, "c": "yes", "d": 511, "e": 1000, "f": 31, "g": 5, "h": 1000, "i": 1.5,
                   "j": null, "k": 8, "l": 12, "m": "0777", "day": "2024-01-01", "o": true, "p": 1, "q": 0.5,
                   "false": "x"})
        );
    }

    #[test]
    fn keys_become_strings() {
        assert_eq!(j("on: push\n1: one\nnull: x\n"), json!({"true": "push", "1": "one", "null": "x"}));
    }

    #[test]
    fn block_scalars_and_tags_stay_strings() {
        assert_eq!(j("a: |\n  yes\nb: !!str 12\nc: >\n  0777\n"), json!({"a": "yes\n", "b": "12", "c": "0777\n"}));
    }

    #[test]
    fn anchors_aliases_and_merge_keys() {
        let v = j("base: &b {x: 1, z: 2}\nother:\n  <<: *b\n  z: 3\nlist: [*b]\n");
        assert_eq!(v, json!({"base": {"x": 1, "z": 2}, "other": {"x": 1, "z": 3}, "list": [{"x": 1, "z": 2}]}));
    }

    #[test]
    fn hostile_documents_are_bounded_errors() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            bomb.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n",
                p = i - 1
            ));
        }
        assert!(matches!(to_json(&bomb), Err(YamlError::TooLarge | YamlError::TooManyBytes(_))));
        // A long string repeated through aliases is bounded by bytes, whatever its node count.
        let long = format!("s: &s \"{}\"\nl: [{}]\n", "x".repeat(1 << 20), ["*s"; 20].join(", "));
        assert!(matches!(to_json(&long), Err(YamlError::TooManyBytes(_))), "{:?}", to_json(&long).map(|_| ()));
        let few = format!("s: &s \"{}\"\nl: [{}]\n", "x".repeat(1 << 20), ["*s"; 6].join(", "));
        assert!(to_json(&few).is_ok(), "a value repeated a few times is fine");
        let deep = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
        assert!(matches!(to_json(&deep), Err(YamlError::TooDeep) | Err(YamlError::Syntax { .. })));
        assert!(matches!(to_json("a: .inf"), Err(YamlError::NotFinite { line: 1, .. })));
        assert!(matches!(to_json("a: [1, 2"), Err(YamlError::Syntax { .. })));
        assert!(matches!(to_json("a: *nope"), Err(YamlError::UnknownAlias { .. }) | Err(YamlError::Syntax { .. })));
    }

    #[test]
    fn complex_keys_are_refused() {
        // Found by fuzzing: nested complex keys used to be stringified, doubling at each level.
        let fuzzed = include_str!("../tests/fixtures/fuzz/manifest-nested-complex-keys.yaml");
        assert!(matches!(to_json(fuzzed), Err(YamlError::ComplexKey { .. })), "{:?}", to_json(fuzzed));
        assert!(matches!(to_json("? [a, b]\n: c\n"), Err(YamlError::ComplexKey { line: 1 })));
    }

    #[test]
    fn empty_document_is_null() {
        assert_eq!(j("# only a comment\n"), Value::Null);
    }
}
