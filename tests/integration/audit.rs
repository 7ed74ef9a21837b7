//! Who made each drift, from the API server's audit (its log backend here, Metadata level): an
//! edit by a person impersonated by the admin, one made with a ServiceAccount token and a
//! `kubectl delete`, each named in `check --audit-log` (text and JSON); a write the log does not
//! hold is said to have no audit record, never guessed.

use crate::support::{Env, Helm};
use crate::watching::Watching;
use serde_json::Value;
use std::time::Duration;

/// A kubeconfig that authenticates with `token` alone (no client certificate) to `env`'s API
/// server.
fn token_kubeconfig(env: &Env, token: &str) -> std::path::PathBuf {
    let ca = env.cp.dir().join("pki").join("ca.crt");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: u\n  user:\n    token: {token}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u, namespace: {}}}\ncurrent-context: c\n",
        env.cp.server(),
        ca.display(),
        env.ns
    );
    let path = env.home().join("token-kubeconfig");
    std::fs::write(&path, text).unwrap();
    path
}

/// The audit log written since `mark`, as an operator would fetch it from a control-plane node.
fn log_since(env: &Env, mark: u64) -> std::path::PathBuf {
    env.audit_since(mark); // waits until the log holds what was done before now
    let text = std::fs::read(env.cp.audit_log()).unwrap();
    let path = env.home().join("audit.log");
    std::fs::write(&path, &text[mark as usize..]).unwrap();
    path
}

/// Alice (a user the admin impersonates) and the ServiceAccount `editor` may edit ConfigMaps
/// and Deployments of `env`'s namespace; a kubeconfig with the ServiceAccount's token.
pub fn editors(env: &Env) -> std::path::PathBuf {
    let ns = env.ns.clone();
    let rbac = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: editor}}\nrules:\n- apiGroups: [\"\", apps]\n  resources: [configmaps, deployments, deployments/scale]\n  verbs: [get, list, patch, update]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: editor}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: editor}}\nsubjects:\n- {{kind: User, name: alice@example.com, apiGroup: rbac.authorization.k8s.io}}\n- {{kind: ServiceAccount, name: editor, namespace: {ns}}}\n"
    );
    env.kubectl(&["create", "serviceaccount", "editor"]).success();
    env.apply_yaml("editor-rbac", &rbac);
    env.wait_until_allowed("alice@example.com", "patch", "configmaps", false);
    env.wait_until_allowed(&format!("system:serviceaccount:{ns}:editor"), "patch", "deployments", false);
    let token = env.kubectl(&["create", "token", "editor"]).success().stdout().trim().to_string();
    token_kubeconfig(env, &token)
}

/// Alice (impersonated by the admin) sets a ConfigMap's greeting.
fn alice_edits(env: &Env, configmap: &str, greeting: &str) {
    let patch = format!(r#"{{"data":{{"greeting":"{greeting}"}}}}"#);
    env.kubectl(&["--as", "alice@example.com", "patch", "configmap", configmap, "--type", "merge", "-p", &patch])
        .success();
}

fn object<'a>(report: &'a Value, kind: &str) -> &'a Value {
    let objects = report["releases"][0]["objects"].as_array().unwrap();
    objects.iter().find(|o| o["kind"] == kind).unwrap_or_else(|| panic!("no {kind} in {report:#}"))
}

