//! The release record as Helm 3 and Helm 4 write it (JSON); unknown fields are tolerated. What a
//! record says of itself is a [`Claimed`] until [`Claimed::bind`] has checked it against the
//! storage object it was read from: only then is it a [`Release`], the one type the rest of the
//! code compares, reports and repairs with.

use super::budget::Reserved;
pub(crate) use super::chart::Chart;
use super::chart::raw_tree;
use crate::model::Vouch;
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
        let stored_in = self.namespace.clone();
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
            stored_in,
            vouch: None,
            _reserved: reserved,
        }
    }

    /// The namespace the record claims for its release.
    pub(crate) fn namespace(&self) -> &str {
        &self.namespace
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
#[error("the record says {field} {claimed:?}, but its storage object says {stored:?}{}", apart(field, stored))]
pub(crate) struct Mismatch {
    pub(crate) field: &'static str,
    pub(crate) claimed: String,
    pub(crate) stored: String,
}

/// What takes a record stored apart from its release's namespace (Flux's layout).
fn apart(field: &str, stored: &str) -> String {
    match field {
        "namespace" => format!(
            " (a record stored apart from its release is taken when --trust-namespace {stored} trusts its writers, \
             or when a Flux HelmRelease in {stored} installs it there, and then counts only for the objects \
             carrying that HelmRelease's origin labels)"
        ),
        _ => String::new(),
    }
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
    /// namespace it is stored in, unless `vouch` says why it speaks for the one it claims.
    pub(crate) fn bind(
        self,
        stored: Stored<'_>,
        reserved: Reserved,
        vouch: Option<Vouch>,
    ) -> Result<Release, Mismatch> {
        let key = format!("sh.helm.release.v1.{}.v{}", stored.name, stored.revision);
        let claimed_ns = if vouch.is_some() { stored.namespace.to_string() } else { self.namespace.clone() };
        let checks = [
            ("name", self.name.clone(), stored.name.to_string()),
            ("namespace", claimed_ns, stored.namespace.to_string()),
            ("revision", self.version.to_string(), stored.revision.to_string()),
            ("status", self.info.status.clone(), stored.status.to_string()),
            ("storage name", key, stored.object.to_string()),
        ];
        if let Some((field, claimed, stored)) = checks.into_iter().find(|(_, c, s)| c != s) {
            return Err(Mismatch { field, claimed, stored });
        }
        let mut release = self.into_release(reserved, stored.written);
        release.vouch = vouch.filter(|_| release.namespace != stored.namespace);
        release.stored_in = stored.namespace.to_string();
        Ok(release)
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
    /// The namespace of its storage object: its writer's (the release's own, unless a
    /// HelmRelease stores it elsewhere).
    stored_in: String,
    /// Why it speaks for its release's namespace when stored in another.
    vouch: Option<Vouch>,
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
    /// The namespace its record is stored in (its writer's).
    pub(crate) fn stored_in(&self) -> &str {
        &self.stored_in
    }
    /// Why the record speaks for the release's namespace, when stored in another.
    pub(crate) fn vouch(&self) -> Option<&Vouch> {
        self.vouch.as_ref()
    }
    /// Where the record is stored and where its release installs.
    pub(crate) fn home(&self) -> crate::model::Home<'_> {
        crate::model::Home {
            stored: &self.stored_in,
            release: &self.namespace,
            name: &self.name,
            helm_release: self.vouch.as_ref().and_then(Vouch::helm_release),
        }
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
