//! Why a release could not be read from Helm's storage, in every backend.

use super::codec::DecodeError;
use crate::api::ApiError;

/// What a release without a deployed revision is in the middle of, and what ends it.
fn not_deployed_hint(status: &str) -> &'static str {
    match status {
        "uninstalling" => ": helm uninstall is under way, or was interrupted (helm uninstall again finishes it)",
        "pending-install" => ": helm install is under way, or was interrupted (helm uninstall clears it)",
        "failed" => ": its install failed (compare that revision with --revision N)",
        _ => "",
    }
}

/// Why no release could be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SourceError {
    #[error("release {release:?} not found in namespace {namespace:?} (storage driver: {driver}){hint}")]
    NotFound { release: String, namespace: String, driver: &'static str, hint: String },
    #[error(
        "release {release:?} in namespace {namespace:?} has no deployed revision (newest is revision {revision}, status {status}){}",
        not_deployed_hint(status)
    )]
    NotDeployed { release: String, namespace: String, revision: u32, status: String },
    #[error(
        "revision {revision} of release {release:?} not found in namespace {namespace:?} (storage driver: {driver})"
    )]
    NoSuchRevision { release: String, namespace: String, revision: u32, driver: &'static str },
    #[error("{record}: {source}")]
    Corrupt { record: String, source: DecodeError },
    #[error("{record}: no `release` key in its data")]
    NoData { record: String },
    #[error("{record}: {source}: a record must match its own storage object, so it is not compared{unread}")]
    Mismatch { record: String, source: super::record::Mismatch, unread: String },
    #[error(
        "{record}: {}: namespace {namespace:?} holds its own record of the release ({own}), and a namespace's own record of a release wins over a claim stored elsewhere, so this one is not compared",
        crate::model::CONFLICTING_CLAIM
    )]
    Conflict { record: String, namespace: String, own: String },
    #[error("{what}: {source}{hint}")]
    Api { what: String, source: ApiError, hint: &'static str },
    #[error(transparent)]
    Sql(#[from] SqlError),
}

impl SourceError {
    /// Whether the record itself is unusable (undecodable, over a limit, not what it claims):
    /// input to reject, not an outage.
    pub(crate) fn is_bad_record(&self) -> bool {
        matches!(
            self,
            SourceError::Corrupt { .. }
                | SourceError::NoData { .. }
                | SourceError::Mismatch { .. }
                | SourceError::Conflict { .. }
        )
    }
}

/// Why the SQL storage could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SqlError {
    #[error("the sql driver needs HELM_DRIVER_SQL_CONNECTION_STRING")]
    NoConnectionString,
    #[error("cannot connect to the SQL storage: {0}")]
    Connect(tokio_postgres::Error),
    #[error("HELM_DRIVER_SQL_CONNECTION_STRING: {0}")]
    Tls(#[from] super::sql_tls::TlsSettingsError),
    #[error("{what}: {source}")]
    Query { what: String, source: tokio_postgres::Error },
    #[error("label selector {0:?}: the sql driver supports only key=value terms")]
    Selector(String),
    #[error("SQL row {row} holds a body of {bytes} bytes, over the {most} MiB a record may have: not read")]
    TooLarge { row: String, bytes: u64, most: usize },
}
