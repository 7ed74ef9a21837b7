//! Connects to the cluster the way Helm would: kubeconfig (path list), context, and Helm's
//! overrides for API server, token, CA, TLS and impersonation.

use kube::Config;
use kube::config::{KubeConfigOptions, Kubeconfig};
use std::path::PathBuf;

/// How to reach the cluster, as Helm hands it to a plugin (`HELM_*` variables) or as flags.
#[derive(Clone, Debug, Default)]
pub(crate) struct Connection {
    /// Paths of kubeconfig files (a `KUBECONFIG` path list), empty for the default.
    pub(crate) kubeconfig: Vec<PathBuf>,
    pub(crate) context: Option<String>,
    pub(crate) api_server: Option<String>,
    pub(crate) token: Option<String>,
    pub(crate) as_user: Option<String>,
    pub(crate) as_groups: Vec<String>,
    pub(crate) ca_file: Option<PathBuf>,
    pub(crate) insecure_skip_tls_verify: bool,
    pub(crate) tls_server_name: Option<String>,
    pub(crate) qps: Option<f32>,
    pub(crate) burst: Option<u32>,
    /// Per-request timeout (`--timeout`).
    pub(crate) timeout: Option<std::time::Duration>,
    /// A kubeconfig read from a cluster inventory (vetted: inline data only), used instead of
    /// any file.
    pub(crate) given: Option<Kubeconfig>,
}

impl Connection {
    /// How to reach a cluster of an inventory: its own kubeconfig, with this connection's
    /// request limits (never its server, credentials or impersonation, which are another
    /// cluster's).
    pub(crate) fn for_member(&self, kubeconfig: Kubeconfig) -> Connection {
        Connection {
            qps: self.qps,
            burst: self.burst,
            timeout: self.timeout,
            given: Some(kubeconfig),
            ..Connection::default()
        }
    }
}

/// Why no client could be built.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error("cannot read kubeconfig {path}: {source}")]
    Kubeconfig { path: String, source: kube::config::KubeconfigError },
    #[error("no usable kubeconfig: {0}")]
    Config(#[from] kube::config::KubeconfigError),
    #[error("invalid API server address {0:?}")]
    ApiServer(String),
    #[error("cannot read CA file {path}: {source}")]
    CaFile { path: String, source: std::io::Error },
    #[error("cannot use the pod's service account: {0}")]
    InCluster(#[from] kube::config::InClusterError),
    #[error("cannot create a Kubernetes client: {0}")]
    Client(#[from] kube::Error),
}

/// A connected client and the namespace of the chosen kubeconfig context (or `default`).
pub(crate) struct Cluster {
    pub(crate) client: kube::Client,
    pub(crate) default_namespace: String,
    pub(crate) server: String,
}

/// Builds the client for `conn`. No request is sent yet.
pub(crate) async fn connect(conn: &Connection) -> Result<Cluster, ConnectError> {
    let kubeconfig = read_kubeconfig(conn)?;
    let options = KubeConfigOptions { context: conn.context.clone(), ..Default::default() };
    let mut config = match kubeconfig {
        Some(kc) => Config::from_custom_kubeconfig(kc, &options).await?,
        // Without any kubeconfig, Helm's --kube-apiserver alone is enough.
        None if conn.api_server.is_some() => Config::new("https://localhost".parse().expect("static URL")),
        // In a pod without a kubeconfig: its ServiceAccount.
        None if in_cluster() => Config::incluster()?,
        None => Config::from_kubeconfig(&options).await?,
    };
    apply_overrides(&mut config, conn)?;
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(concat!("helm-drift/", env!("CARGO_PKG_VERSION"))),
    ));
    let server = config.cluster_url.to_string();
    let default_namespace = config.default_namespace.clone();
    // A fleet member's: HTTP/2 first (one connection for all its watches); through a proxy,
    // kube's own.
    let builder = match &conn.given {
        Some(_) if config.proxy_url.is_none() => super::member_client::builder(&config)?,
        _ => kube::client::ClientBuilder::try_from(config)?,
    };
    let builder = builder.with_layer(&tower::util::MapRequestLayer::new(|req: http::Request<kube::client::Body>| {
        requests::count(req.method(), req.uri());
        req
    }));
    let client = match conn.given {
        // A cluster of an inventory is someone else's: none of its answers may exceed the cap.
        Some(_) => finish(builder.with_layer(&tower::util::MapResponseLayer::new(capped)), conn),
        None => finish(builder, conn),
    };
    Ok(Cluster { client, default_namespace, server })
}

