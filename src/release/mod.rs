//! The release source: Helm's stored release records, decoded into [`Release`].

mod codec;
mod record;
mod sql;
mod storage;

pub use codec::{DecodeError, decode};
pub use record::{Chart, ChartFile, ChartMetadata, Hook, Info, Release};
pub use storage::{ReleaseIndex, Selected, SourceError, Storage};
