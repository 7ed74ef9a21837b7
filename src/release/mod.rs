//! The release source: Helm's stored release records (Secrets, ConfigMaps or SQL), decoded into
//! [`Release`].

mod budget;
mod codec;
mod driver;
mod error;
mod index;
mod record;
mod sql;
mod sql_tls;
mod storage;

pub use budget::expansion;
pub use codec::decode;
pub use driver::{Driver, RECORDS, records_selector, release_of};
pub use error::SourceError;
#[cfg(test)]
pub use index::Record;
pub use index::ReleaseIndex;
pub use record::{Chart, Release};
pub use storage::{Selected, Storage};
