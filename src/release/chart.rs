//! A chart as a release record stores it: its metadata read when the record is decoded, its
//! files kept as the record's JSON text until a command asks for them.

use serde::Deserialize;
use serde_json::value::RawValue;

/// A values text as a tree; absent and `null` are `{}`.
pub(super) fn raw_tree(raw: Option<&RawValue>) -> Result<serde_json::Value, serde_json::Error> {
    let tree = match raw {
        Some(raw) => serde_json::from_str(raw.get())?,
        None => serde_json::Value::Null,
    };
    Ok(if tree.is_null() { serde_json::json!({}) } else { tree })
}

/// A stored chart: its metadata's name, version and dependencies are read when the record is
/// decoded, its files stay JSON text until a command asks (a million tiny files cost their bytes).
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Chart {
    pub(crate) metadata: ChartMetadata,
    /// Templates (`templates/...`), data base64-encoded: [`Chart::templates`].
    #[serde(default)]
    templates: Option<Box<RawValue>>,
    /// Every other file of the chart (`crds/...`, `files/...`), data base64-encoded:
    /// [`Chart::files`].
    #[serde(default)]
    files: Option<Box<RawValue>>,
    /// The chart's default values, as the record's JSON text (see [`Content::config`]).
    #[serde(default)]
    pub(crate) values: Option<Box<RawValue>>,
    /// `values.schema.json`, base64-encoded.
    #[serde(default)]
    pub(crate) schema: Option<String>,
}

/// A file of a stored chart.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct ChartFile {
    pub(crate) name: String,
    /// Base64 (Go's `[]byte` in JSON).
    #[serde(default)]
    pub(crate) data: Option<String>,
}

impl Chart {
    /// The chart's default values as a tree (`{}` when there are none).
    pub(crate) fn default_values(&self) -> Result<serde_json::Value, serde_json::Error> {
        raw_tree(self.values.as_deref())
    }

    /// The chart's templates.
    pub(crate) fn templates(&self) -> Result<Vec<ChartFile>, serde_json::Error> {
        files_where(self.templates.as_deref(), |_| true)
    }

    /// The chart's other files whose name `keep` accepts (the others are skipped as they are
    /// read, never held).
    pub(crate) fn files(&self, keep: impl Fn(&str) -> bool) -> Result<Vec<ChartFile>, serde_json::Error> {
        files_where(self.files.as_deref(), keep)
    }
}

/// The files of a stored list (absent and `null`: none) whose name `keep` accepts.
fn files_where(raw: Option<&RawValue>, keep: impl Fn(&str) -> bool) -> Result<Vec<ChartFile>, serde_json::Error> {
    use serde::de::{Deserializer, SeqAccess, Visitor};
    struct Kept<F>(F);
    impl<'de, F: Fn(&str) -> bool> Visitor<'de> for Kept<F> {
        type Value = Vec<ChartFile>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of chart files")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(file) = seq.next_element::<ChartFile>()? {
                if (self.0)(&file.name) {
                    out.push(file);
                }
            }
            Ok(out)
        }
    }
    let Some(raw) = raw else { return Ok(Vec::new()) };
    serde_json::Deserializer::from_str(raw.get()).deserialize_any(Kept(keep))
}

/// Which of a chart's templates call `lookup`, whose answer depends on who renders.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum LookupUse {
    /// No template calls it.
    #[default]
    None,
    /// These templates (`templates/...`) call it themselves.
    In(Vec<String>),
    /// A helper (a `_` file, or a `define` any template may include) calls it: any document may
    /// depend on it.
    Anywhere,
}

impl Chart {
    /// Which templates call `lookup` (a word `lookup` followed by a space or `(`, in a template's
    /// text); a template that cannot be read counts as calling it.
    pub(crate) fn lookup_use(&self) -> LookupUse {
        let Ok(templates) = self.templates() else { return LookupUse::Anywhere };
        let mut named = Vec::new();
        for t in &templates {
            let text = t.bytes().map(|b| String::from_utf8_lossy(&b).into_owned());
            let calls = text.as_deref().is_none_or(calls_lookup);
            if !calls {
                continue;
            }
            let file = t.name.rsplit('/').next().unwrap_or_default();
            if file.starts_with('_') || text.as_deref().is_none_or(|t| t.contains("define")) {
                return LookupUse::Anywhere;
            }
            named.push(t.name.clone());
        }
        match named.is_empty() {
            true => LookupUse::None,
            false => LookupUse::In(named),
        }
    }
}

impl LookupUse {
    /// Whether a document (its `# Source:` path, `#N` for a template's later documents) of the
    /// chart `chart` was rendered by a template that calls `lookup`.
    pub(crate) fn renders(&self, chart: &str, source: &str) -> bool {
        let file = source.split('#').next().unwrap_or(source);
        match self {
            LookupUse::None => false,
            LookupUse::Anywhere => true,
            LookupUse::In(templates) => templates.iter().any(|t| file == format!("{chart}/{t}")),
        }
    }
}