helm_matrix! {
    /// Alice (impersonated by the admin) edits the ConfigMap, a ServiceAccount's token scales the
    /// Deployment, the admin deletes the Service: each is named, with the impersonator, the
    /// deciding group and the client; without the log's events, "no audit record".
    fn check_names_who_made_each_drift(helm: Helm) {
        let env = Env::new(&format!("audit-check-{}", helm.tag()));
        let ns = env.ns.clone();
        env.install(helm, "app", "basic", &[]);
        let as_sa = editors(&env);

        let mark = env.audit_mark();
        alice_edits(&env, "app-config", "by alice");
        env.kubectl(&["--kubeconfig", as_sa.to_str().unwrap(), "scale", "deployment", "app-web", "--replicas", "3"]).success();
        env.kubectl(&["delete", "service", "app-web"]).success();
        let log = log_since(&env, mark);

        let done = env.drift(&["check", "app", "--audit-log", log.to_str().unwrap(), "-o", "json"]).code(2);
        let report: Value = serde_json::from_str(&done.stdout()).unwrap();
        let cm = object(&report, "ConfigMap");
        let by = &cm["differences"][0]["changedBy"];
        assert_eq!((by["user"].as_str(), by["impersonatedBy"].as_str()), (Some("alice@example.com"), Some("admin")), "{cm:#}");
        assert_eq!((by["auditRecord"].as_str(), by["manager"].as_str()), (Some("found"), Some("kubectl-patch")));
        assert!(by["userAgent"].as_str().unwrap().starts_with("kubectl/"), "{by}");
        assert!(by["auditId"].as_str().is_some_and(|id| !id.is_empty()) && by["sourceIPs"][0] == "127.0.0.1", "{by}");
        let deploy = object(&report, "Deployment");
        let replicas = deploy["differences"].as_array().unwrap().iter().find(|d| d["path"] == "/spec/replicas").expect("replicas");
        assert_eq!(replicas["changedBy"]["user"].as_str(), Some(format!("system:serviceaccount:{ns}:editor").as_str()), "{deploy:#}");
        assert_eq!(replicas["changedBy"]["impersonatedBy"], Value::Null);
        let svc = object(&report, "Service");
        assert_eq!(svc["verdict"], "missing");
        assert_eq!(svc["deletedBy"]["user"], "admin", "{svc:#}");
        assert_eq!(svc["deletedBy"]["groups"], serde_json::json!(["system:masters"]), "the group that decided");

        let text = env.drift(&["check", "app", "--audit-log", log.to_str().unwrap()]).code(2);
        text.says("(kubectl-patch by alice@example.com via admin,");
        text.says(&format!("by system:serviceaccount:{ns}:editor"));
        text.says("deleted by admin [system:masters] (kubectl/");

        // A log that holds none of it: said, never guessed.
        let empty = env.home().join("empty.log");
        std::fs::write(&empty, "").unwrap();
        // Rotated and compressed as the log backend keeps it (--audit-log-compress): the same.
        let gz = env.home().join("audit-rotated.log.gz");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut encoder, &std::fs::read(&log).unwrap()).unwrap();
        std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
        let rotated = env.drift(&["check", "app", "--audit-log", empty.to_str().unwrap(), "--audit-log", gz.to_str().unwrap()]).code(2);
        rotated.says("(kubectl-patch by alice@example.com via admin,").says("deleted by admin [system:masters]");
        let none = env.drift(&["check", "app", "--audit-log", empty.to_str().unwrap()]).code(2);
        none.says("(kubectl-patch, no audit record,").says("deleted: no audit record");
        // Without the flag, nothing about the audit.
        let plain = env.drift(&["check", "app", "-o", "json"]).code(2);
        let plain: Value = serde_json::from_str(&plain.stdout()).unwrap();
        assert_eq!(object(&plain, "ConfigMap")["differences"][0]["changedBy"].get("user"), None);
        // An unreadable log is an error that names it, not a report without names.
        env.drift(&["check", "app", "--audit-log", "/nonexistent/audit.log"]).code(1).stderr_has("/nonexistent/audit.log");
    }
}

/// One watcher at a time serves the audited control plane's webhook port.
static SINK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A watcher of `env` serving the audit webhook the audited control plane posts to, its
/// senders authenticated by the control plane's token (and client certificates of its CA).
pub fn audit_watcher(env: &Env, extra: &[&str]) -> Watching {
    let sink = env.cp.audit_sink().expect("an audited control plane (Env::audited)");
    let tokens = format!("# the API server's webhook token\n{}\n", sink.token);
    let mut args = vec!["--ui"];
    args.extend_from_slice(extra);
    audit_watcher_with(env, sink, &tokens, &args)
}

