//! The audit webhook endpoint: HTTPS, a POST of an `audit.k8s.io/v1` `EventList` from a sender
//! authenticated as one cluster (a client certificate or a bearer token). A batch from an
//! unauthenticated sender, one over 8 MiB, one that is not an `EventList`, an event that is not
//! what an API server writes, a connection past the 64 served at once (or the 8 of one source
//! address), a TLS handshake slower than 5 s, a request slower than 30 s: refused and counted
//! (`rejected_inputs{input="audit"}`), never kept. Parsing happens before the window is locked,
//! so a flood costs its sender's connections, not detection.

use super::credentials::{Tokens, common_name};
use super::{AuditOptions, Hub};
use crate::audit::event;
use crate::watch::outputs::log::Log;
use crate::watch::outputs::metrics::Metrics;
use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Request, Response, StatusCode};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;
use std::time::Duration;

/// The largest batch read (the API server sends at most 400 events of about 1 KiB by default).
const MAX_BATCH: usize = 8 << 20;
/// Connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 64;
/// The longest a connection is kept: an API server keeps one open for its batches; it
/// reconnects when this ends.
const CONNECTION_LIMIT: Duration = Duration::from_secs(15 * 60);
/// The longest a request's headers, or its body, may take to arrive (a slow sender holds no
/// slot for ever).
const REQUEST_LIMIT: Duration = Duration::from_secs(30);
/// The longest a TLS handshake may take: a connection that says nothing gives its slot back.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(5);
/// Connections one source address may hold at once (an API server keeps one or a few): idle
/// connections from one place cannot take every slot.
const PER_SOURCE: usize = 8;

/// What each connection shares.
struct Receiver {
    hub: Arc<Hub>,
    tokens: Tokens,
    metrics: Arc<Metrics>,
    log: Log,
}

/// Binds `options.address` (a busy port or unreadable credentials are errors at start) and
/// serves the webhook until the process ends.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn serve(
    options: &AuditOptions,
    hub: Arc<Hub>,
    metrics: Arc<Metrics>,
    log: Log,
) -> Result<std::net::SocketAddr> {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls(options)?));
    let tokens = options.tokens.as_deref().map(Tokens::read).transpose()?.unwrap_or_default();
    let listener = tokio::net::TcpListener::bind(&options.address)
        .await
        .with_context(|| format!("cannot listen on --audit-address {}", options.address))?;
    let bound = listener.local_addr()?;
    let receiver = Arc::new(Receiver { hub, tokens, metrics, log });
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let sources = Sources::default();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, peer)) = listener.accept().await else { continue };
            let Some(held) = sources.admit(peer.ip()) else {
                receiver.metrics.rejected("audit", 1);
                continue;
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                receiver.metrics.rejected("audit", 1);
                continue;
            };
            let (acceptor, receiver) = (acceptor.clone(), receiver.clone());
            tokio::spawn(async move {
                let _held = (slot, held);
                let _ = tokio::time::timeout(CONNECTION_LIMIT, connection(acceptor, tcp, receiver)).await;
            });
        }
    });
    Ok(bound)
}

/// The server's TLS: its certificate, and client certificates verified against the CA when one
/// is given (optional: a sender may use a token instead).
fn tls(options: &AuditOptions) -> Result<rustls::ServerConfig> {
    let what = |flag: &str, path: &std::path::Path| format!("cannot read {flag} {}", path.display());
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&options.cert)
        .and_then(|c| c.collect::<Result<_, _>>())
        .with_context(|| what("--audit-tls-cert", &options.cert))?;
    let key = PrivateKeyDer::from_pem_file(&options.key).with_context(|| what("--audit-tls-key", &options.key))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder =
        rustls::ServerConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions()?;
    let builder = match &options.client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_file_iter(ca).with_context(|| what("--audit-client-ca", ca))? {
                roots.add(c.with_context(|| what("--audit-client-ca", ca))?)?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    builder.with_single_cert(certs, key).context("--audit-tls-cert and --audit-tls-key do not make a pair")
}

/// The connections each source address holds.
#[derive(Clone, Default)]
struct Sources(Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>);

/// One connection of a source, given back when dropped.
struct SourceSlot(Sources, std::net::IpAddr);

impl Sources {
    /// A connection from `ip`, unless it holds [`PER_SOURCE`] already.
    fn admit(&self, ip: std::net::IpAddr) -> Option<SourceSlot> {
        let mut held = self.0.lock().ok()?;
        let n = held.entry(ip).or_default();
        if *n >= PER_SOURCE {
            return None;
        }
        *n += 1;
        Some(SourceSlot(self.clone(), ip))
    }
}

impl Drop for SourceSlot {
    fn drop(&mut self) {
        if let Ok(mut held) = self.0.0.lock()
            && let Some(n) = held.get_mut(&self.1)
        {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.1);
            }
        }
    }
}

