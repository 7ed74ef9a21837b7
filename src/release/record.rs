//! The release record as Helm 3 and Helm 4 write it (JSON); unknown fields are tolerated. What a
//! record says of itself is a [`Claimed`] until [`Claimed::bind`] has checked it against the
//! storage object it was read from: only then is it a [`Release`], the one type the rest of the
//! code compares, reports and repairs with.

use super::budget::Reserved;
use serde::Deserialize;
use serde_json::value::RawValue;

/// What a record's JSON says, before its identity is checked against its storage object.
#[derive(Debug, Deserialize)]
pub(crate) struct Claimed {
    name: String,
    namespace: String,
    version: u32,
    #[serde(default)]
    info: Info,
    // The content's fields, spelled out (serde's `flatten` cannot hold a `RawValue`).
    #[serde(default)]
    chart: Option<Chart>,
    #[serde(default)]
    config: Option<Box<RawValue>>,
    #[serde(default)]
    manifest: String,
    #[serde(default)]
    hooks: Option<Box<RawValue>>,
    #[serde(default)]
    apply_method: Option<String>,
}

impl Claimed {
    /// The bytes of its manifest and hooks (what parsing them may expand).
    pub(crate) fn manifest_len(&self) -> usize {
        self.manifest.len() + self.hooks.as_ref().map_or(0, |h| h.get().len())
    }

    /// The release it claims to be, unchecked: [`Claimed::bind`] (and tests) only.
    fn into_release(self, reserved: Reserved, written: Option<super::Written>) -> Release {
        let content = Content {
            chart: self.chart,
            config: self.config,
            manifest: self.manifest,
            hooks: self.hooks,
            apply_method: self.apply_method,
        };
        Release {
            name: self.name,
            namespace: self.namespace,
            version: self.version,
            info: self.info,
            content: std::sync::Arc::new(content),
            written,
            _reserved: reserved,
        }
    }
}

/// A release record's content: what to compare, once the identity is bound.
#[derive(Clone, Debug)]
pub(crate) struct Content {
    pub(crate) chart: Option<Chart>,
    /// The user-supplied values (`helm install -f/--set`), kept as the record's JSON text: read
    /// only by the commands that render (a large hostile value is never a tree in memory).
    pub(crate) config: Option<Box<RawValue>>,
    pub(crate) manifest: String,
    /// The hooks as the record's JSON text, read only with `--hooks` (at most `--max-objects`).
    pub(crate) hooks: Option<Box<RawValue>>,
    /// Helm 4: `ssa`, `csa`, or absent (client-side apply).
    pub(crate) apply_method: Option<String>,
}

impl Content {
    /// The recorded hooks, at most `limit`.
    pub(crate) fn hooks(&self, limit: usize) -> Result<Vec<super::hooks::Hook>, super::hooks::HooksError> {
        super::hooks::parse(self.hooks.as_deref(), limit)
    }

    /// How Helm applied it (Helm 4's `apply_method`).
    pub(crate) fn apply(&self) -> crate::model::Apply {
        crate::model::Apply::of_record(self.apply_method.as_deref())
    }

    /// How many hooks the record holds.
    pub(crate) fn hook_count(&self) -> usize {
        super::hooks::count(self.hooks.as_deref())
    }
}

/// Where a record was read from, as the storage says (the object's namespace and name, its
/// `name`, `version` and `status` labels or SQL columns, when it last wrote it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stored<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) object: &'a str,
    pub(crate) name: &'a str,
    pub(crate) revision: u32,
    pub(crate) status: &'a str,
    pub(crate) written: Option<super::Written>,
}

/// A record whose JSON says something else than its storage object: which field, and both.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the record says {field} {claimed:?}, but its storage object says {stored:?}")]
pub(crate) struct Mismatch {
    pub(crate) field: &'static str,
    pub(crate) claimed: String,
    pub(crate) stored: String,
}

/// A release helm printed (`helm upgrade --install --dry-run=server -o json`): helm's own output
/// on this machine, not a record read from the cluster, so it is taken as it says.
pub(crate) fn printed_by_helm(json: &str) -> Result<Release, serde_json::Error> {
    let claimed: Claimed = serde_json::from_str(json)?;
    Ok(claimed.into_release(Reserved::none(), None))
}

