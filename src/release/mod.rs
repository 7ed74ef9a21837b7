//! The release source: Helm's stored release records (Secrets, ConfigMaps or SQL), decoded into
//! [`Release`].

mod budget;
mod chart;
mod codec;
mod driver;
mod error;
mod hooks;
mod index;
mod record;
mod sql;
mod sql_tls;
mod storage;
mod vouch;
mod written;

pub(crate) use chart::LookupUse;
pub(crate) use codec::decode;
pub(crate) use driver::{Driver, RECORDS, records_selector, release_of};
pub(crate) use error::SourceError;
pub(crate) use hooks::Hook;
#[cfg(test)]
pub(crate) use hooks::LastRun;
#[cfg(test)]
pub(crate) use index::Record;
pub(crate) use index::ReleaseIndex;
pub(crate) use record::{Chart, Release, printed_by_helm};
pub(crate) use storage::{METADATA_PAGE, Selected, Storage};
pub(crate) use written::Written;