/// A watcher serving `sink`'s webhook port, its tokens file holding `tokens`.
fn audit_watcher_with(env: &Env, sink: &testcluster::AuditSink, tokens: &str, extra: &[&str]) -> Watching {
    let file = env.home().join("audit-tokens");
    std::fs::write(&file, tokens).unwrap();
    let address = format!("127.0.0.1:{}", sink.port);
    let mut args = vec!["--audit-address", &address, "--audit-tokens", file.to_str().unwrap()];
    let (cert, key, ca) = (sink.cert.to_str().unwrap(), sink.key.to_str().unwrap(), sink.ca.to_str().unwrap());
    args.extend(["--audit-tls-cert", cert, "--audit-tls-key", key]);
    // Client certificates name their cluster: only a watcher that names its own takes them.
    if extra.iter().any(|a| *a == "--cluster" || *a == "--clusters") {
        args.extend(["--audit-client-ca", ca]);
    }
    args.extend_from_slice(extra);
    Watching::start(env, &args).ready()
}

/// The drift of `object` (its `Kind ns/name` prefix) at `/drifts.json` once `ok` holds for it.
fn life(w: &Watching, object: &str, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(45);
    let mut last = Value::Null;
    while std::time::Instant::now() < deadline {
        let (status, body) = w.get("/drifts.json");
        assert_eq!(status, 200, "{body}");
        last = serde_json::from_str(&body).unwrap();
        let mine = |d: &&Value| d["object"].as_str().is_some_and(|o| o.starts_with(object)) && ok(d);
        if let Some(found) = last["drifts"].as_array().unwrap().iter().find(mine) {
            return found.clone();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("timed out waiting for {what}: {last:#}\n{}", w.logs_text())
}

fn made_by(d: &Value) -> String {
    d["madeBy"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect::<Vec<_>>().join(", ")
}

helm_matrix! {
    /// The watcher names who made each drift from the audit webhook and keeps each drift's
    /// life: alice's edit (impersonated by the admin) undone by hand, a ServiceAccount's scale
    /// repaired with `helm drift repair`, a delete ended by `helm upgrade`, and alice's edit of a
    /// release that opts in, healed by the watcher itself. Names are on the page and its JSON,
    /// not in Events (no --audit-publish-names).
    fn watch_names_who_made_each_drift_and_how_it_ended(helm: Helm) {
        let _port = SINK.lock().unwrap_or_else(|e| e.into_inner());
        let env = Env::audited(&format!("audit-watch-{}", helm.tag()));
        let ns = env.ns.clone();
        env.install(helm, "app", "basic", &[]);
        env.install(helm, "healed", "basic", &["--labels", "helm-drift.io/repair=true"]);
        let as_sa = editors(&env);
        let w = audit_watcher(&env, &["app", "healed", "--repair", "--trust-namespace", &ns]);

        // Alice's edit, undone by the admin by hand.
        alice_edits(&env, "app-config", "by alice");
        let open = life(&w, &format!("ConfigMap {ns}/app-config"), "alice named", |d| made_by(d).contains("by alice@example.com via admin"));
        assert_eq!(open["open"], true, "{open:#}");
        let page = w.get("/").1;
        assert!(page.contains("alice@example.com via admin") && page.contains("Drift timeline"), "{page}");
        let said = w.log_lines();
        let attributed = said.iter().find(|l| l["msg"] == "drift attributed" && l["object"] == format!("ConfigMap {ns}/app-config"));
        assert!(attributed.is_some_and(|l| l["made_by"].as_str().unwrap().contains("alice@example.com via admin")), "the log names her: {said:#?}");
        let detected = crate::watching::events(&env, "DriftDetected");
        assert!(!detected.is_empty() && !format!("{detected:?}").contains("alice"), "names stay out of Events: {detected:#?}");
        env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"hello"}}"#);
        let ended = life(&w, &format!("ConfigMap {ns}/app-config"), "undone by the admin", |d| d["ended"]["by"] == "admin");
        assert_eq!(ended["ended"]["how"], "hand", "{ended:#}");

        // The ServiceAccount's scale, repaired by a person with helm drift repair.
        env.kubectl(&["--kubeconfig", as_sa.to_str().unwrap(), "scale", "deployment", "app-web", "--replicas", "3"]).success();
        let sa = format!("system:serviceaccount:{ns}:editor");
        life(&w, &format!("Deployment {ns}/app-web"), "the ServiceAccount named", |d| made_by(d).contains(&sa));
        env.drift(&["repair", "app"]).success();
        let repaired = life(&w, &format!("Deployment {ns}/app-web"), "repaired", |d| d["ended"]["how"] == "repair");
        assert_eq!(repaired["ended"]["by"], "admin", "{repaired:#}");

        // A delete, ended by helm upgrade.
        env.kubectl(&["delete", "service", "app-web"]).success();
        life(&w, &format!("Service {ns}/app-web"), "the delete named", |d| made_by(d).contains("deleted by admin"));
        let chart = crate::support::chart_path("basic");
        env.helm(helm, &["upgrade", "app", chart.to_str().unwrap(), "--reuse-values"]).success();
        let upgraded = life(&w, &format!("Service {ns}/app-web"), "ended by the upgrade", |d| !d["ended"]["by"].is_null());
        assert_eq!((upgraded["ended"]["how"].as_str(), upgraded["ended"]["by"].as_str()), (Some("revision"), Some("admin")), "{upgraded:#}");

        // Alice's edit of the release that opts in: healed by the watcher.
        alice_edits(&env, "healed-config", "by alice");
        let healed = life(&w, &format!("ConfigMap {ns}/healed-config"), "healed", |d| d["ended"]["how"] == "watcher");
        assert_eq!(healed["ended"]["by"], "helm-drift watch", "{healed:#}");
        assert!(made_by(&healed).contains("kubectl-patch") , "{healed:#}");

        // How long drifts live here, in the metrics.
        // A lifetime is counted once the audit named its ender (its batch may still be coming).
        let counted = |how: &str| {
            let series = format!("helm_drift_drift_lifetime_seconds_count{{ended_by=\"{how}\"}}");
            w.sample(&series).is_some_and(|n| n >= 1.0)
        };
        crate::support::eventually_or(
            "every lifetime counted",
            Duration::from_secs(60),
            || ["hand", "repair", "revision", "watcher"].into_iter().all(counted),
            || format!("{}\n{}", w.metrics(), w.get("/drifts.json").1),
        );
        let metrics = w.metrics();
        assert!(metrics.contains("helm_drift_audit_window{unit=\"events\"}"), "{metrics}");
    }
}

/// How a test's sender authenticates to the watcher's audit endpoint.
pub enum Auth<'a> {
    None,
    Token(&'a str),
    /// A client certificate and its key (PEM files).
    Cert(&'a std::path::Path, &'a std::path::Path),
}

/// POSTs `body` to the audit endpoint on loopback `port` (verified against `ca`): the status, or
/// why no answer came (a refused handshake).
pub fn post(port: u16, ca: &std::path::Path, auth: Auth<'_>, body: &[u8]) -> Result<u16, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
    use std::io::{Read, Write};
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let (config, header) = match auth {
        Auth::Cert(cert, key) => {
            let chain = CertificateDer::pem_file_iter(cert).unwrap().map(Result::unwrap).collect();
            (builder.with_client_auth_cert(chain, PrivateKeyDer::from_pem_file(key).unwrap()).unwrap(), String::new())
        }
        Auth::Token(t) => (builder.with_no_client_auth(), format!("Authorization: Bearer {t}\r\n")),
        Auth::None => (builder.with_no_client_auth(), String::new()),
    };
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let tcp = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let head = format!(
        "POST /audit HTTP/1.1\r\nHost: 127.0.0.1\r\n{header}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    // The server may answer (and close) before a refused body is all sent.
    let _ = tls.write_all(head.as_bytes()).and_then(|_| tls.write_all(body));
    let mut answer = Vec::new();
    let read = tls.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    match text.split_whitespace().nth(1).and_then(|c| c.parse().ok()) {
        Some(code) => Ok(code),
        None => Err(format!("no answer: {read:?} {text}")),
    }
}

/// An `audit.k8s.io/v1` `EventList` of `events` (items without their type, as the API server
/// sends them).
pub fn batch(events: Vec<Value>) -> Vec<u8> {
    serde_json::json!({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": events}).to_string().into_bytes()
}

/// A successful `patch` of a ConfigMap by `user` at second `at` (RFC 3339 without zone).
pub fn patch_event(user: &str, namespace: &str, name: &str, at: &str) -> Value {
    serde_json::json!({"level":"Metadata","auditID":format!("forged-{user}-{name}"),"stage":"ResponseComplete",
        "requestURI":format!("/api/v1/namespaces/{namespace}/configmaps/{name}?fieldManager=kubectl-patch"),"verb":"patch",
        "user":{"username":user,"groups":["system:authenticated"]},"sourceIPs":["10.0.0.9"],"userAgent":"kubectl/v1.36.3",
        "objectRef":{"resource":"configmaps","namespace":namespace,"name":name,"apiVersion":"v1"},
        "responseStatus":{"code":200},"requestReceivedTimestamp":format!("{at}.000001Z"),"stageTimestamp":format!("{at}.999999Z")})
}

/// `n` TCP connections to loopback `port` from local address `from`, opened and left silent.
fn idle_connections(from: &str, port: u16, n: usize) -> Vec<std::net::TcpStream> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut open = Vec::new();
        for _ in 0..n {
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
            let stream = socket.connect(([127, 0, 0, 1], port).into()).await.unwrap();
            open.push(stream.into_std().unwrap());
        }
        open
    })
}

/// Whether the server closed `c` (end of stream or a reset) within `limit`.
fn closed_within(c: &std::net::TcpStream, limit: Duration) -> bool {
    use std::io::{ErrorKind, Read};
    c.set_nonblocking(false).unwrap();
    c.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 64];
    loop {
        match (&*c).read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return false,
            Err(_) => return true,
        }
    }
}