/// Whether a template's text calls `lookup`.
fn calls_lookup(text: &str) -> bool {
    text.match_indices("lookup").any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + "lookup".len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '$')
            && after.is_some_and(|c| c == ' ' || c == '(' || c == '\t')
    })
}

impl ChartFile {
    /// The file's bytes; `None` when the base64 is invalid.
    pub(crate) fn bytes(&self) -> Option<Vec<u8>> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.decode(self.data.as_deref().unwrap_or("")).ok()
    }
}

/// `Chart.yaml` as stored (Helm's metadata fields, camelCase in JSON): its name and version,
/// whether it declares dependencies, and the rest as the record's text (never a tree: a
/// metadata of millions of values costs its bytes).
#[derive(Clone, Debug)]
pub(crate) struct ChartMetadata {
    pub(crate) name: String,
    pub(crate) version: String,
    /// It declares subcharts (which Helm does not store with the release).
    dependencies: bool,
    /// The whole metadata as stored, to rebuild Chart.yaml (JSON is YAML).
    raw: Box<RawValue>,
}

impl ChartMetadata {
    /// Whether the chart declares subcharts (which Helm does not store with the release).
    pub(crate) fn has_dependencies(&self) -> bool {
        self.dependencies
    }

    /// Chart.yaml's text: the stored metadata as it is (JSON, which YAML reads).
    pub(crate) fn chart_yaml(&self) -> &str {
        self.raw.get()
    }
}

impl<'de> Deserialize<'de> for ChartMetadata {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// The fields read; every other one is skipped without being built.
        #[derive(Deserialize)]
        struct Head {
            #[serde(default)]
            name: String,
            #[serde(default)]
            version: String,
            #[serde(default)]
            dependencies: NonEmpty,
        }
        let raw = Box::<RawValue>::deserialize(d)?;
        let head: Head = serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)?;
        Ok(ChartMetadata { name: head.name, version: head.version, dependencies: head.dependencies.0, raw })
    }
}

/// Whether a value is a list with at least one item (anything else: no), read without holding
/// its items.
#[derive(Default)]
struct NonEmpty(bool);

impl<'de> Deserialize<'de> for NonEmpty {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NonEmpty;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NonEmpty, A::Error> {
                let any = seq.next_element::<IgnoredAny>()?.is_some();
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(NonEmpty(any))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<NonEmpty, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(NonEmpty(false))
            }
            fn visit_bool<E>(self, _: bool) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_i64<E>(self, _: i64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_u64<E>(self, _: u64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_f64<E>(self, _: f64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_str<E>(self, _: &str) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_unit<E>(self) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod chart_tests {
    use super::*;

    #[test]
    fn metadata_is_read_without_building_its_tree() {
        let zeros = vec!["0"; 200_000].join(",");
        let json = format!(
            r#"{{"metadata":{{"name":"web","version":"1.2.3","annotations":{{"a":[{zeros}]}},"dependencies":[{{"name":"db"}}]}},"templates":null}}"#
        );
        let chart: Chart = serde_json::from_str(&json).unwrap();
        assert_eq!((chart.metadata.name.as_str(), chart.metadata.version.as_str()), ("web", "1.2.3"));
        assert!(chart.metadata.has_dependencies());
        assert!(chart.metadata.chart_yaml().starts_with(r#"{"name":"web""#));
        assert!(chart.templates().unwrap().is_empty());
        for deps in ["[]", "{}", "\"x\"", "3", "null"] {
            let m: ChartMetadata = serde_json::from_str(&format!(r#"{{"name":"a","dependencies":{deps}}}"#)).unwrap();
            assert!(!m.has_dependencies(), "{deps}");
        }
        // Chart.yaml is the stored text, which YAML reads as the same tree.
        let yaml: serde_yaml::Value = serde_yaml::from_str(chart.metadata.chart_yaml()).unwrap();
        assert_eq!(yaml["version"], serde_yaml::Value::from("1.2.3"));
    }

    #[test]
    fn files_are_read_only_when_asked_and_only_those_kept() {
        let json = r#"{"metadata":{"name":"c"},"files":[{"name":"crds/a.yaml","data":"eDogMQ=="},{"name":"files/big"}],"templates":[{"name":"templates/a.yaml"}]}"#;
        let chart: Chart = serde_json::from_str(json).unwrap();
        let crds = chart.files(|n| n.starts_with("crds/")).unwrap();
        assert_eq!(crds.len(), 1);
        assert_eq!(crds[0].bytes().unwrap(), b"x: 1");
        assert_eq!(chart.files(|_| true).unwrap().len(), 2);
        assert_eq!(chart.templates().unwrap()[0].name, "templates/a.yaml");
        let bad: Chart = serde_json::from_str(r#"{"metadata":{},"files":{"a":1}}"#).unwrap();
        assert!(bad.files(|_| true).is_err(), "a malformed file list is an error when read");
    }
}
