//! The baseline document: its shape on disk and in a ConfigMap (parsed and rendered here), and
//! its entries, whose Secret values are hashed salted and slow.

use crate::digest::hex;
use serde::{Deserialize, Serialize};
use std::num::NonZeroU32;

/// PBKDF2 iterations for a Secret's value.
const PBKDF2_ITERATIONS: u32 = 100_000;
/// How a salted, slow hash starts: `pbkdf2-sha256$ITERATIONS$SALT$HASH` (hex).
const PBKDF2: &str = "pbkdf2-sha256";

/// The file `check` reads when present and `accept` writes by default.
pub(crate) const DEFAULT_FILE: &str = ".helm-drift-baseline.yaml";
/// ConfigMaps holding a release's baseline: `helm-drift-baseline.<release>`, labelled.
pub(crate) const CONFIGMAP_PREFIX: &str = "helm-drift-baseline.";
pub(crate) const CONFIGMAP_LABEL: &str = "helm-drift.io/baseline";
/// The key of the baseline in its ConfigMap.
pub(crate) const CONFIGMAP_KEY: &str = "baseline.yaml";

/// Where a baseline is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Store {
    File(std::path::PathBuf),
    /// ConfigMaps: in `home` when the operator names a namespace (`--baseline cluster=NS`: one
    /// per release, `helm-drift-baseline.<namespace>.<release>`), else next to each release
    /// (`helm-drift-baseline.<release>`, which a check takes only from a namespace it trusts).
    Cluster {
        home: Option<String>,
    },
}

/// The ConfigMap holding one release's baseline in a cluster store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) namespace: String,
    pub(crate) name: String,
    /// Kept where the operator named (`--baseline cluster=NS`), not by the release's namespace.
    pub(crate) named: bool,
}

impl Place {
    /// Where the cluster store (`home`, as in [`Store::Cluster`]) keeps the baseline of
    /// `release` of `namespace`.
    pub(crate) fn of(home: Option<&str>, namespace: &str, release: &str) -> Place {
        match home {
            Some(home) => Place {
                namespace: home.to_string(),
                name: format!("{CONFIGMAP_PREFIX}{namespace}.{release}"),
                named: true,
            },
            None => {
                Place { namespace: namespace.to_string(), name: format!("{CONFIGMAP_PREFIX}{release}"), named: false }
            }
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ConfigMap {}/{}", self.namespace, self.name)
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum BaselineError {
    #[error("cannot read baseline {at}: {why}")]
    Read { at: String, why: String },
    #[error("cannot write baseline {at}: {why}")]
    Write { at: String, why: String },
}

/// A baseline document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Baseline {
    #[serde(default = "api_version")]
    pub(crate) api_version: String,
    #[serde(default = "kind")]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) entries: Vec<Entry>,
}

fn api_version() -> String {
    "helm-drift.io/v1".into()
}

fn kind() -> String {
    "Baseline".into()
}

/// One accepted drift.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Entry {
    pub(crate) release: String,
    pub(crate) namespace: String,
    /// `apiVersion Kind namespace/name`.
    pub(crate) object: String,
    /// RFC 6901 pointer; empty for the whole object.
    pub(crate) path: String,
    /// `modified`, `removed`, `added`, `owned-elsewhere`, `missing` or `unknown`.
    pub(crate) change: String,
    /// SHA-256 of the path and the live value (canonical JSON).
    pub(crate) sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) accepted_at: Option<String>,
    /// When the acceptance ends by itself (`accept --expires`): the drift is drift again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) expires_at: Option<String>,
    /// A Secret's drift found now: what its salted hash is made of (never written).
    #[serde(skip)]
    pub(super) secret: Option<String>,
}

impl Entry {
    /// Whether the acceptance has ended at `now` (an end that cannot be read has ended: an
    /// entry never accepts for longer than it says).
    pub(super) fn expired(&self, now: jiff::Timestamp) -> bool {
        self.expires_at.as_deref().is_some_and(|t| t.parse::<jiff::Timestamp>().map_or(true, |end| now >= end))
    }

    /// Whether this (stored) entry accepts `found`, a drift found now; a salted entry spends
    /// one of `work`'s slow hashes (none left: it accepts nothing, and `work` says so).
    pub(super) fn same_drift(&self, found: &Entry, work: &mut Work) -> bool {
        let same = (&self.release, &self.namespace, &self.object, &self.path, &self.change)
            == (&found.release, &found.namespace, &found.object, &found.path, &found.change);
        same && match (self.sha256.starts_with(PBKDF2), &found.secret) {
            (true, Some(_)) if work.left == 0 => {
                work.spent_out = true;
                false
            }
            (true, Some(input)) => {
                work.left -= 1;
                verify(&self.sha256, input)
            }
            (true, None) => false,
            (false, _) => self.sha256 == found.sha256,
        }
    }

    /// The entry as written: a Secret's value hashed salted and slow.
    pub(super) fn into_stored(mut self) -> Entry {
        if let Some(input) = self.secret.take() {
            self.sha256 = salted(&input, &crate::random::bytes::<16>());
        }
        self
    }
}

/// The salted hashes one release's check verifies at most: whoever may write a baseline
/// ConfigMap could ask for thousands for one drift, each [`PBKDF2_ITERATIONS`] long.
pub(crate) const SLOW_PER_CHECK: u32 = 16;

/// What is left of one check's slow hashes, and whether an entry went unverified for want of it.
#[derive(Debug)]
pub(crate) struct Work {
    left: u32,
    pub(crate) spent_out: bool,
}

impl Work {
    pub(crate) fn new() -> Work {
        Work { left: SLOW_PER_CHECK, spent_out: false }
    }
}