/// Refused, then counted: an unauthenticated sender, a wrong token, a certificate of a CA
/// nobody trusts, one of another cluster, a batch over 8 MiB, one that is not an EventList, an
/// event with a huge user name. Then a flood of writes to unrelated objects (20,000 events)
/// while alice edits the release: only the watched objects' writes are kept, and her drift is
/// detected and named all the same.
#[test]
fn the_audit_endpoint_refuses_and_counts_what_no_api_server_sends() {
    let _port = SINK.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::audited("audit-hostile");
    let ns = env.ns.clone();
    env.install(Helm::V3, "app", "basic", &[]);
    editors(&env);
    let sink = env.cp.audit_sink().unwrap();
    let w = audit_watcher(&env, &["app", "--cluster", "audited"]);
    let rejected = || w.sample("helm_drift_rejected_inputs_total{input=\"audit\"}").unwrap_or(0.0);
    let before = rejected();
    let (port, ca) = (sink.port, sink.ca.as_path());
    let ok = batch(vec![patch_event("mallory", "elsewhere", "x", "2026-12-02T10:00:00")]);
    assert_eq!(post(port, ca, Auth::None, &ok), Ok(401), "no credentials");
    assert_eq!(post(port, ca, Auth::Token("not-the-token-at-all"), &ok), Ok(401), "a wrong token");
    let (rogue, rogue_key) = (&sink.clients[2].0, &sink.clients[2].1);
    assert!(!matches!(post(port, ca, Auth::Cert(rogue, rogue_key), &ok), Ok(200)), "a CA nobody trusts");
    let (intruder, intruder_key) = (&sink.clients[1].0, &sink.clients[1].1);
    assert_eq!(post(port, ca, Auth::Cert(intruder, intruder_key), &ok), Ok(403), "another cluster's certificate");
    let (sender, sender_key) = (&sink.clients[0].0, &sink.clients[0].1);
    assert_eq!(post(port, ca, Auth::Cert(sender, sender_key), &ok), Ok(200), "this cluster's certificate");
    let token = Auth::Token(&sink.token);
    let huge = vec![b' '; 9 << 20];
    assert_eq!(post(port, ca, Auth::Token(&sink.token), &huge), Ok(413), "over 8 MiB");
    assert_eq!(post(port, ca, Auth::Token(&sink.token), b"{\"kind\":\"Secret\"}"), Ok(400), "not an EventList");
    let long = batch(vec![patch_event(&"m".repeat(300), &ns, "app-config", "2026-12-02T10:00:00")]);
    assert_eq!(post(port, ca, token, &long), Ok(200), "the batch is taken, its bad event is not");
    // Counted: two 401s, the handshake, the 403, the 413, the 400 and the event.
    crate::support::eventually("refusals counted", Duration::from_secs(10), || rejected() - before >= 7.0);

    // Seventy idle connections from one other address (no TLS, no credential): they hold at
    // most eight slots, each for the handshake's 5 s, and the API server's batches still land.
    let idle = idle_connections("127.0.0.2", port, 70);
    assert_eq!(post(port, ca, Auth::Token(&sink.token), &ok), Ok(200), "a sender elsewhere is not starved");
    let started = std::time::Instant::now();
    let closed = idle.into_iter().filter(|c| closed_within(c, Duration::from_secs(15))).count();
    assert_eq!(closed, 70, "every idle connection closed");
    assert!(started.elapsed() < Duration::from_secs(15), "within the handshake's limit: {:?}", started.elapsed());

    // A flood of writes to objects nobody watches, from four senders at once.
    let flood: Vec<Value> =
        (0..400).map(|i| patch_event("noise", "flood", &format!("noise-{i}"), "2026-12-02T10:00:00")).collect();
    let flood = batch(flood);
    let senders: Vec<_> = (0..4)
        .map(|_| {
            let (flood, token, ca) = (flood.clone(), sink.token.clone(), sink.ca.clone());
            std::thread::spawn(move || {
                (0..12).filter(|_| post(port, &ca, Auth::Token(&token), &flood) == Ok(200)).count()
            })
        })
        .collect();
    alice_edits(&env, "app-config", "during the flood");
    let named = life(&w, &format!("ConfigMap {ns}/app-config"), "alice named during the flood", |d| {
        made_by(d).contains("by alice@example.com")
    });
    assert!(!made_by(&named).contains("mallory"), "{named:#}");
    let taken: usize = senders.into_iter().map(|s| s.join().unwrap()).sum();
    assert_eq!(taken, 48, "every flood batch is answered");
    let kept = w.sample("helm_drift_audit_window{unit=\"events\"}").unwrap();
    assert!(kept < 100.0, "only writes to watched objects are kept: {kept}");
    assert_eq!(w.get("/healthz").0, 200);
}

