//! The watcher's HTTP endpoints: `/metrics` (OpenMetrics text), `/healthz` (the process runs)
//! and `/readyz` (the first full check is done, or this replica stands by for the lease; names
//! asked for that match no release are said there).

use super::metrics::Metrics;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What the endpoints read.
pub struct Health {
    pub metrics: Arc<Metrics>,
    pub ready: AtomicBool,
    /// Release names asked for that match no release (said in `/readyz`).
    pub missing: std::sync::Mutex<Vec<String>>,
}

/// Binds `address` (so a busy port is an error at start) and serves until the process ends.
pub async fn serve(address: &str, health: Arc<Health>) -> anyhow::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on --metrics-address {address}: {e}"))?;
    let bound = listener.local_addr()?;
    let app = Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(health);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(bound)
}

async fn metrics(State(h): State<Arc<Health>>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], h.metrics.encode())
}

async fn ready(State(h): State<Arc<Health>>) -> impl IntoResponse {
    if !h.ready.load(Ordering::Relaxed) {
        return (StatusCode::SERVICE_UNAVAILABLE, "the first full check is not done yet\n".to_string());
    }
    let missing = h.missing.lock().map(|m| m.clone()).unwrap_or_default();
    if missing.is_empty() {
        return (StatusCode::OK, "ready\n".to_string());
    }
    (StatusCode::OK, format!("ready\nwarning: no release named {} (nothing is watched for it)\n", missing.join(", ")))
}
