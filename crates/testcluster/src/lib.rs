//! A real local Kubernetes control plane (etcd, kube-apiserver with RBAC, kube-controller-manager)
//! on free loopback ports, for helm-drift's integration tests and demo. No kubelet, no scheduler.

mod certs;
mod measured;
mod postgres;
mod process;
mod registry;
mod tools;
pub mod webhook;

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub use measured::peak_rss;
pub use postgres::Postgres;
pub use registry::OciRegistry;
pub use tools::Tools;

/// A running control plane. Its processes die with the process (or thread) that started them.
pub struct ControlPlane {
    /// Where its API server sends its audit webhook, when it does.
    audit_sink: Option<AuditSink>,
    dir: PathBuf,
    kubeconfig: PathBuf,
    server: String,
    tools: Tools,
    children: process::Children,
}

impl ControlPlane {
    /// Starts etcd, kube-apiserver and kube-controller-manager in `dir` (created if needed) and
    /// waits until the API server's `/readyz` answers ok.
    pub fn start(tools: Tools, dir: &Path) -> Result<ControlPlane> {
        ControlPlane::start_with(tools, dir, &[])
    }

    /// Like [`ControlPlane::start`], with more kube-apiserver flags.
    pub fn start_with(tools: Tools, dir: &Path, apiserver_flags: &[&str]) -> Result<ControlPlane> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let dir = dir.canonicalize()?;
        let pki = certs::Pki::write(&dir.join("pki"))?;
        let mut children = process::Children::default();

        let etcd_port = process::free_port()?;
        let peer_port = process::free_port()?;
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        children.spawn(
            "etcd",
            &tools.path("etcd"),
            &[
                "--name=default".into(),
                format!("--data-dir={}", dir.join("etcd").display()),
                format!("--listen-client-urls={etcd_url}"),
                format!("--advertise-client-urls={etcd_url}"),
                format!("--listen-peer-urls={peer_url}"),
                format!("--initial-advertise-peer-urls={peer_url}"),
                format!("--initial-cluster=default={peer_url}"),
                "--unsafe-no-fsync=true".into(),
                "--log-level=warn".into(),
            ],
            &dir,
        )?;

        let api_port = process::free_port()?;
        let server = format!("https://127.0.0.1:{api_port}");
        let audit_policy = dir.join("audit-policy.yaml");
        std::fs::write(&audit_policy, AUDIT_POLICY)?;
        let mut flags: Vec<String> = vec![
            format!("--etcd-servers={etcd_url}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            format!("--secure-port={api_port}"),
            format!("--cert-dir={}", dir.join("apiserver-certs").display()),
            format!("--tls-cert-file={}", pki.server_cert.display()),
            format!("--tls-private-key-file={}", pki.server_key.display()),
            format!("--client-ca-file={}", pki.ca_cert.display()),
            "--authorization-mode=RBAC".into(),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
            format!("--service-account-key-file={}", pki.sa_public.display()),
            format!("--service-account-signing-key-file={}", pki.sa_key.display()),
            "--service-cluster-ip-range=10.0.0.0/16".into(),
            "--endpoint-reconciler-type=none".into(),
            "--allow-privileged=true".into(),
            "--enable-priority-and-fairness=false".into(),
            "--profiling=false".into(),
            format!("--audit-policy-file={}", audit_policy.display()),
            format!("--audit-log-path={}", dir.join("audit.log").display()),
            "--audit-log-mode=blocking".into(),
        ];
        flags.extend(apiserver_flags.iter().map(|f| f.to_string()));
        children.spawn("kube-apiserver", &tools.path("kube-apiserver"), &flags, &dir)?;

        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(&kubeconfig, kubeconfig_yaml(&server, &pki))?;
        let mut cp = ControlPlane { audit_sink: None, dir, kubeconfig, server, tools, children };
        cp.wait_ready(Duration::from_secs(180))?;

        let kcm_port = process::free_port()?;
        let kubeconfig = cp.kubeconfig.display().to_string();
        cp.children.spawn(
            "kube-controller-manager",
            &cp.tools.path("kube-controller-manager"),
            &[
                format!("--kubeconfig={kubeconfig}"),
                format!("--authentication-kubeconfig={kubeconfig}"),
                format!("--authorization-kubeconfig={kubeconfig}"),
                "--leader-elect=false".into(),
                "--bind-address=127.0.0.1".into(),
                format!("--secure-port={kcm_port}"),
                format!("--service-account-private-key-file={}", pki.sa_key.display()),
                format!("--root-ca-file={}", pki.ca_cert.display()),
                format!("--cluster-signing-cert-file={}", pki.ca_cert.display()),
                format!("--cluster-signing-key-file={}", pki.ca_key.display()),
                "--use-service-account-credentials=false".into(),
            ],
            &cp.dir,
        )?;
        std::fs::write(cp.dir.join("ready"), &cp.server)?;
        Ok(cp)
    }