/// A fleet's watcher takes each workload cluster's audit with that cluster's credentials, and an
/// event counts only for the cluster that sent it: cluster `b`'s token cannot name who changed
/// cluster `a`'s objects, and a certificate of no member is refused.
#[test]
fn a_fleet_attributes_each_cluster_s_drift_only_from_its_own_audit() {
    let _port = SINK.lock().unwrap_or_else(|e| e.into_inner());
    let mgmt = Env::new("faud-mgmt");
    crate::inventory::serve_cluster_crd(&mgmt);
    let a = Env::audited("faud-w");
    let b = Env::new("faud-w");
    a.install(Helm::V4, "web", "basic", &[]);
    b.install(Helm::V3, "web", "basic", &[]);
    editors(&a);
    let kubeconfig = |e: &Env| e.kubectl(&["config", "view", "--raw", "--flatten", "--minify"]).success().stdout();
    crate::inventory::cluster(&mgmt, "a", "fleet: audit", true, Some(&kubeconfig(&a)));
    crate::inventory::cluster(&mgmt, "b", "fleet: audit", true, Some(&kubeconfig(&b)));
    let sink = a.cp.audit_sink().unwrap();
    let b_token = "cluster-b-token-0123456789";
    let tokens = format!("{} faud-mgmt/a\n{b_token} faud-mgmt/b\n", sink.token);
    let args = [
        "web",
        "-n",
        "faud-w",
        "--clusters",
        "capi",
        "--clusters-namespace",
        "faud-mgmt",
        "--clusters-selector",
        "fleet=audit",
        "--clusters-interval",
        "1s",
    ];
    let w = audit_watcher_with(&mgmt, sink, &tokens, &args);
    let drifted = |c: &str| {
        format!("helm_drift_release_drifted{{cluster=\"faud-mgmt/{c}\",namespace=\"faud-w\",release=\"web\"}}")
    };
    w.wait_for(&drifted("a"), 0.0);
    w.wait_for(&drifted("b"), 0.0);

    alice_edits(&a, "web-config", "by alice");
    // Cluster b's sender claims mallory made that very write, in its second.
    let at = a.get("configmap", "web-config", "{.metadata.managedFields[?(@.manager==\"kubectl-patch\")].time}");
    let forged = batch(vec![patch_event("mallory", "faud-w", "web-config", at.trim_end_matches('Z'))]);
    assert_eq!(post(sink.port, &sink.ca, Auth::Token(b_token), &forged), Ok(200), "b may speak for b");
    let (intruder, key) = (&sink.clients[1].0, &sink.clients[1].1);
    assert_eq!(post(sink.port, &sink.ca, Auth::Cert(intruder, key), &forged), Ok(403), "no member is named intruder");
    let named = life(&w, "ConfigMap faud-w/web-config", "alice named on cluster a", |d| {
        d["cluster"] == "faud-mgmt/a" && made_by(d).contains("alice@example.com")
    });
    assert!(!made_by(&named).contains("mallory"), "b's batch is not a's audit: {named:#}");
    // On b, the same write is b's own: b's audit names whoever b's sender says.
    b.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"on b"}}"#);
    let on_b = life(&w, "ConfigMap faud-w/web-config", "b's drift", |d| d["cluster"] == "faud-mgmt/b");
    assert!(!made_by(&on_b).contains("alice"), "a's audit is not b's: {on_b:#}");
}