/// `pbkdf2-sha256$ITERATIONS$SALT$HASH` of `input`.
fn salted(input: &str, salt: &[u8]) -> String {
    let mut out = [0u8; 32];
    let iterations = NonZeroU32::new(PBKDF2_ITERATIONS).expect("non-zero");
    ring::pbkdf2::derive(ring::pbkdf2::PBKDF2_HMAC_SHA256, iterations, salt, input.as_bytes(), &mut out);
    format!("{PBKDF2}${PBKDF2_ITERATIONS}${}${}", hex(salt), hex(&out))
}

/// Whether `stored` (a [`salted`] hash) is the hash of `input`; anything malformed is not.
fn verify(stored: &str, input: &str) -> bool {
    let parts: Vec<&str> = stored.split('$').collect();
    let [PBKDF2, iterations, salt, hash] = parts.as_slice() else { return false };
    // The hash is what `salted` writes (32 bytes), the salt at most 64: a forged 400 KB "hash"
    // would cost thousands of PBKDF2 blocks on every check.
    if hash.len() != 64 || salt.len() > 128 {
        return false;
    }
    let (Some(iterations), Some(salt), Some(hash)) =
        (iterations.parse().ok().and_then(NonZeroU32::new), unhex(salt), unhex(hash))
    else {
        return false;
    };
    // A forged file must not make every check slow: at most the iterations we write.
    if iterations.get() > PBKDF2_ITERATIONS {
        return false;
    }
    ring::pbkdf2::verify(ring::pbkdf2::PBKDF2_HMAC_SHA256, iterations, &salt, input.as_bytes(), &hash).is_ok()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || text.is_empty() {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

/// Parses a baseline document; `at` names it in errors.
pub(crate) fn parse(text: &str, at: &str) -> Result<Baseline, BaselineError> {
    if text.trim().is_empty() {
        return Ok(Baseline { api_version: api_version(), kind: kind(), entries: Vec::new() });
    }
    // Whoever may write a ConfigMap in the release's namespace writes its baseline: the document's
    // expansion (aliases) and depth are bounded as a release record's are, before it is decoded.
    let mut budget = crate::yaml::Budget::for_manifest(text.len());
    crate::yaml::to_json_within(text, &mut budget)
        .map_err(|e| BaselineError::Read { at: at.to_string(), why: e.to_string() })?;
    serde_yaml::from_str(text).map_err(|e| BaselineError::Read { at: at.to_string(), why: e.to_string() })
}

/// The document as written to a file or a ConfigMap.
pub(crate) fn render(b: &Baseline) -> String {
    let mut b = b.clone();
    b.api_version = api_version();
    b.kind = kind();
    b.entries.sort_by(|x, y| {
        (&x.namespace, &x.release, &x.object, &x.path).cmp(&(&y.namespace, &y.release, &y.object, &y.path))
    });
    serde_yaml::to_string(&b).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_or_too_costly_hashes_accept_nothing() {
        let input = "/data/password\n\"bmV3\"";
        assert!(verify(&salted(input, b"0123456789abcdef"), input));
        for bad in ["pbkdf2-sha256$x$00$00", "pbkdf2-sha256$100000000$00$00", "pbkdf2-sha256$1$zz$00", "pbkdf2-sha256"]
        {
            assert!(!verify(bad, input), "{bad}");
        }
        // A forged hash of 400 KB (12,500 PBKDF2 blocks) is refused before any is computed.
        let long = format!("pbkdf2-sha256${PBKDF2_ITERATIONS}$00${}", "00".repeat(200_000));
        let started = std::time::Instant::now();
        assert!(!verify(&long, input));
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "{:?}", started.elapsed());
    }

    #[test]
    fn one_check_verifies_a_bounded_number_of_salted_entries() {
        let entry = |sha256: &str, secret: Option<&str>| -> Entry {
            serde_json::from_value(
                serde_json::json!({"release": "web", "namespace": "shop", "object": "Secret shop/db",
                "path": "/data/password", "change": "changed", "sha256": sha256}),
            )
            .map(|mut e: Entry| {
                e.secret = secret.map(str::to_string);
                e
            })
            .unwrap()
        };
        let found = entry("", Some("/data/password\n\"x\""));
        let forged = entry(&format!("pbkdf2-sha256$1$00${}", "00".repeat(32)), None);
        let mut work = Work::new();
        let tried = (0..100).filter(|_| !forged.same_drift(&found, &mut work)).count();
        assert_eq!(tried, 100, "none accepts");
        assert!(work.spent_out && work.left == 0, "only {SLOW_PER_CHECK} were verified");
        let costly = entry(&format!("pbkdf2-sha256${}$00${}", PBKDF2_ITERATIONS + 1, "00".repeat(32)), None);
        assert!(!costly.same_drift(&found, &mut Work::new()), "more iterations than we write: not verified");
    }

    #[test]
    fn a_baseline_that_expands_beyond_its_budget_is_refused_naming_it() {
        let mut bomb = format!("a: &a \"{}\"\nb: [", "x".repeat(10_000));
        bomb.push_str(&vec!["*a"; 2_000].join(", "));
        bomb.push_str("]\n");
        let err = parse(&bomb, "ConfigMap tenant/helm-drift-baseline.web").unwrap_err().to_string();
        assert!(
            err.contains("ConfigMap tenant/helm-drift-baseline.web") && err.contains("expands to more than"),
            "{err}"
        );
        // What helm-drift writes reads back.
        let b = Baseline { entries: Vec::new(), ..Baseline::default() };
        assert_eq!(parse(&render(&b), "file").unwrap().entries, Vec::new());
    }
}
