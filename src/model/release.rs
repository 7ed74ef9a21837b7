//! A release's verdicts, and a run over several releases.

use super::{ExitStatus, Method, ObjectDrift};

/// All verdicts for one release.
#[derive(Clone, Debug, Default)]
pub(crate) struct DriftReport {
    pub(crate) release: String,
    pub(crate) namespace: String,
    pub(crate) revision: u32,
    pub(crate) status: String,
    pub(crate) chart: String,
    /// The storage object the revision was read from.
    pub(crate) record: String,
    /// Where the record is stored, and why it speaks for this namespace, when that is not the
    /// release's own (a Flux HelmRelease's `storageNamespace` apart from its `targetNamespace`).
    pub(crate) stored_apart: Option<super::StoredApart>,
    /// The newest revision when it is not the one checked (e.g. a failed upgrade).
    pub(crate) newest: Option<(u32, String)>,
    pub(crate) objects: Vec<ObjectDrift>,
    /// Things worth saying about the run (hooks not checked, HPAs not readable...).
    pub(crate) notes: Vec<String>,
    /// Baseline entries of this release that match no drift: `(object, path, changed)`, where
    /// `changed` says the path drifts again with another value (else its drift is gone).
    pub(crate) stale: Vec<(String, String, bool)>,
    /// Release-level findings, always shown (a chart CRD that Helm will never upgrade...).
    pub(crate) findings: Vec<String>,
    /// Where each modified field comes from in the chart (`check --explain`).
    pub(crate) explanations: Vec<Explanation>,
    /// The chart as it renders now, against the cluster (`check --rerender`).
    pub(crate) rerender: Option<Box<Rerender>>,
    /// The mode of the admission guard (`helm drift guard`) that covers the release, when one
    /// does and the guards could be read.
    pub(crate) guard: Option<String>,
    /// When the first acceptance that accepted drift here ends (`accept --expires`): the drift
    /// counts again from then.
    pub(crate) accepted_until: Option<jiff::Timestamp>,
    /// Whose name Helm's writes to the release are under, and how that was found.
    pub(crate) writer: super::HelmWriter,
}

/// The chart rebuilt from the record, rendered now with its stored values (`lookup` answered by
/// the cluster): what it would produce differently, and what a `helm upgrade` with the same
/// values would change in the cluster.
#[derive(Clone, Debug)]
pub(crate) struct Rerender {
    /// Documents of the stored manifest.
    pub(crate) documents: usize,
    /// Render drift: documents that render differently now.
    pub(crate) changed: Vec<super::DocDiff>,
    /// The objects as rendered now, compared with the live ones.
    pub(crate) against_live: DriftReport,
    /// Whether the chart's `lookup` was answered by the cluster (a trusted record); else it
    /// answered nothing, since the record's writer is not the reader.
    pub(crate) lookup_answered: bool,
    /// Documents (`# Source:` paths) rendered by a template that calls `lookup` when it
    /// answered nothing: not a prediction of the upgrade, so neither render drift nor a change.
    pub(crate) unpredictable: Vec<String>,
}

impl DriftReport {
    /// Whether `o` lives outside the release's namespace (cluster-scoped, or in another
    /// namespace): the record's word for it is the word of whoever may write Secrets in the
    /// release's namespace.
    pub(crate) fn is_outside(&self, o: &ObjectDrift) -> bool {
        o.lies_outside(&self.namespace)
    }

    /// The namespace of the record's storage object: the release's own, unless stored apart.
    pub(crate) fn stored_in(&self) -> &str {
        self.stored_apart.as_ref().map_or(&self.namespace, |s| &s.namespace)
    }

    /// The record's storage object when it is one of the cluster's (a Secret or ConfigMap of
    /// the namespace it is stored in; `None` for SQL rows).
    pub(crate) fn record_id(&self) -> Option<super::ObjectId> {
        let (kind, at) = self.record.split_once(' ')?;
        let (ns, name) = at.split_once('/')?;
        (matches!(kind, "Secret" | "ConfigMap") && ns == self.stored_in())
            .then(|| super::ObjectId::new("v1", kind, Some(ns), name))
    }
}

impl Rerender {
    /// Whether a `helm upgrade` with the same values would change anything.
    pub(crate) fn would_change(&self) -> bool {
        !self.changed.is_empty() || self.against_live.drifted() > 0
    }
}

/// Which value of the release produced a modified field, and the value that would make the live
/// state the desired state.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Explanation {
    pub(crate) object: super::ObjectId,
    pub(crate) path: super::FieldPath,
    /// The live value.
    pub(crate) live: serde_json::Value,
    pub(crate) cause: Cause,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cause {
    /// The template builds the field from these values.
    Values(Built),
    /// Every value that could produce it was changed and the field stayed: the template
    /// (`# Source:`) writes it as is.
    HardCoded(Option<String>),
    /// The search gave up before it found the value: why.
    NotFound(String),
}

