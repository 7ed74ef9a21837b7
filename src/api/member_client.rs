//! The client of a fleet member (a cluster of an inventory): HTTP/2 when its API server offers
//! it (every Kubernetes API server does), so the member's watches and reads share one
//! connection, one TLS session and one read buffer instead of one of each per watch (at a
//! thousand members, what most of the watcher's memory went to); HTTP/1.1 when the server offers
//! nothing else. The same layers as kube's own client otherwise: the base URI, credentials,
//! extra headers (impersonation), its connect and write timeouts. The read timeout bounds the
//! wait for each response's head, not the connection's silence: a connection that carries every
//! watch is known alive by its pings instead, so the member's watches use this client too.

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::Config;
use kube::client::{Body, ClientBuilder, ConfigExt, DynBody};
use std::time::Duration;
use tower::{BoxError, ServiceBuilder, ServiceExt};

/// How often an idle HTTP/2 connection is pinged, and how long its answer may take: a member
/// whose connection died is noticed within both, and every watch on it started again.
const KEEP_ALIVE: Duration = Duration::from_secs(30);
const KEEP_ALIVE_ANSWER: Duration = Duration::from_secs(20);

/// How many TLS sessions a member's client keeps to resume.
const TLS_SESSIONS: usize = 2;

/// kube's stack as `ClientBuilder::try_from` builds it, with HTTP/2 offered first.
pub(super) type MemberService = tower::util::BoxService<http::Request<Body>, http::Response<Box<DynBody>>, BoxError>;

/// The builder of a member's client (no request sent yet).
pub(super) fn builder(config: &Config) -> Result<ClientBuilder<MemberService>, kube::Error> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let mut tls = config.rustls_client_config()?;
    // One server, one connection: room for two sessions to resume, not rustls's 256 (13 KiB a
    // member, allocated up front).
    tls.resumption = rustls::client::Resumption::in_memory_sessions(TLS_SESSIONS);
    let https = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http();
    let https = match &config.tls_server_name {
        Some(name) => {
            let name = name
                .clone()
                .try_into()
                .map_err(|e| kube::Error::RustlsTls(kube::client::RustlsTlsError::InvalidServerName(e)))?;
            https.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
        }
        None => https,
    };
    let mut connector = hyper_timeout::TimeoutConnector::new(https.enable_all_versions().wrap_connector(http));
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_write_timeout(config.write_timeout);
    let client: hyper_util::client::legacy::Client<_, Body> =
        hyper_util::client::legacy::Builder::new(TokioExecutor::new())
            .timer(hyper_util::rt::TokioTimer::new())
            .http2_keep_alive_interval(KEEP_ALIVE)
            .http2_keep_alive_timeout(KEEP_ALIVE_ANSWER)
            .http2_keep_alive_while_idle(true)
            .build(connector);
    let service = ServiceBuilder::new()
        .option_layer(config.read_timeout.map(tower::timeout::TimeoutLayer::new))
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(client)
        .map_response(|res| {
            res.map(|body| Box::new(http_body_util::BodyExt::map_err(body, BoxError::from)) as Box<DynBody>)
        })
        .boxed();
    Ok(ClientBuilder::new(service, config.default_namespace.clone()))
}