impl Claimed {
    /// The release, when the record's name, namespace, revision and status are those of its
    /// storage object (and the object is named as Helm names it): a record speaks only for the
    /// namespace it is stored in.
    pub(crate) fn bind(self, stored: Stored<'_>, reserved: Reserved) -> Result<Release, Mismatch> {
        let key = format!("sh.helm.release.v1.{}.v{}", stored.name, stored.revision);
        let checks = [
            ("name", self.name.clone(), stored.name.to_string()),
            ("namespace", self.namespace.clone(), stored.namespace.to_string()),
            ("revision", self.version.to_string(), stored.revision.to_string()),
            ("status", self.info.status.clone(), stored.status.to_string()),
            ("storage name", key, stored.object.to_string()),
        ];
        if let Some((field, claimed, stored)) = checks.into_iter().find(|(_, c, s)| c != s) {
            return Err(Mismatch { field, claimed, stored });
        }
        Ok(self.into_release(reserved, stored.written))
    }
}

/// One revision of a release, as stored by Helm, whose identity was checked against its storage
/// object ([`Claimed::bind`] is the only way to make one outside tests).
#[derive(Clone, Debug)]
pub(crate) struct Release {
    name: String,
    namespace: String,
    version: u32,
    info: Info,
    /// Shared by its copies (a record's content can be megabytes: copies of a release are cheap).
    content: std::sync::Arc<Content>,
    /// When the storage last wrote it ([`super::Record::written`]).
    written: Option<super::Written>,
    /// Its share of the process's memory budget, held as long as a copy of it lives.
    _reserved: Reserved,
}

impl Release {
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
    pub(crate) fn namespace(&self) -> &str {
        &self.namespace
    }
    pub(crate) fn revision(&self) -> u32 {
        self.version
    }
    pub(crate) fn status(&self) -> &str {
        &self.info.status
    }

    /// What the storage recorded of this revision's apply (when it began, was recorded, how).
    pub(crate) fn deployed(&self) -> crate::compare::provenance::Deployed {
        crate::compare::provenance::Deployed {
            revision: self.version,
            began: self.info.last_deployed.as_deref().and_then(|t| t.parse().ok()),
            recorded: self.written.map(|w| w.at),
            recorded_version: self.written.and_then(|w| w.version),
            apply: self.apply(),
        }
    }

    /// Whether this revision is a rollback (`helm rollback`): its hooks are copied from the
    /// revision rolled back to, with that revision's runs.
    pub(crate) fn is_rollback(&self) -> bool {
        self.info.rollback_revision.is_some_and(|r| r > 0) || self.info.description.starts_with("Rollback to ")
    }

    /// A release from its JSON, identity unchecked: for tests only.
    #[cfg(test)]
    pub(crate) fn for_tests(json: serde_json::Value) -> Release {
        let claimed: Claimed = serde_json::from_value(json).expect("a release record");
        claimed.into_release(Reserved::none(), None)
    }

    /// The user-supplied values as a tree (`{}` when there are none).
    pub(crate) fn user_values(&self) -> Result<serde_json::Value, serde_json::Error> {
        raw_tree(self.content.config.as_deref())
    }
}

impl std::ops::Deref for Release {
    type Target = Content;
    fn deref(&self) -> &Content {
        &self.content
    }
}

impl std::ops::DerefMut for Release {
    /// The content to change, copied first when another copy shares it.
    fn deref_mut(&mut self) -> &mut Content {
        std::sync::Arc::make_mut(&mut self.content)
    }
}

/// A values text as a tree; absent and `null` are `{}`.
fn raw_tree(raw: Option<&RawValue>) -> Result<serde_json::Value, serde_json::Error> {
    let tree = match raw {
        Some(raw) => serde_json::from_str(raw.get())?,
        None => serde_json::Value::Null,
    };
    Ok(if tree.is_null() { serde_json::json!({}) } else { tree })
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Info {
    pub(crate) status: String,
    /// `Rollback to N` for a rollback (Helm 3; Helm 4 unless `--description` said otherwise).
    pub(crate) description: String,
    /// Helm 4: the revision a rollback went back to (absent otherwise).
    pub(crate) rollback_revision: Option<u32>,
    /// When Helm began this revision's apply (RFC 3339; Helm 3 writes `""` for none).
    pub(crate) last_deployed: Option<String>,
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
