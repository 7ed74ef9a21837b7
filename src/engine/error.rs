//! Why a release could not be evaluated, as a type: the watcher decides on it (forget a release
//! uninstalled meanwhile, refuse a bad record once, retry an outage) by its variant, not by
//! looking inside an error for a type; commands only say it.

use crate::release::SourceError;

/// A failed evaluation.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EvaluateError {
    /// The record could not be read, or is not one (its storage says which).
    #[error("cannot read release {release:?}")]
    Record {
        release: String,
        #[source]
        source: Box<SourceError>,
    },
    /// More objects than `--max-objects`.
    #[error(transparent)]
    TooMany(#[from] TooManyObjects),
    /// Anything else (the cluster, the baseline, a chart's CRDs...).
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

/// A release record holding more objects than `--max-objects`.
#[derive(Debug, thiserror::Error)]
#[error("{record} holds {objects} objects, more than --max-objects {limit}: not checked")]
pub(crate) struct TooManyObjects {
    pub(crate) record: String,
    pub(crate) objects: usize,
    pub(crate) limit: usize,
}

/// What a failed evaluation means to a caller that decides on it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The release was uninstalled meanwhile: forgotten.
    Gone,
    /// The record is bad input (malformed, too large, too many objects), not an outage: counted
    /// and said once per revision, never judged.
    BadRecord,
    /// A record stored apart whose claim yields to the claimed namespace's own record: not
    /// judged, but loud (an error of a scan, and the watcher keeps what it knew of the release).
    Conflict,
    /// Anything else: an error, tried again at the next change or resync.
    Outage,
}

impl EvaluateError {
    pub(crate) fn failure(&self) -> Failure {
        match self {
            EvaluateError::Record { source, .. } => match source.as_ref() {
                SourceError::NotDeployed { status, .. } if status == "uninstalled" => Failure::Gone,
                SourceError::Conflict { .. } => Failure::Conflict,
                s if s.is_bad_record() => Failure::BadRecord,
                _ => Failure::Outage,
            },
            EvaluateError::TooMany(_) => Failure::BadRecord,
            EvaluateError::Other(_) => Failure::Outage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(source: SourceError) -> EvaluateError {
        EvaluateError::Record { release: "web".into(), source: Box::new(source) }
    }

    #[test]
    fn a_failure_is_decided_by_its_variant() {
        let not_deployed = |status: &str| SourceError::NotDeployed {
            release: "web".into(),
            namespace: "apps".into(),
            revision: 2,
            status: status.into(),
        };
        assert_eq!(record(not_deployed("uninstalled")).failure(), Failure::Gone);
        assert_eq!(record(not_deployed("failed")).failure(), Failure::Outage);
        let no_data = SourceError::NoData { record: "sh.helm.release.v1.web.v1".into() };
        assert_eq!(record(no_data).failure(), Failure::BadRecord);
        let many = TooManyObjects { record: "r".into(), objects: 10, limit: 5 };
        assert_eq!(EvaluateError::from(many).failure(), Failure::BadRecord);
        assert_eq!(EvaluateError::from(anyhow::anyhow!("connection refused")).failure(), Failure::Outage);
        let said = crate::errors::chain(&anyhow::Error::from(record(SourceError::NoData { record: "r".into() })));
        assert!(said.starts_with("cannot read release \"web\": "), "{said}");
    }
}
