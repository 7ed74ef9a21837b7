//! What the watcher's page (`watch --ui`) keeps of each release: its drifted objects with their
//! paths, verdicts and writers, never a value (as in its Events).

use super::{DriftKind, DriftReport};

/// One release as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BoardRelease {
    pub(crate) namespace: String,
    pub(crate) release: String,
    pub(crate) revision: u32,
    /// The release's verdict word (`in-sync`, `drifted`, `error`).
    pub(crate) verdict: &'static str,
    pub(crate) objects: usize,
    /// When it was compared (RFC 3339).
    pub(crate) checked: String,
    /// Objects worth a look (not in sync, excluded or expected).
    pub(crate) shown: Vec<BoardObject>,
}

/// One object worth a look: no value, only where and who.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BoardObject {
    pub(crate) id: String,
    /// The verdict's word, as in `-o json`.
    pub(crate) verdict: &'static str,
    pub(crate) label: &'static str,
    pub(crate) paths: Vec<String>,
    pub(crate) managers: Vec<String>,
}

/// One drift's life as the page and `/drifts.json` show it: no value, only where, who and when.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DriftLife {
    /// The fleet member (empty for a watcher of one cluster).
    pub(crate) cluster: String,
    pub(crate) namespace: String,
    pub(crate) release: String,
    pub(crate) object: String,
    pub(crate) revision: u32,
    pub(crate) appeared: jiff::Timestamp,
    pub(crate) made_by: Vec<String>,
    pub(crate) detected: jiff::Timestamp,
    pub(crate) steps: Vec<(jiff::Timestamp, String)>,
    pub(crate) ended: Option<DriftEnd>,
}

/// How a drift ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DriftEnd {
    pub(crate) at: jiff::Timestamp,
    /// `watcher`, `repair`, `revision`, `hand`, `accepted`, `left`.
    pub(crate) how: &'static str,
    /// As said on the page.
    pub(crate) said: String,
    pub(crate) by: Option<String>,
}

impl BoardRelease {
    pub(crate) fn of(report: &DriftReport, checked: String) -> BoardRelease {
        let shown = report
            .objects
            .iter()
            .filter(|o| !matches!(o.drift_kind(), DriftKind::InSync | DriftKind::Excluded | DriftKind::Expected))
            .map(|o| BoardObject {
                id: o.id.to_string(),
                verdict: o.drift_kind().word(),
                label: o.drift_kind().label(),
                paths: o.drifted_paths(),
                managers: o.makers(),
            })
            .collect();
        BoardRelease {
            namespace: report.namespace.clone(),
            release: report.release.clone(),
            revision: report.revision,
            verdict: report.verdict().word(),
            objects: report.objects.len(),
            checked,
            shown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, ObjectDrift, ObjectId, Verdict};
    use serde_json::json;

    #[test]
    fn keeps_paths_and_writers_never_values() {
        let mut cm = ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some("apps"), "c"), None, Verdict::Modified);
        cm.fields.push(FieldDiff::new(
            crate::testing::path("/data/k"),
            Some(&json!("old-value")),
            Some(&json!("new-value")),
        ));
        let ok = ObjectDrift::new(ObjectId::new("v1", "Service", Some("apps"), "s"), None, Verdict::InSync);
        let b = BoardRelease::of(&crate::testing::report("apps", "web", vec![cm, ok]), "2026-11-30T10:00:00Z".into());
        assert_eq!((b.verdict, b.objects, b.shown.len()), ("drifted", 2, 1));
        assert_eq!(b.shown[0].paths, ["data.k"]);
        assert!(!format!("{b:?}").contains("value"), "{b:?}");
    }
}