/// A watcher of one unnamed cluster that would take client certificates is refused at start:
/// every certificate its CA signed (each kubelet's, with kubeadm's CA) would speak for it.
#[test]
fn client_certificates_need_the_cluster_they_name() {
    let env = Env::new("audit-unnamed");
    let pki = env.cp.dir().join("pki");
    let (cert, key, ca) = (pki.join("admin.crt"), pki.join("admin.key"), pki.join("ca.crt"));
    let args = [
        "watch",
        "-A",
        "--audit-address",
        "127.0.0.1:0",
        "--audit-tls-cert",
        cert.to_str().unwrap(),
        "--audit-tls-key",
        key.to_str().unwrap(),
        "--audit-client-ca",
        ca.to_str().unwrap(),
    ];
    env.drift(&args).code(1).stderr_has("name this watcher's cluster with --cluster NAME");
}

/// A log with more writes to a drifted object than the window holds (16 MiB): the oldest are
/// forgotten, and `check --audit-log` says so.
#[test]
fn check_says_when_its_audit_window_forgot_writes() {
    let env = Env::new("audit-dropped");
    env.install(Helm::V4, "app", "basic", &[]);
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"edited"}}"#);
    let path = env.home().join("flood.log");
    let mut log = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..80_000 {
        let mut e = patch_event(&format!("user{i}"), &env.ns, "app-config", "2026-12-02T10:00:00");
        e["kind"] = "Event".into();
        e["apiVersion"] = "audit.k8s.io/v1".into();
        std::io::Write::write_all(&mut log, format!("{e}\n").as_bytes()).unwrap();
    }
    drop(log);
    env.drift(&["check", "app", "--audit-log", path.to_str().unwrap()])
        .code(2)
        .says("writes to the drifted objects were forgotten to stay within 16 MiB");
}
