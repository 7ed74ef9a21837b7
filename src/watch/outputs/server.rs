//! The watcher's HTTP endpoints: `/metrics` (OpenMetrics text), `/healthz` (the process runs),
//! `/readyz` (the first full check is done, or this replica stands by for the lease; names
//! asked for that match no release are said there) and with `--ui` the page at `/`.

use super::metrics::Metrics;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What the endpoints read.
pub(crate) struct Health {
    pub(crate) metrics: Arc<Metrics>,
    /// Whether `/readyz` answers 200: changed only by [`Health::serving`] and
    /// [`Health::preparing`].
    ready: AtomicBool,
    /// Release names asked for that match no release (said in `/readyz`).
    pub(crate) missing: std::sync::Mutex<Vec<String>>,
    /// `--ui`: each release as the page shows it (none kept without `--ui`).
    pub(crate) board: Option<std::sync::Mutex<Board>>,
    /// Every drift's life: on the page, at `/drifts.json` and in the metrics.
    pub(crate) timeline: std::sync::Mutex<crate::watch::store::timeline::Timeline>,
    /// Whether `/drifts.json` is served: with `--ui`, or with the audit (a fleet has no page).
    drifts: bool,
}

impl Health {
    /// What the server answers from, not ready yet; `board`: the page's (`--ui`), else none.
    pub(crate) fn new(metrics: Arc<Metrics>, board: Option<std::sync::Mutex<Board>>) -> Health {
        let drifts = board.is_some();
        Health {
            metrics,
            ready: AtomicBool::new(false),
            missing: Default::default(),
            board,
            timeline: Default::default(),
            drifts,
        }
    }

    /// Serves `/drifts.json` (the audit names who made each drift: a fleet reads it there).
    pub(crate) fn with_drifts(mut self) -> Health {
        self.drifts = true;
        self
    }

    /// Ready: the first full check is done (or the fleet's first inventory read, or a standby
    /// waiting for its lease, which serves health and nothing else).
    pub(crate) fn serving(&self) {
        self.ready.store(true, Ordering::Relaxed);
    }

    /// Not ready: a standby became the leader and its first full check is under way.
    pub(crate) fn preparing(&self) {
        self.ready.store(false, Ordering::Relaxed);
    }

    pub(crate) fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }
}

/// The page's releases by namespace and name.
pub(crate) type Board = std::collections::BTreeMap<(String, String), crate::model::BoardRelease>;

/// Pages (and `/drifts.json`) built at once.
const PAGES: usize = 2;

/// Binds `address` (so a busy port is an error at start) and serves until the process ends.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn serve(address: &str, health: Arc<Health>) -> anyhow::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on --metrics-address {address}: {e}"))?;
    let bound = listener.local_addr()?;
    let mut app = Router::new();
    if health.board.is_some() {
        app = app.route("/", get(page));
    }
    if health.drifts {
        app = app.route("/drifts.json", get(drifts));
    }
    // The page and its JSON sort every drift: at most PAGES at once, the others wait their turn
    // (whoever may reach the port cannot make every core sort).
    if health.board.is_some() || health.drifts {
        app = app.route_layer(tower::limit::ConcurrencyLimitLayer::new(PAGES));
    }
    let app = app
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

/// The page (`--ui`): read-only, from the watcher's last verdicts, refreshed by the browser.
async fn page(State(h): State<Arc<Health>>) -> impl IntoResponse {
    let releases: Vec<crate::model::BoardRelease> =
        h.board.as_ref().and_then(|b| b.lock().ok().map(|b| b.values().cloned().collect())).unwrap_or_default();
    let ready = h.is_ready();
    let now = k8s_openapi::jiff::Timestamp::now();
    let lives = h.timeline.lock().map(|t| t.shown()).unwrap_or_default();
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'"),
        ],
        crate::report::board_page(&releases, &lives, ready, now),
    )
}

/// The page's drifts as JSON (`--ui`): each drift's life, who made it and how it ended.
async fn drifts(State(h): State<Arc<Health>>) -> impl IntoResponse {
    let lives = h.timeline.lock().map(|t| t.shown()).unwrap_or_default();
    let body = crate::report::timeline_json(&lives, k8s_openapi::jiff::Timestamp::now());
    ([(header::CONTENT_TYPE, "application/json")], body.to_string())
}

async fn ready(State(h): State<Arc<Health>>) -> impl IntoResponse {
    if !h.is_ready() {
        return (StatusCode::SERVICE_UNAVAILABLE, "the first full check is not done yet\n".to_string());
    }
    let missing = h.missing.lock().map(|m| m.clone()).unwrap_or_default();
    if missing.is_empty() {
        return (StatusCode::OK, "ready\n".to_string());
    }
    (StatusCode::OK, format!("ready\nwarning: no release named {} (nothing is watched for it)\n", missing.join(", ")))
}