async fn connection(acceptor: tokio_rustls::TlsAcceptor, tcp: tokio::net::TcpStream, receiver: Arc<Receiver>) {
    let tls = match tokio::time::timeout(HANDSHAKE_LIMIT, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        _ => {
            // A certificate not signed by the CA, not TLS at all, or nothing said in time.
            receiver.metrics.rejected("audit", 1);
            return;
        }
    };
    let certified = tls.get_ref().1.peer_certificates().and_then(|c| c.first()).and_then(|c| common_name(c));
    let service = hyper::service::service_fn(move |req| {
        let (receiver, certified) = (receiver.clone(), certified.clone());
        async move { Ok::<_, std::convert::Infallible>(receiver.batch(req, certified.as_deref()).await) }
    });
    let io = hyper_util::rt::TokioIo::new(tls);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(REQUEST_LIMIT);
    let _ = http.serve_connection(io, service).await;
}

impl Receiver {
    /// One request: authenticated, bounded, parsed, kept.
    async fn batch(&self, req: Request<hyper::body::Incoming>, certified: Option<&str>) -> Response<Full<Bytes>> {
        let token = req.headers().get(hyper::header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        let token = token.and_then(|v| v.strip_prefix("Bearer ")).map(str::trim);
        let cluster = match (certified, token.and_then(|t| self.tokens.cluster(t))) {
            (Some(c), _) => c.to_string(),
            (None, Some(c)) => c.to_string(),
            (None, None) => return self.refuse(StatusCode::UNAUTHORIZED, "no valid client certificate or token"),
        };
        if req.method() != hyper::Method::POST {
            return self.refuse(StatusCode::METHOD_NOT_ALLOWED, "POST an audit.k8s.io/v1 EventList");
        }
        let body = match tokio::time::timeout(REQUEST_LIMIT, Limited::new(req.into_body(), MAX_BATCH).collect()).await {
            Ok(Ok(b)) => b.to_bytes(),
            Ok(Err(_)) => return self.refuse(StatusCode::PAYLOAD_TOO_LARGE, "a batch over 8 MiB, or cut short"),
            Err(_) => return self.refuse(StatusCode::REQUEST_TIMEOUT, "a batch that took over 30 s to send"),
        };
        let (writes, refused) = match parse(&body) {
            Ok(parsed) => parsed,
            Err(why) => return self.refuse(StatusCode::BAD_REQUEST, &why.to_string()),
        };
        if let Some((n, why)) = refused {
            self.metrics.rejected("audit", n as u64);
            self.log.warn("audit events refused", &[("cluster", &cluster), ("events", &n), ("first", &why)]);
        }
        match self.hub.receive(&cluster, writes) {
            Some(_) => {
                self.metrics.audit_window(self.hub.size());
                answer(StatusCode::OK, "ok")
            }
            None => self.refuse(StatusCode::FORBIDDEN, "these credentials are not a cluster watched here"),
        }
    }

    /// A refused request, and its connection closed: a sender must authenticate again (a new
    /// handshake) to try anew, and holds no slot meanwhile.
    fn refuse(&self, status: StatusCode, why: &str) -> Response<Full<Bytes>> {
        self.metrics.rejected("audit", 1);
        self.log.warn("audit batch refused", &[("status", &status.as_u16()), ("reason", &why)]);
        let mut r = answer(status, why);
        r.headers_mut().insert(hyper::header::CONNECTION, hyper::header::HeaderValue::from_static("close"));
        r
    }
}

/// How many of a batch's events were refused, and the first one's reason.
type Refusals = Option<(usize, String)>;

/// A batch that is not an audit EventList.
#[derive(Debug, thiserror::Error)]
enum NotABatch {
    #[error("not an EventList: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not an audit.k8s.io/v1 EventList: {api_version} {kind}")]
    Kind { api_version: String, kind: String },
}

/// A batch's writes, and its refused events.
fn parse(body: &[u8]) -> Result<(Vec<event::AuditedWrite>, Refusals), NotABatch> {
    #[derive(serde::Deserialize)]
    struct Batch {
        #[serde(rename = "apiVersion")]
        api_version: String,
        kind: String,
        #[serde(default)]
        items: Vec<Box<serde_json::value::RawValue>>,
    }
    let batch: Batch = serde_json::from_slice(body)?;
    if batch.api_version != "audit.k8s.io/v1" || batch.kind != "EventList" {
        return Err(NotABatch::Kind { api_version: batch.api_version, kind: batch.kind });
    }
    let mut writes = Vec::new();
    let mut refused: Refusals = None;
    for item in batch.items {
        match event::parse_item(item.get()) {
            Ok(Some(w)) => writes.push(w),
            Ok(None) => {}
            Err(e) => refused = Some(refused.map_or((1, e.to_string()), |(n, first)| (n + 1, first))),
        }
    }
    Ok((writes, refused))
}

fn answer(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(format!("{text}\n"))));
    *r.status_mut() = status;
    r
}
