//! `--notify`: one HTTP POST per new or resolved drift signature to each receiver, from a task
//! of its own (a queue bounded by count and by bytes, timeout, retries with backoff) so that a
//! slow or failing receiver never holds up detection. Failures are counted and logged.

use super::{log::Log, metrics::Metrics};
use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;

/// Notifications waiting at most; more are dropped (and counted) rather than block detection.
const QUEUE: usize = 1024;
/// Bytes of waiting notification bodies at most (a drift storm of large releases stays bounded
/// in memory, not only in count); a notification that does not fit is dropped and counted.
const QUEUE_BYTES: usize = 8 << 20;
const ATTEMPTS: u32 = 4;
const TIMEOUT: Duration = Duration::from_secs(5);

/// The body a receiver gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Payload {
    /// The `-o json` object shape.
    Json,
    /// `{"text": ...}` for Slack-compatible incoming webhooks.
    Slack,
}

/// Hands notifications to the sending task.
#[derive(Clone)]
pub(crate) struct Notifier {
    tx: Option<mpsc::Sender<Bytes>>,
    metrics: Arc<Metrics>,
    format: Payload,
    cluster: Option<String>,
    /// Bytes queued and not yet sent to every receiver.
    queued: Arc<AtomicUsize>,
    budget: usize,
}

impl Notifier {
    /// Starts the sending task (nothing when there are no receivers); `cluster` is put on every
    /// notification.
    pub(crate) fn start(
        urls: Vec<String>,
        format: Payload,
        cluster: Option<String>,
        metrics: Arc<Metrics>,
        log: Log,
    ) -> anyhow::Result<Notifier> {
        Notifier::with_budget(urls, format, cluster, metrics, log, QUEUE_BYTES)
    }

    fn with_budget(
        urls: Vec<String>,
        format: Payload,
        cluster: Option<String>,
        metrics: Arc<Metrics>,
        log: Log,
        budget: usize,
    ) -> anyhow::Result<Notifier> {
        let queued = Arc::new(AtomicUsize::new(0));
        if urls.is_empty() {
            return Ok(Notifier { tx: None, metrics, format, cluster, queued, budget });
        }
        for u in &urls {
            let uri: http::Uri = u.parse().map_err(|e| anyhow::anyhow!("--notify {u:?} is not a URL: {e}"))?;
            if !matches!(uri.scheme_str(), Some("http" | "https")) {
                anyhow::bail!("--notify {u:?}: only http and https URLs are supported");
            }
        }
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(rustls::crypto::ring::default_provider())
            .map_err(|e| anyhow::anyhow!("cannot read the system's CA certificates for --notify: {e}"))?
            .https_or_http()
            .enable_http1()
            .build();
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(https);
        let (tx, mut rx) = mpsc::channel::<Bytes>(QUEUE);
        let (m, q) = (metrics.clone(), queued.clone());
        tokio::spawn(async move {
            while let Some(body) = rx.recv().await {
                for url in &urls {
                    match send(&client, url, body.clone()).await {
                        Ok(()) => m.notification("sent"),
                        Err(e) => {
                            m.notification("failed");
                            log.warn("notification failed", &[("url", &redact(url)), ("error", &e)]);
                        }
                    }
                }
                q.fetch_sub(body.len(), Ordering::Relaxed);
            }
        });
        Ok(Notifier { tx: Some(tx), metrics, format, cluster, queued, budget })
    }

    /// Queues one notification (serialized now, so the queue holds bytes it can count); never
    /// waits. Dropped and counted when the queue is full by count or by bytes.
    pub(crate) fn send(&self, mut payload: Value) {
        let Some(tx) = &self.tx else { return };
        if let (Some(cluster), Some(map)) = (&self.cluster, payload.as_object_mut()) {
            map.insert("cluster".into(), cluster.clone().into());
        }
        let body = Bytes::from(match self.format {
            Payload::Json => payload.to_string(),
            Payload::Slack => crate::report::json::slack(&payload).to_string(),
        });
        drop(payload);
        let len = body.len();
        let fits = self
            .queued
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |q| (q + len <= self.budget).then_some(q + len))
            .is_ok();
        if !fits {
            self.metrics.notification("dropped");
            return;
        }
        if tx.try_send(body).is_err() {
            self.queued.fetch_sub(len, Ordering::Relaxed);
            self.metrics.notification("dropped");
        }
    }
}