/// The most bytes one response of a cluster of an inventory (a fleet member) may hold: past it,
/// the response is an error ("length limit exceeded"; a watch is then started again).
pub(crate) const MEMBER_RESPONSE_MAX: usize = 64 * 1024 * 1024;

type Body = Box<kube::client::DynBody>;

/// A response whose body is cut off, as an error, past [`MEMBER_RESPONSE_MAX`] bytes.
fn capped(res: http::Response<Body>) -> http::Response<http_body_util::Limited<Body>> {
    res.map(|b| http_body_util::Limited::new(b, MEMBER_RESPONSE_MAX))
}

/// The client, with the connection's request rate limit if any.
fn finish<S, B>(builder: kube::client::ClientBuilder<S>, conn: &Connection) -> kube::Client
where
    S: tower::Service<http::Request<kube::client::Body>, Response = http::Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<tower::BoxError>,
    B: hyper::body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<tower::BoxError>,
{
    match rate(conn) {
        Some((burst, per)) => builder.with_layer(&tower::limit::RateLimitLayer::new(burst, per)).build(),
        None => builder.build(),
    }
}

pub(crate) mod requests {
    //! Requests sent to the API server in this process, by verb (for `watch`'s metrics).

    use std::sync::atomic::{AtomicU64, Ordering};

    /// The verbs counted, in the order of [`counts`].
    pub(crate) const VERBS: [&str; 8] = ["get", "list", "watch", "create", "update", "patch", "delete", "other"];
    static COUNTS: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];

    /// Counts one request.
    pub(crate) fn count(method: &http::Method, uri: &http::Uri) {
        COUNTS[verb(method, uri)].fetch_add(1, Ordering::Relaxed);
    }

    /// How many requests of each verb (in the order of [`VERBS`]) were sent so far.
    pub(crate) fn counts() -> [u64; 8] {
        std::array::from_fn(|i| COUNTS[i].load(Ordering::Relaxed))
    }

    /// The Kubernetes verb of a request: a GET of a collection is `list`, with `watch=` `watch`.
    fn verb(method: &http::Method, uri: &http::Uri) -> usize {
        let query = uri.query().unwrap_or_default();
        let index = |v: &str| VERBS.iter().position(|x| *x == v).unwrap_or(7);
        match *method {
            http::Method::GET if query.split('&').any(|q| q == "watch=true" || q == "watch=1") => index("watch"),
            http::Method::GET if is_collection(uri.path()) => index("list"),
            http::Method::GET => index("get"),
            http::Method::POST => index("create"),
            http::Method::PUT => index("update"),
            http::Method::PATCH => index("patch"),
            http::Method::DELETE => index("delete"),
            _ => index("other"),
        }
    }

    /// Whether a path names a collection (`/api/v1/namespaces/ns/pods`) rather than one object.
    fn is_collection(path: &str) -> bool {
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        let rest = match parts.as_slice() {
            ["api", _version, rest @ ..] => rest,
            ["apis", _group, _version, rest @ ..] => rest,
            _ => return false,
        };
        match rest {
            ["namespaces", _ns, resource @ ..] if !resource.is_empty() => resource.len() == 1,
            resource => resource.len() == 1,
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn verbs_of_requests() {
            let v = |m: http::Method, u: &str| VERBS[verb(&m, &u.parse().unwrap())];
            assert_eq!(v(http::Method::GET, "/api/v1/namespaces/a/secrets?labelSelector=owner%3Dhelm"), "list");
            assert_eq!(v(http::Method::GET, "/api/v1/namespaces/a/secrets/s"), "get");
            assert_eq!(v(http::Method::GET, "/apis/apps/v1/deployments?watch=true&resourceVersion=1"), "watch");
            assert_eq!(v(http::Method::GET, "/api/v1/namespaces"), "list");
            assert_eq!(v(http::Method::GET, "/api/v1/namespaces/a"), "get");
            assert_eq!(v(http::Method::GET, "/apis/apps/v1/namespaces/a/deployments/w/scale"), "get");
            assert_eq!(v(http::Method::PATCH, "/apis/apps/v1/namespaces/a/deployments/w"), "patch");
            assert_eq!(v(http::Method::GET, "/version"), "get");
        }
    }
}

/// Helm's `--qps` / `--burst-limit` as a request window: up to `burst` requests per
/// `burst / qps` seconds (so `qps` on average). No limit when qps is unset or 0.
fn rate(conn: &Connection) -> Option<(u64, std::time::Duration)> {
    let qps = conn.qps.filter(|q| q.is_finite() && *q > 0.0)?;
    let burst = u64::from(conn.burst.unwrap_or(100).max(1));
    Some((burst, std::time::Duration::from_secs_f64(burst as f64 / f64::from(qps))))
}