    /// Polls `/readyz` through kubectl until it answers `ok`, failing early if a process died.
    fn wait_ready(&mut self, limit: Duration) -> Result<()> {
        let deadline = Instant::now() + limit;
        let mut last = String::new();
        while Instant::now() < deadline {
            self.children.check_alive()?;
            let out = self.kubectl(&["get", "--raw", "/readyz"])?;
            if out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok" {
                return Ok(());
            }
            last = String::from_utf8_lossy(&out.stderr).trim().to_string();
            std::thread::sleep(Duration::from_millis(200));
        }
        bail!("kube-apiserver at {} not ready after {limit:?}: {last}", self.server)
    }

    /// Runs the built kubectl against this control plane.
    pub fn kubectl(&self, args: &[&str]) -> Result<std::process::Output> {
        std::process::Command::new(self.tools.path("kubectl"))
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .output()
            .context("running kubectl")
    }

    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn tools(&self) -> &Tools {
        &self.tools
    }

    /// Starts a control plane whose API server also sends its audit (Metadata level, batches
    /// sent within a second) to a webhook at `https://127.0.0.1:PORT/audit` that nothing serves
    /// yet, authenticating with a bearer token: see [`AuditSink`].
    pub fn start_audited(tools: Tools, dir: &Path) -> Result<ControlPlane> {
        std::fs::create_dir_all(dir)?;
        let dir = dir.canonicalize()?;
        let port = process::free_port()?;
        let token = format!("audit-token-{port}-{}", std::process::id());
        let pki = dir.join("pki");
        let config = dir.join("audit-webhook.kubeconfig");
        std::fs::write(
            &config,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: watcher\n  cluster:\n    server: https://127.0.0.1:{port}/audit\n    certificate-authority: {}\nusers:\n- name: apiserver\n  user:\n    token: {token}\ncontexts:\n- name: audit\n  context: {{cluster: watcher, user: apiserver}}\ncurrent-context: audit\n",
                pki.join("ca.crt").display()
            ),
        )?;
        let flags = [
            format!("--audit-webhook-config-file={}", config.display()),
            "--audit-webhook-batch-max-wait=1s".to_string(),
            "--audit-webhook-initial-backoff=200ms".to_string(),
        ];
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let mut cp = ControlPlane::start_with(tools, &dir, &flags)?;
        let file = |name: &str| pki.join(name);
        let client = |n: &str| (file(&format!("{n}.crt")), file(&format!("{n}.key")));
        cp.audit_sink = Some(AuditSink {
            port,
            token,
            cert: file("apiserver.crt"),
            key: file("apiserver.key"),
            ca: file("ca.crt"),
            clients: [client("audit-sender"), client("audit-intruder"), client("audit-rogue")],
        });
        Ok(cp)
    }

    /// Where the API server sends its audit webhook, for a control plane started with
    /// [`ControlPlane::start_audited`].
    pub fn audit_sink(&self) -> Option<&AuditSink> {
        self.audit_sink.as_ref()
    }

    /// The API server's audit log (one JSON event per line, `Metadata` level).
    pub fn audit_log(&self) -> PathBuf {
        self.dir.join("audit.log")
    }

    /// Waits for every process of this control plane to end, returning when the first one does.
    pub fn wait(&mut self) -> Result<()> {
        self.children.wait_any()
    }

    /// Kills kube-apiserver and starts it again on the same port and data, returning when it is
    /// ready (for tests of a restart in the middle of a run).
    pub fn restart_apiserver(&'static self) -> Result<()> {
        // Started from a thread that never ends, like the first one (see `start_kept`): the
        // process would otherwise die with the calling test's thread.
        start_kept(move || self.children.restart("kube-apiserver")).map_err(anyhow::Error::msg)?;
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            let out = self.kubectl(&["get", "--raw", "/readyz"])?;
            if out.status.success() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        bail!("kube-apiserver not ready after a restart")
    }

    /// Freezes kube-apiserver (SIGSTOP): connections hang, as with an overloaded server.
    pub fn pause_apiserver(&self) -> Result<()> {
        self.children.signal("kube-apiserver", libc::SIGSTOP)
    }

    /// Lets a frozen kube-apiserver run again (SIGCONT).
    pub fn resume_apiserver(&self) -> Result<()> {
        self.children.signal("kube-apiserver", libc::SIGCONT)
    }

    /// Stops every process (SIGTERM, then SIGKILL) and reaps them.
    pub fn stop(&self) {
        self.children.stop();
    }
}

/// The audit webhook an API server started by [`ControlPlane::start_audited`] posts to: the
/// loopback port, the bearer token it sends, a serving certificate (for 127.0.0.1) and key the
/// endpoint may use, the CA that signed them and the client certificates.
pub struct AuditSink {
    pub port: u16,
    pub token: String,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub ca: PathBuf,
    /// `(cert, key)`: named `audited` by the CA, `intruder` by the CA, `audited` by a CA
    /// nobody trusts.
    pub clients: [(PathBuf, PathBuf); 3],
}

