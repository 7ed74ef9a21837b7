//! The label sets of the watcher's series. Each is bounded: cluster, release and namespace
//! names, verdict words, verbs, reasons and results; never paths or values.

use prometheus_client::encoding::{EncodeLabelSet, LabelSetEncoder};

/// The fleet member a series belongs to (`namespace/name` of its inventory entry); none for a
/// watcher of one cluster, whose series then carry no `cluster` label at all.
#[derive(Clone, Debug, Default, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ClusterLabel(pub(crate) Option<String>);

impl EncodeLabelSet for ClusterLabel {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), std::fmt::Error> {
        match &self.0 {
            Some(cluster) => [("cluster", cluster.as_str())].encode(encoder),
            None => Ok(()),
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReleaseLabels {
    pub(crate) namespace: String,
    pub(crate) release: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ObjectLabels {
    pub(crate) namespace: String,
    pub(crate) release: String,
    pub(crate) verdict: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct GuardLabels {
    pub(crate) namespace: String,
    pub(crate) release: String,
    pub(crate) mode: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct VerbLabels {
    pub(crate) verb: String,
}

/// One word: a reason, a result or an input kind, under the label name `K`.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(crate) struct Word<const K: u8>(pub(crate) String);

/// The label names a [`Word`] is written under.
pub(crate) const REASON: u8 = 0;
pub(crate) const RESULT: u8 = 1;
pub(crate) const INPUT: u8 = 2;
pub(crate) const ENDED: u8 = 3;
pub(crate) const KEPT: u8 = 4;

impl<const K: u8> EncodeLabelSet for Word<K> {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), std::fmt::Error> {
        let name = match K {
            REASON => "reason",
            RESULT => "result",
            ENDED => "ended_by",
            KEPT => "unit",
            _ => "input",
        };
        [(name, self.0.as_str())].encode(encoder)
    }
}

pub(crate) fn release_labels(namespace: &str, release: &str) -> ReleaseLabels {
    ReleaseLabels { namespace: namespace.into(), release: release.into() }
}

pub(crate) fn guard_labels(r: &ReleaseLabels, mode: &str) -> GuardLabels {
    GuardLabels { namespace: r.namespace.clone(), release: r.release.clone(), mode: mode.into() }
}

pub(crate) fn object_labels(r: &ReleaseLabels, verdict: &str) -> ObjectLabels {
    ObjectLabels { namespace: r.namespace.clone(), release: r.release.clone(), verdict: verdict.into() }
}

/// A release installed by CAAPH: the HelmReleaseProxy (and HelmChartProxy) that name it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub(crate) struct ProxyLabels {
    pub(crate) namespace: String,
    pub(crate) release: String,
    pub(crate) helmreleaseproxy: String,
    pub(crate) helmchartproxy: String,
}