/// Whether this process runs in a pod (the API server's address is in the environment).
fn in_cluster() -> bool {
    std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
}

/// The kubeconfig files named by the settings, merged in order; `None` when none exist.
/// The names of the kubeconfig's contexts, in its order (`check --all-contexts`).
pub(crate) fn context_names(conn: &Connection) -> Result<Vec<String>, ConnectError> {
    Ok(read_kubeconfig(conn)?.map(|kc| kc.contexts.into_iter().map(|c| c.name).collect()).unwrap_or_default())
}

fn read_kubeconfig(conn: &Connection) -> Result<Option<Kubeconfig>, ConnectError> {
    if let Some(given) = &conn.given {
        return Ok(Some(given.clone()));
    }
    if conn.kubeconfig.is_empty() {
        return match Kubeconfig::read() {
            Ok(kc) => Ok(Some(kc)),
            Err(_) if conn.api_server.is_some() || in_cluster() => Ok(None),
            Err(e) => Err(e.into()),
        };
    }
    let mut merged = Kubeconfig::default();
    for path in &conn.kubeconfig {
        let next = Kubeconfig::read_from(path)
            .map_err(|source| ConnectError::Kubeconfig { path: path.display().to_string(), source })?;
        merged = merged.merge(next)?;
    }
    Ok(Some(merged))
}

fn apply_overrides(config: &mut Config, conn: &Connection) -> Result<(), ConnectError> {
    if let Some(server) = &conn.api_server {
        config.cluster_url = server.parse().map_err(|_| ConnectError::ApiServer(server.clone()))?;
    }
    if let Some(token) = &conn.token {
        config.auth_info =
            kube::config::AuthInfo { token: Some(secrecy::SecretString::from(token.clone())), ..Default::default() };
    }
    if let Some(path) = &conn.ca_file {
        let pem =
            std::fs::read(path).map_err(|source| ConnectError::CaFile { path: path.display().to_string(), source })?;
        config.root_cert = Some(pem_certificates(&pem));
    }
    if conn.insecure_skip_tls_verify {
        config.accept_invalid_certs = true;
    }
    if let Some(name) = &conn.tls_server_name {
        config.tls_server_name = Some(name.clone());
    }
    if let Some(t) = conn.timeout {
        config.read_timeout = Some(t);
        config.connect_timeout = Some(t.min(std::time::Duration::from_secs(10)));
    }
    if let Some(user) = &conn.as_user {
        config.auth_info.impersonate = Some(user.clone());
    }
    if !conn.as_groups.is_empty() {
        config.auth_info.impersonate_groups = Some(conn.as_groups.clone());
    }
    Ok(())
}

/// DER bodies of every `CERTIFICATE` block of a PEM bundle.
fn pem_certificates(pem: &[u8]) -> Vec<Vec<u8>> {
    use base64::Engine;
    let text = String::from_utf8_lossy(pem);
    let mut certs = Vec::new();
    let mut body: Option<String> = None;
    for line in text.lines().map(str::trim) {
        match line {
            "-----BEGIN CERTIFICATE-----" => body = Some(String::new()),
            "-----END CERTIFICATE-----" => {
                if let Some(b64) = body.take()
                    && let Ok(der) = base64::engine::general_purpose::STANDARD.decode(b64)
                {
                    certs.push(der);
                }
            }
            _ => {
                if let Some(b) = body.as_mut() {
                    b.push_str(line)
                }
            }
        }
    }
    certs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_members_response_past_the_cap_is_an_error() {
        use http_body_util::BodyExt;
        let body = |n: usize| -> Body {
            Box::new(http_body_util::Full::new(bytes::Bytes::from(vec![b'x'; n])).map_err(|e| match e {}))
        };
        let fits = capped(http::Response::new(body(MEMBER_RESPONSE_MAX))).into_body().collect().await;
        assert_eq!(fits.unwrap().to_bytes().len(), MEMBER_RESPONSE_MAX);
        let over = capped(http::Response::new(body(MEMBER_RESPONSE_MAX + 1))).into_body().collect().await;
        assert!(over.unwrap_err().to_string().contains("length limit exceeded"));
    }

    #[test]
    fn pem_bundle_yields_each_certificate() {
        let pem = "junk\n-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nAw==\n-----END CERTIFICATE-----\n";
        assert_eq!(pem_certificates(pem.as_bytes()), vec![vec![0, 1, 2], vec![3]]);
    }
}
