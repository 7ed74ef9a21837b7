//! Talking to the API server: the connection (kubeconfig, Helm's overrides, rate limits, the
//! request counter), the error type of every request, and which failures are retried. A leaf:
//! it imports nothing of the crate but the error-line helper, and every module that sends a
//! request (release storage, baselines, live objects, repair, the watcher) uses it.

mod connect;
mod error;
mod member_client;
mod pages;
mod retry;
mod sized;
mod watching;

pub(crate) use connect::{Cluster, Connection, connect, context_names, requests};
pub(crate) use error::ApiError;
pub(crate) use pages::{
    DEFAULT_CHUNK_SIZE, Page, all_pages, chunk_size, kept_pages, list_all_metadata, list_kept, set_chunk_size,
};
pub(crate) use retry::retry;
pub(crate) use sized::PageSizes;
pub(crate) use watching::{backed_off, not_served, scoped, scoped_with, watch_config};