const AUDIT_POLICY: &str =
    "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n";

fn kubeconfig_yaml(server: &str, pki: &certs::Pki) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: {server}\n    certificate-authority: {ca}\nusers:\n- name: admin\n  user:\n    client-certificate: {cert}\n    client-key: {key}\ncontexts:\n- name: local\n  context:\n    cluster: local\n    user: admin\n    namespace: default\ncurrent-context: local\n",
        ca = pki.ca_cert.display(),
        cert = pki.admin_cert.display(),
        key = pki.admin_key.display(),
    )
}

static SHARED: OnceLock<Result<ControlPlane, String>> = OnceLock::new();
static DISTURBABLE: OnceLock<Result<ControlPlane, String>> = OnceLock::new();
static WITHOUT_POLICIES: OnceLock<Result<ControlPlane, String>> = OnceLock::new();
static AUDITED: OnceLock<Result<ControlPlane, String>> = OnceLock::new();
static SHARED_PG: OnceLock<Result<Postgres, String>> = OnceLock::new();

/// Runs `start` on a thread that never ends, so that the processes it starts (whose
/// parent-death signal is tied to the starting thread) live until the test process exits.
fn start_kept<T: Send + 'static>(start: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("test-services".into())
        .spawn(move || {
            tx.send(start().map_err(|e| format!("{e:#}"))).ok();
            loop {
                std::thread::park();
            }
        })
        .expect("spawning a service thread");
    rx.recv().unwrap_or_else(|_| Err("service thread died".into()))
}

/// The control plane shared by every test of this test binary, started on first use and stopped
/// when the process exits. Panics with a message naming the setup script when the tools are
/// missing: tests never pass without a cluster.
pub fn shared() -> &'static ControlPlane {
    started(&SHARED, &[])
}

/// A second control plane, for the tests that restart or freeze its API server (they would
/// disturb every other test on the shared one). Started on first use.
pub fn disturbable() -> &'static ControlPlane {
    started(&DISTURBABLE, &[])
}

/// A third control plane, whose API server does not serve ValidatingAdmissionPolicy (as before
/// Kubernetes 1.30, or with the API turned off). Started on first use.
pub fn without_admission_policies() -> &'static ControlPlane {
    started(
        &WITHOUT_POLICIES,
        &[
            "--runtime-config=admissionregistration.k8s.io/v1/validatingadmissionpolicies=false,admissionregistration.k8s.io/v1/validatingadmissionpolicybindings=false",
            // Its admission plugin would wait for the API forever (not ready to handle requests).
            "--disable-admission-plugins=ValidatingAdmissionPolicy",
        ],
    )
}

/// A fourth control plane, whose API server sends its audit to a webhook on loopback
/// ([`ControlPlane::audit_sink`]). Started on first use.
pub fn audited() -> &'static ControlPlane {
    started_by(&AUDITED, ControlPlane::start_audited)
}

fn started(
    cell: &'static OnceLock<Result<ControlPlane, String>>,
    flags: &'static [&'static str],
) -> &'static ControlPlane {
    started_by(cell, move |tools, dir| ControlPlane::start_with(tools, dir, flags))
}

fn started_by(
    cell: &'static OnceLock<Result<ControlPlane, String>>,
    start: impl FnOnce(Tools, &Path) -> Result<ControlPlane> + Send + 'static,
) -> &'static ControlPlane {
    let cp = cell.get_or_init(|| {
        let result = start_kept(move || {
            let tools = Tools::locate()?;
            let dir = tempfile::Builder::new().prefix("helm-drift-cp-").tempdir()?.keep();
            start(tools, &dir)
        });
        if result.is_ok() {
            // SAFETY: registering a plain extern "C" function with the C runtime.
            unsafe { libc::atexit(stop_control_planes) };
        }
        result
    });
    match cp {
        Ok(cp) => cp,
        Err(e) => panic!("could not start the local control plane: {e}"),
    }
}

/// The PostgreSQL server shared by every test of this test binary (for Helm's sql driver).
pub fn postgres() -> &'static Postgres {
    let pg = SHARED_PG.get_or_init(|| {
        let result = start_kept(|| {
            let dir = tempfile::Builder::new().prefix("helm-drift-pg-").tempdir()?.keep();
            Postgres::start(&dir)
        });
        if result.is_ok() {
            // SAFETY: as above.
            unsafe { libc::atexit(stop_postgres) };
        }
        result
    });
    match pg {
        Ok(pg) => pg,
        Err(e) => panic!("could not start PostgreSQL: {e}"),
    }
}

extern "C" fn stop_control_planes() {
    for cell in [&SHARED, &DISTURBABLE, &WITHOUT_POLICIES, &AUDITED] {
        if let Some(Ok(cp)) = cell.get() {
            cp.stop();
            std::fs::remove_dir_all(&cp.dir).ok();
        }
    }
}

extern "C" fn stop_postgres() {
    if let Some(Ok(pg)) = SHARED_PG.get() {
        pg.stop();
    }
}
