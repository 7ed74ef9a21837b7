//! The release source: Helm's stored release records (Secrets, ConfigMaps or SQL), decoded into
//! [`Release`].

mod codec;
mod index;
mod record;
mod sql;
mod sql_tls;
mod storage;

pub use codec::{DecodeError, decode};
pub use index::{Record, ReleaseIndex};
pub use record::{Chart, ChartFile, ChartMetadata, Hook, Info, Release};
pub use storage::{Selected, SourceError, Storage};