/// A field built from values: `image: {{ .Values.image.repository }}:{{ .Values.image.tag }}`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Built {
    /// The value keys, in the order the field shows them (`image.repository`, `image.tag`).
    pub(crate) keys: Vec<String>,
    /// The field with each value written `{key}` (`{image.repository}:{image.tag}`).
    pub(crate) shape: String,
    /// `--set-json` pairs that make the template write the live value (the keys whose value
    /// changes; a key inside a list sets the whole list).
    pub(crate) set: Vec<(String, serde_json::Value)>,
    /// Why no value gives the live value (it does not have the template's shape...).
    pub(crate) misfit: Option<String>,
    /// What else the `--set` changes (`Kind namespace/name path`): the chart rendered with it,
    /// compared with a render with today's values.
    pub(crate) also: Vec<String>,
}

/// A release's verdict as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReleaseVerdict {
    InSync,
    Drifted,
    /// Some object (or the release itself) could not be checked; outranks drift.
    Error,
}

impl ReleaseVerdict {
    /// The machine word (JSON `verdict`).
    pub(crate) fn word(self) -> &'static str {
        match self {
            ReleaseVerdict::InSync => "in-sync",
            ReleaseVerdict::Drifted => "drifted",
            ReleaseVerdict::Error => "error",
        }
    }

    pub(crate) fn exit_status(self) -> ExitStatus {
        match self {
            ReleaseVerdict::InSync => ExitStatus::InSync,
            ReleaseVerdict::Drifted => ExitStatus::Drift,
            ReleaseVerdict::Error => ExitStatus::Error,
        }
    }
}

impl DriftReport {
    pub(crate) fn drifted(&self) -> usize {
        self.objects.iter().filter(|o| o.is_drift()).count()
    }

    /// Objects whose values are as recorded but owned by another field manager (not drift
    /// unless `--strict`).
    pub(crate) fn taken_over(&self) -> usize {
        self.objects.iter().filter(|o| !o.is_drift() && o.drift_kind() == super::DriftKind::TakenOver).count()
    }

    pub(crate) fn errors(&self) -> usize {
        self.objects.iter().filter(|o| o.is_error()).count()
    }

    /// With `--explain`: the drifted fields no explanation covers (`Kind namespace/name path`),
    /// which the suggested upgrade does not make permanent (it puts them back, or leaves what
    /// was added as it is).
    pub(crate) fn unexplained(&self) -> Vec<String> {
        if self.explanations.is_empty() {
            return Vec::new();
        }
        let covered = |o: &super::ObjectDrift, p: &super::FieldPath| {
            let at = p.pointer();
            self.explanations.iter().any(|e| {
                let by = e.path.pointer();
                e.object == o.id && (at == by || at.starts_with(&format!("{by}/")))
            })
        };
        let mut out = Vec::new();
        for o in self.objects.iter().filter(|o| o.is_drift()) {
            let paths = o.fields.iter().map(|f| &f.path).chain(o.added.iter().map(|a| &a.path));
            out.extend(paths.filter(|p| !covered(o, p)).map(|p| format!("{} {p}", o.id)));
        }
        out
    }

    /// The release's verdict: error if any object could not be checked, else drifted if any
    /// drifted.
    pub(crate) fn verdict(&self) -> ReleaseVerdict {
        if self.errors() > 0 {
            ReleaseVerdict::Error
        } else if self.drifted() > 0 || self.rerender.as_ref().is_some_and(|r| r.would_change()) {
            ReleaseVerdict::Drifted
        } else {
            ReleaseVerdict::InSync
        }
    }

    /// The engine summary: exact unless some object fell back to the read-only comparison.
    pub(crate) fn engine(&self) -> Method {
        self.objects
            .iter()
            .find_map(|o| match &o.engine {
                Some(e @ Method::ReadOnly { .. }) => Some(e.clone()),
                _ => None,
            })
            .unwrap_or(Method::Exact)
    }

    /// The same release header with other objects (e.g. those a repair selected).
    pub(crate) fn with_objects(&self, objects: Vec<ObjectDrift>) -> DriftReport {
        DriftReport {
            release: self.release.clone(),
            namespace: self.namespace.clone(),
            revision: self.revision,
            status: self.status.clone(),
            chart: self.chart.clone(),
            record: self.record.clone(),
            stored_apart: self.stored_apart.clone(),
            newest: self.newest.clone(),
            objects,
            notes: self.notes.clone(),
            stale: self.stale.clone(),
            findings: self.findings.clone(),
            explanations: self.explanations.clone(),
            rerender: self.rerender.clone(),
            guard: self.guard.clone(),
            accepted_until: self.accepted_until,
            writer: self.writer.clone(),
        }
    }
}

