//! A release's hooks as Helm records them (`hooks[]`: the object, its events, delete policies and
//! last run), read only when asked (`--hooks`), and at most a bounded number of them: a small
//! record holding thousands of empty hooks must not become thousands of values in memory.

use serde::Deserialize;
use serde::de::{SeqAccess, Visitor};
use serde_json::value::RawValue;

/// One hook of a record.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub(crate) struct Hook {
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) kind: String,
    /// The template it came from.
    #[serde(default)]
    pub(crate) path: String,
    #[serde(default)]
    pub(crate) manifest: String,
    #[serde(default)]
    pub(crate) events: Vec<String>,
    #[serde(default)]
    pub(crate) last_run: LastRun,
    #[serde(default)]
    pub(crate) delete_policies: Vec<String>,
}

/// How the hook's last run at this revision ended: `""` (it did not run at this revision),
/// `Running`, `Unknown`, `Succeeded` or `Failed`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub(crate) struct LastRun {
    #[serde(default)]
    pub(crate) phase: String,
}

/// Why a record's hooks cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum HooksError {
    #[error("its hooks are not a list of hooks: {0}")]
    Invalid(String),
    #[error("it holds more than {limit} hooks (--max-objects): not checked")]
    TooMany { limit: usize },
}

/// The hooks of a record's JSON (`None`: the record has none), at most `limit` of them.
pub(crate) fn parse(raw: Option<&RawValue>, limit: usize) -> Result<Vec<Hook>, HooksError> {
    let Some(raw) = raw else { return Ok(Vec::new()) };
    if raw.get() == "null" {
        return Ok(Vec::new());
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    match serde::Deserializer::deserialize_seq(&mut de, Bounded { limit }) {
        Ok(hooks) => Ok(hooks),
        Err(e) if e.to_string().starts_with(TOO_MANY) => Err(HooksError::TooMany { limit }),
        Err(e) => Err(HooksError::Invalid(e.to_string())),
    }
}

/// How many hooks a record holds (`null` or absent: none), without keeping any.
pub(crate) fn count(raw: Option<&RawValue>) -> usize {
    let Some(raw) = raw else { return 0 };
    serde_json::from_str::<Vec<serde::de::IgnoredAny>>(raw.get()).map_or(0, |v| v.len())
}

const TOO_MANY: &str = "too many hooks";

/// A sequence visitor that stops at its limit instead of growing without bound.
struct Bounded {
    limit: usize,
}

impl<'de> Visitor<'de> for Bounded {
    type Value = Vec<Hook>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of hooks")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Hook>, A::Error> {
        let mut out = Vec::new();
        while let Some(hook) = seq.next_element::<Hook>()? {
            if out.len() == self.limit {
                return Err(serde::de::Error::custom(TOO_MANY));
            }
            out.push(hook);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    #[test]
    fn hooks_as_helm_3_and_4_write_them() {
        // Helm 3 writes zero times as "", Helm 4 leaves them out.
        let helm3 = r#"[{"name":"cfg","kind":"ConfigMap","path":"c/templates/h.yaml","manifest":"x","events":["post-install"],"last_run":{"started_at":"","completed_at":"","phase":""}}]"#;
        let helm4 = r#"[{"name":"cfg","kind":"ConfigMap","path":"c/templates/h.yaml","manifest":"x","events":["post-install"],"last_run":{"phase":"Succeeded"},"delete_policies":["before-hook-creation"]}]"#;
        let h3 = parse(Some(&raw(helm3)), 10).unwrap();
        assert_eq!((h3[0].last_run.phase.as_str(), h3[0].delete_policies.len()), ("", 0));
        let h4 = parse(Some(&raw(helm4)), 10).unwrap();
        assert_eq!(h4[0].last_run.phase, "Succeeded");
        assert_eq!(h4[0].delete_policies, ["before-hook-creation"]);
        assert_eq!(count(Some(&raw(helm4))), 1);
        assert!(parse(None, 10).unwrap().is_empty());
        assert!(parse(Some(&raw("null")), 10).unwrap().is_empty());
    }

    #[test]
    fn a_hostile_hooks_list_is_refused_by_name() {
        let many = format!("[{}{{}}]", "{},".repeat(50));
        assert_eq!(parse(Some(&raw(&many)), 10), Err(HooksError::TooMany { limit: 10 }));
        assert_eq!(count(Some(&raw(&many))), 51);
        let err = parse(Some(&raw(r#"{"name":"x"}"#)), 10).unwrap_err();
        assert!(matches!(err, HooksError::Invalid(_)), "{err}");
        let err = parse(Some(&raw(r#"[{"events":"post-install"}]"#)), 10).unwrap_err();
        assert!(err.to_string().starts_with("its hooks are not a list of hooks"), "{err}");
    }
}