/// Why a notification was not delivered: the last attempt's failure.
#[derive(Debug, thiserror::Error)]
enum Undelivered {
    #[error("the request cannot be made: {0}")]
    Request(#[from] http::Error),
    #[error("HTTP {0} (after {ATTEMPTS} attempts)")]
    Status(http::StatusCode),
    #[error("{0} (after {ATTEMPTS} attempts)")]
    Transport(hyper_util::client::legacy::Error),
    #[error("no answer in {TIMEOUT:?} (after {ATTEMPTS} attempts)")]
    Timeout,
}

/// One POST, retried with backoff on failure (connection error, timeout, non-2xx).
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn send<C>(client: &Client<C, Full<Bytes>>, url: &str, body: Bytes) -> Result<(), Undelivered>
where
    C: hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
{
    let mut wait = Duration::from_millis(500);
    let mut last = Undelivered::Timeout;
    for attempt in 1..=ATTEMPTS {
        let request = http::Request::post(url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::USER_AGENT, concat!("helm-drift/", env!("CARGO_PKG_VERSION")))
            .body(Full::new(body.clone()))?;
        match tokio::time::timeout(TIMEOUT, client.request(request)).await {
            Ok(Ok(r)) if r.status().is_success() => return Ok(()),
            Ok(Ok(r)) => last = Undelivered::Status(r.status()),
            Ok(Err(e)) => last = Undelivered::Transport(e),
            Err(_) => last = Undelivered::Timeout,
        }
        if attempt < ATTEMPTS {
            tokio::time::sleep(wait).await;
            wait *= 2;
        }
    }
    Err(last)
}

/// A receiver's URL for logs: scheme, host and port only (webhook paths and `user:pass@` are
/// secrets).
fn redact(url: &str) -> String {
    match url.parse::<http::Uri>() {
        Ok(u) => {
            let host = u.host().unwrap_or("?");
            let port = u.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
            format!("{}://{host}{port}/…", u.scheme_str().unwrap_or("?"))
        }
        Err(_) => "(invalid URL)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logged_urls_keep_neither_credentials_nor_paths() {
        assert_eq!(redact("https://bot:s3cret@hooks.example:8443/T0/B1/xyz"), "https://hooks.example:8443/…");
        assert_eq!(redact("http://[::1]/a"), "http://[::1]/…");
        assert_eq!(redact("not a url at all"), "(invalid URL)");
    }

    /// A receiver that never answers fills the queue; what does not fit is dropped and counted,
    /// and `send` never waits.
    #[tokio::test]
    async fn a_full_queue_drops_and_counts() {
        let hanging = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", hanging.local_addr().unwrap());
        let metrics = Arc::new(Metrics::new());
        let notifier =
            Notifier::start(vec![url], Payload::Json, None, metrics.clone(), Log { json: true, cluster: None })
                .unwrap();
        let started = crate::watch::clock::Instant::now();
        for i in 0..QUEUE + 10 {
            notifier.send(serde_json::json!({"n": i}));
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "send never waits");
        let dropped = dropped(&metrics);
        // The sending task may have taken one off the queue before the rest were queued.
        assert!(dropped.is_some_and(|d| (9.0..=10.0).contains(&d)), "{}", metrics.encode());
    }

    /// Few but large notifications fill the queue by bytes long before its count: what would
    /// pass the byte budget is dropped and counted; what is sent frees its bytes.
    #[tokio::test]
    async fn the_queue_is_bounded_by_bytes() {
        let hanging = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", hanging.local_addr().unwrap());
        let metrics = Arc::new(Metrics::new());
        let log = Log { json: true, cluster: None };
        let notifier = Notifier::with_budget(vec![url], Payload::Json, None, metrics.clone(), log, 10_000).unwrap();
        let big = "x".repeat(3_000);
        for i in 0..10 {
            notifier.send(serde_json::json!({"n": i, "diff": big}));
        }
        // Three fit in 10,000 bytes; one taken by the sending task keeps its bytes counted until
        // it is sent, so exactly seven are dropped.
        assert_eq!(dropped(&metrics), Some(7.0), "{}", metrics.encode());
        assert!(notifier.queued.load(Ordering::Relaxed) <= 10_000);
    }

    fn dropped(metrics: &Metrics) -> Option<f64> {
        metrics
            .encode()
            .lines()
            .find(|l| l.starts_with("helm_drift_notifications_total{result=\"dropped\"}"))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|n| n.parse::<f64>().ok())
    }

    #[test]
    fn logged_urls_hide_the_path() {
        assert_eq!(super::redact("https://hooks.example.com/services/T0/B0/secret"), "https://hooks.example.com/…");
    }
}