/// A release that could not be checked (corrupt record, forbidden, not found...).
#[derive(Clone, Debug)]
pub(crate) struct ReleaseError {
    pub(crate) namespace: String,
    pub(crate) release: String,
    /// One line, each cause said once.
    pub(crate) message: String,
    /// A record refused as bad input (not what it claims, undecodable, over a limit) in a scan
    /// that did not name it: said and counted, but it does not decide the run's exit code, so
    /// that whoever may write a record cannot turn everyone's scan into an error.
    pub(crate) refused: bool,
}

/// One release's outcome (one per release, moved once: the size difference does not matter).
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Outcome {
    Checked(DriftReport),
    Failed(ReleaseError),
}

impl Outcome {
    pub(crate) fn verdict(&self) -> ReleaseVerdict {
        match self {
            Outcome::Checked(r) => r.verdict(),
            Outcome::Failed(_) => ReleaseVerdict::Error,
        }
    }

    /// Whether it is a record refused as bad input in a scan ([`ReleaseError::refused`]).
    pub(crate) fn is_refused(&self) -> bool {
        matches!(self, Outcome::Failed(e) if e.refused)
    }

    /// `(namespace, release)`, the order of a run's report.
    pub(crate) fn key(&self) -> (&str, &str) {
        match self {
            Outcome::Checked(r) => (&r.namespace, &r.release),
            Outcome::Failed(e) => (&e.namespace, &e.release),
        }
    }
}

/// Everything one run found, releases sorted by namespace and name.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunReport {
    pub(crate) outcomes: Vec<Outcome>,
}

impl RunReport {
    /// The releases that could be checked.
    pub(crate) fn checked(&self) -> impl Iterator<Item = &DriftReport> {
        self.outcomes.iter().filter_map(|o| match o {
            Outcome::Checked(r) => Some(r),
            Outcome::Failed(_) => None,
        })
    }

    /// A run that could not check anything (the cluster or the storage unreachable, say): one
    /// error per release named, or one for the whole selection (release `*`) when none was.
    pub(crate) fn unchecked(releases: &[String], namespace: &str, message: &str) -> RunReport {
        let error = |release: &str| {
            Outcome::Failed(ReleaseError {
                namespace: namespace.to_string(),
                release: release.to_string(),
                message: message.to_string(),
                refused: false,
            })
        };
        let outcomes = if releases.is_empty() { vec![error("*")] } else { releases.iter().map(|r| error(r)).collect() };
        RunReport { outcomes }
    }

    /// Error if anything failed (an error outranks drift), drift if anything drifted.
    /// Refused records do not count (they are said and counted apart).
    pub(crate) fn exit_status(&self) -> ExitStatus {
        let counted = self.outcomes.iter().filter(|o| !o.is_refused());
        counted.map(|o| o.verdict().exit_status()).fold(ExitStatus::InSync, ExitStatus::max)
    }

    /// How many releases are in sync, drifted, in error (refused records aside).
    pub(crate) fn counts(&self) -> (usize, usize, usize) {
        let count = |v| self.outcomes.iter().filter(|o| !o.is_refused() && o.verdict() == v).count();
        (count(ReleaseVerdict::InSync), count(ReleaseVerdict::Drifted), count(ReleaseVerdict::Error))
    }

    /// How many records were refused as bad input.
    pub(crate) fn refused(&self) -> usize {
        self.outcomes.iter().filter(|o| o.is_refused()).count()
    }

    /// Drifted objects over every release.
    pub(crate) fn drifted_objects(&self) -> usize {
        self.outcomes.iter().map(|o| if let Outcome::Checked(r) = o { r.drifted() } else { 0 }).sum()
    }

    /// Objects checked over every release.
    pub(crate) fn objects(&self) -> usize {
        self.outcomes.iter().map(|o| if let Outcome::Checked(r) = o { r.objects.len() } else { 0 }).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unchecked_run_is_an_error_per_release_or_for_the_selection() {
        let named = RunReport::unchecked(&["a".into(), "b".into()], "ns", "cannot reach the cluster");
        assert_eq!(named.counts(), (0, 0, 2));
        assert_eq!(named.exit_status(), ExitStatus::Error);
        let mut refused = RunReport::unchecked(&["a".into(), "b".into()], "ns", "a forged record");
        if let Outcome::Failed(e) = &mut refused.outcomes[0] {
            e.refused = true;
        }
        assert_eq!((refused.counts(), refused.refused()), ((0, 0, 1), 1));
        let Outcome::Failed(e) = &mut refused.outcomes[1] else { panic!("an error") };
        e.refused = true;
        assert_eq!(refused.exit_status(), ExitStatus::InSync, "a refused record decides nothing");
        let all = RunReport::unchecked(&[], "", "cannot reach the cluster");
        let Outcome::Failed(e) = &all.outcomes[0] else { panic!("an error") };
        assert_eq!((e.release.as_str(), e.message.as_str()), ("*", "cannot reach the cluster"));
    }
}
