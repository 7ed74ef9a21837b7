//! Integration-test harness: the shared local control plane, a namespace per test, real helm v3
//! and v4 with their own homes, and the helm-drift binary run as users run it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use testcluster::ControlPlane;

/// Which real helm binary to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Helm {
    V3,
    V4,
}

impl Helm {
    fn binary(self) -> &'static str {
        match self {
            Helm::V3 => "helm3",
            Helm::V4 => "helm4",
        }
    }

    pub fn tag(self) -> &'static str {
        match self {
            Helm::V3 => "h3",
            Helm::V4 => "h4",
        }
    }
}

/// Where a person names the namespaces they trust once.
pub const TRUST_ENV: &str = "HELM_DRIFT_TRUST_NAMESPACE";

/// One test's world: its own namespace and helm home on the shared control plane.
pub struct Env {
    pub cp: &'static ControlPlane,
    pub ns: String,
    home: tempfile::TempDir,
}

impl Env {
    /// Creates namespace `name` (unique per test) on the shared control plane, and a fresh helm
    /// home.
    pub fn new(name: &str) -> Env {
        Env::on(testcluster::shared(), name)
    }

    /// Like [`Env::new`], on the control plane whose API server tests may restart or freeze.
    pub fn disturbable(name: &str) -> Env {
        Env::on(testcluster::disturbable(), name)
    }

    /// Like [`Env::new`], on a control plane whose API server does not serve
    /// ValidatingAdmissionPolicy.
    pub fn without_admission_policies(name: &str) -> Env {
        Env::on(testcluster::without_admission_policies(), name)
    }

    /// Like [`Env::new`], on the control plane whose API server sends its audit to a loopback
    /// webhook (`cp.audit_sink()`), which one test at a time serves.
    pub fn audited(name: &str) -> Env {
        Env::on(testcluster::audited(), name)
    }

    fn on(cp: &'static ControlPlane, name: &str) -> Env {
        let env = Env { cp, ns: name.to_string(), home: tempfile::tempdir().expect("temp dir") };
        env.kubectl(&["create", "namespace", name]).success();
        env
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// A command for this test: its own working directory, Helm's homes in the test's home, the
    /// control plane's kubeconfig, and none of the caller's `HELM_*`, `KUBECONFIG` or colour
    /// settings. Every program a test runs starts here.
    pub fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy().to_string();
            if k.starts_with("HELM_") || k == "KUBECONFIG" || k == "NO_COLOR" || k == "CLICOLOR_FORCE" {
                cmd.env_remove(k);
            }
        }
        let h = self.home.path();
        // Its own working directory: a stray ./.helm-drift.yaml or ./.helm-drift-baseline.yaml
        // in the checkout must not change a verdict.
        cmd.current_dir(h);
        cmd.env("KUBECONFIG", self.cp.kubeconfig())
            .env("HELM_CONFIG_HOME", h.join("config"))
            .env("HELM_CACHE_HOME", h.join("cache"))
            .env("HELM_DATA_HOME", h.join("data"));
        // Plugins live in the default $HELM_DATA_HOME/plugins: Helm 4.3 installs there even when
        // HELM_PLUGINS points elsewhere (it only reads HELM_PLUGINS when loading).
        cmd
    }

    /// The path of a tool of the tools directory (scripts/tools.sh builds them).
    pub fn tool(&self, name: &str) -> PathBuf {
        self.cp.tools().path(name)
    }

    /// The path of the real helm binary (v3 or v4), for `HELM_BIN`.
    pub fn helm_bin(&self, helm: Helm) -> PathBuf {
        self.cp.tools().path(helm.binary())
    }

    /// `helm` (v3 or v4) in this test's namespace.
    pub fn helm(&self, helm: Helm, args: &[&str]) -> Run {
        self.helm_tool(helm.binary(), args)
    }

    /// A helm binary of the tools directory by name (`helm3.12`, `helm3.18`, `helm4`...), in
    /// this test's namespace.
    pub fn helm_tool(&self, name: &str, args: &[&str]) -> Run {
        let mut cmd = self.command(&self.cp.tools().path(name));
        cmd.arg("-n").arg(&self.ns).args(args);
        Run::new(cmd)
    }

    /// One field of an object in this test's namespace: `get("configmap", "web-config",
    /// "{.data.greeting}")`.
    pub fn get(&self, kind: &str, name: &str, jsonpath: &str) -> String {
        self.kubectl(&["get", kind, name, "-o", &format!("jsonpath={jsonpath}")]).success().stdout()
    }

    /// `kubectl` against the control plane, in this test's namespace.
    pub fn kubectl(&self, args: &[&str]) -> Run {
        let mut cmd = self.command(&self.cp.tools().path("kubectl"));
        cmd.arg("-n").arg(&self.ns).args(args);
        Run::new(cmd)
    }

    /// The helm-drift binary, given Helm's plugin environment for this namespace. A `repair`
    /// runs as the operator who installed the test's releases, who trusts this namespace once
    /// (`HELM_DRIFT_TRUST_NAMESPACE`, as the repair page says); a test of an untrusted record
    /// takes it away ([`Env::drift_untrusted`]).
    pub fn drift(&self, args: &[&str]) -> Run {
        let mut cmd = self.command(Path::new(env!("CARGO_BIN_EXE_helm-drift")));
        cmd.env("HELM_NAMESPACE", &self.ns).args(args);
        if args.first() == Some(&"repair") {
            cmd.env(TRUST_ENV, &self.ns);
        }
        Run::new(cmd)
    }

    /// [`Env::drift`] by a person who trusts no namespace.
    pub fn drift_untrusted(&self, args: &[&str]) -> Run {
        self.drift(args).env_remove(TRUST_ENV)
    }

    /// `kubectl patch RESOURCE NAME --type merge -p PATCH` in this namespace (an edit by hand).
    pub fn merge_patch(&self, resource: &str, name: &str, patch: &str) {
        self.kubectl(&["patch", resource, name, "--type", "merge", "-p", patch]).success();
    }

    /// Installs tests/charts/<chart> as `release` with the given helm.
    pub fn install(&self, helm: Helm, release: &str, chart: &str, extra: &[&str]) {
        let chart = chart_path(chart);
        let mut args = vec!["install", release, chart.to_str().unwrap()];
        args.extend_from_slice(extra);
        self.helm(helm, &args).success();
    }

    /// `helm upgrade RELEASE tests/charts/<chart>` with the given helm, same values.
    pub fn install_again(&self, helm: Helm, release: &str, chart: &str) {
        let chart = chart_path(chart);
        self.helm(helm, &["upgrade", release, chart.to_str().unwrap(), "--reuse-values"]).success();
    }

    /// A namespace with tests/charts/full installed as release `app` (one of its objects lives in
    /// a second namespace, `<ns>-other`).
    pub fn with_full_chart(helm: Helm, ns: &str) -> Env {
        Env::new(ns).full_chart(helm)
    }

    /// This namespace with tests/charts/full installed as release `app` (see
    /// [`Env::with_full_chart`]).
    pub fn full_chart(self, helm: Helm) -> Env {
        let other = format!("{}-other", self.ns);
        self.kubectl(&["create", "namespace", &other]).success();
        self.install(helm, "app", "full", &["--set", &format!("otherNamespace={other}")]);
        self
    }

    /// A plugin directory holding plugin.yaml, install-binary.sh and the built binary.
    pub fn plugin_dir(&self) -> PathBuf {
        let dir = self.home.path().join("plugin-src");
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        let root = repo_root();
        for f in ["plugin.yaml", "install-binary.sh", "plugin.complete", "completion.yaml"] {
            std::fs::copy(root.join(f), dir.join(f)).unwrap();
        }
        std::fs::copy(packaged_binary(), dir.join("bin/helm-drift")).unwrap();
        dir
    }
}

/// The text with what changes from run to run made neutral: the ages of changes (`, 12 s ago)`
/// and `(12 s ago)` become `<age>`, they depend on the clock), the API server's version (the
/// suite runs on each supported one) and random values a chart renders.
pub fn neutral(text: &str) -> String {
    let ages = regex::Regex::new(r"([(,] ?)\d+ (s|min|h|days) ago\)").expect("a valid regex");
    let text = ages.replace_all(text, "$1<age>)");
    let version = regex::Regex::new(r"Kubernetes v\d+\.\d+\.\d+").expect("a valid regex");
    let text = version.replace_all(&text, "Kubernetes <version>");
    // A chart's `randAlphaNum 16`, as the rendered test chart writes it.
    let random = regex::Regex::new(r#""[A-Za-z0-9]{16}""#).expect("a valid regex");
    random.replace_all(&text, "\"<random>\"").into_owned()
}

/// Exit code, stdout and stderr together, as users see them (the API server's address and the
/// checkout's path made neutral, ages and random values aside).
pub fn transcript(env: &Env, args: &[&str]) -> String {
    transcript_and_run(env, args).0
}

/// [`transcript`] and the run it was made of, for a test that asserts on the same run.
fn transcript_and_run(env: &Env, args: &[&str]) -> (String, Done) {
    // Helm 4 for what runs helm (`plan`, `render`); the others never run it.
    let out = env.drift(args).env("HELM_BIN", env.helm_bin(Helm::V4)).output();
    let text = format!(
        "$ helm drift {}\nexit: {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        out.out.status.code().unwrap_or(-1),
        out.stdout(),
        out.stderr()
    )
    .replace(env.cp.server(), "https://<api-server>")
    .replace(&repo_root().display().to_string(), ".");
    (neutral(&text), out)
}

/// Records what a page of the README or the book shows as `<!-- snapshot: tests/integration/
/// snapshots/NAME.snap -->` (held by `messages::the_examples_show_the_real_output`): the run's
/// [`transcript`] with the test's namespace shown as `shown` (the namespace a reader has). The
/// run is returned, for the test's own assertions.
pub fn example(name: &str, env: &Env, args: &[&str], shown: &str) -> Done {
    let (text, run) = transcript_and_run(env, args);
    let text = text.replace(&env.ns, shown);
    insta::with_settings!({prepend_module_to_snapshot => false, omit_expression => true}, {
        insta::assert_snapshot!(name, text);
    });
    run
}

/// Polls `f` until it returns true, failing after `limit`.
pub fn eventually(what: &str, limit: Duration, f: impl FnMut() -> bool) {
    eventually_or(what, limit, f, String::new);
}

/// [`eventually`], printing what `context` says when it fails (a watcher's log).
pub fn eventually_or(what: &str, limit: Duration, mut f: impl FnMut() -> bool, context: impl FnOnce() -> String) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("timed out after {limit:?} waiting for {what}\n{}", context());
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn chart_path(chart: &str) -> PathBuf {
    repo_root().join("tests/charts").join(chart)
}

/// A command to run, with fluent assertions on its outcome.
pub struct Run {
    cmd: Command,
}

impl Run {
    pub fn new(cmd: Command) -> Run {
        Run { cmd }
    }

    pub fn env(mut self, k: &str, v: impl AsRef<std::ffi::OsStr>) -> Run {
        self.cmd.env(k, v);
        self
    }

    pub fn current_dir(mut self, dir: &Path) -> Run {
        self.cmd.current_dir(dir);
        self
    }

    pub fn env_remove(mut self, k: &str) -> Run {
        self.cmd.env_remove(k);
        self
    }

    /// The command, to spawn it in the background.
    pub fn into_command(self) -> Command {
        self.cmd
    }

    pub fn output(mut self) -> Done {
        let desc = format!("{:?}", self.cmd);
        let out = self.cmd.output().unwrap_or_else(|e| panic!("cannot run {desc}: {e}"));
        Done { desc, out }
    }

    /// Runs and asserts exit code 0.
    pub fn success(self) -> Done {
        self.code(0)
    }

    /// Runs and asserts the exit code.
    pub fn code(self, code: i32) -> Done {
        let done = self.output();
        assert_eq!(done.out.status.code(), Some(code), "unexpected exit code from {}\n{}", done.desc, done.dump());
        done
    }
}

/// A finished command.
pub struct Done {
    desc: String,
    pub out: Output,
}

impl Done {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    pub fn dump(&self) -> String {
        format!("--- stdout\n{}--- stderr\n{}", self.stdout(), self.stderr())
    }

    pub fn stdout_has(&self, text: &str) -> &Done {
        assert!(self.stdout().contains(text), "stdout of {} lacks {text:?}\n{}", self.desc, self.dump());
        self
    }

    /// Asserts that stdout or stderr holds `text` (Helm prints hook output on either).
    pub fn says(&self, text: &str) -> &Done {
        assert!(self.dump().contains(text), "the output of {} lacks {text:?}\n{}", self.desc, self.dump());
        self
    }

    pub fn stderr_has(&self, text: &str) -> &Done {
        assert!(self.stderr().contains(text), "stderr of {} lacks {text:?}\n{}", self.desc, self.dump());
        self
    }
}

impl Env {
    /// Serves a CRD (its YAML) and waits until it is established; tests that serve the same one
    /// at once race to create it, so a create another test won is applied again.
    pub fn serve_crd(&self, name: &str, yaml: &str) {
        let file = self.home().join(format!("{name}.yaml"));
        std::fs::write(&file, yaml).unwrap();
        let apply = || self.kubectl(&["apply", "-f", file.to_str().unwrap()]).output();
        if !apply().out.status.success() {
            apply().out.status.success().then_some(()).expect("the CRD applied");
        }
        let crd =
            serde_yaml::from_str::<serde_json::Value>(yaml).unwrap()["metadata"]["name"].as_str().unwrap().to_string();
        self.kubectl(&["wait", "--for", "condition=established", &format!("crd/{crd}")]).success();
    }

    /// Applies YAML text in the env's namespace (through a file in the env's home).
    pub fn apply_yaml(&self, name: &str, yaml: &str) {
        let file = self.home().join(format!("{name}.yaml"));
        std::fs::write(&file, yaml).unwrap();
        self.kubectl(&["apply", "-f", file.to_str().unwrap()]).success();
    }

    /// Writes a release record by hand, as anyone who may create Secrets in the namespace could:
    /// Helm's Secret (`sh.helm.release.v1.NAME.v1`, Helm's labels plus `labels`) holding a
    /// deployed revision 1 with this manifest.
    pub fn forge_record(&self, release: &str, manifest: &str, labels: &str) {
        let json = serde_json::json!({"name": release, "namespace": self.ns, "version": 1,
            "info": {"status": "deployed"}, "manifest": manifest});
        self.forge_record_json(release, &json, labels);
    }

    /// Writes a release record by hand from its JSON (see [`Env::forge_record`]).
    pub fn forge_record_json(&self, release: &str, json: &serde_json::Value, labels: &str) {
        use base64::Engine;
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(json.to_string().as_bytes()).unwrap();
        let encoded = base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap());
        self.store_record(release, Some(&encoded), labels);
    }

    /// Writes Helm's Secret for revision 1 of `release` with `encoded` as its `release` key (the
    /// text Helm stores: base64 of gzip of JSON; anything else to test a broken record; `None`
    /// for no key at all), Helm's labels plus `labels` (`team: x, scan: "yes"`).
    pub fn store_record(&self, release: &str, encoded: Option<&str>, labels: &str) {
        use base64::Engine;
        let data = encoded
            .map(|e| format!("data:\n  release: \"{}\"\n", base64::engine::general_purpose::STANDARD.encode(e)))
            .unwrap_or_default();
        let extra = if labels.is_empty() { String::new() } else { format!(", {labels}") };
        let secret = format!(
            "apiVersion: v1\nkind: Secret\ntype: helm.sh/release.v1\nmetadata:\n  name: sh.helm.release.v1.{release}.v1\n  labels: {{owner: helm, name: {release}, status: deployed, version: \"1\"{extra}}}\n{data}"
        );
        self.apply_yaml(&format!("record-{release}"), &secret);
    }
}

/// An address where nothing listens, so that connecting is refused at once: port 1 of the
/// loopback (privileged, never served here), rather than a port found free and let go, which
/// another test may take meanwhile.
pub const REFUSED: &str = "127.0.0.1:1";

/// The read-only identity (get/list/watch on everything), impersonated as user `drift-viewer`.
pub const VIEWER: &str = "drift-viewer";

/// The control planes (by kubeconfig) where the viewer's RBAC is in place (a Mutex, not a Once:
/// a failed setup is tried again by the next test instead of poisoning every later one with an
/// unrelated message).
static VIEWER_RBAC: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

impl Env {
    /// Waits until `user` may `verb` `resource` (`-A` for every namespace), as the API server's
    /// authorizer sees it: RBAC created and used at once can race its cache.
    pub fn wait_until_allowed(&self, user: &str, verb: &str, resource: &str, everywhere: bool) {
        let mut args = vec!["auth", "can-i", verb, resource, "--as", user];
        if everywhere {
            args.push("-A");
        }
        eventually(&format!("{user} may {verb} {resource}"), Duration::from_secs(30), || {
            self.kubectl(&args).output().stdout().trim() == "yes"
        });
    }

    /// Runs helm-drift as the get/list-only user (through Helm's impersonation setting).
    pub fn drift_as_viewer(&self, args: &[&str]) -> Run {
        let mut ready = VIEWER_RBAC.lock().unwrap_or_else(|e| e.into_inner());
        let here = self.cp.kubeconfig().to_path_buf();
        if !ready.contains(&here) {
            let rbac = format!(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {VIEWER}\nrules:\n- apiGroups: [\"*\"]\n  resources: [\"*\"]\n  verbs: [\"get\", \"list\", \"watch\"]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: {VIEWER}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {VIEWER}\nsubjects:\n- kind: User\n  name: {VIEWER}\n  apiGroup: rbac.authorization.k8s.io\n"
            );
            let file = std::env::temp_dir().join(format!("helm-drift-viewer-{}.yaml", std::process::id()));
            std::fs::write(&file, rbac).unwrap();
            self.kubectl(&["apply", "-f", file.to_str().unwrap()]).success();
            self.wait_until_allowed(VIEWER, "list", "secrets", true);
            ready.push(here);
        }
        drop(ready);
        self.drift(args).env("HELM_KUBEASUSER", VIEWER)
    }

    /// The current end of the audit log, to count requests made after it.
    pub fn audit_mark(&self) -> u64 {
        std::fs::metadata(self.cp.audit_log()).map(|m| m.len()).unwrap_or(0)
    }

    /// Audit events (ResponseComplete) logged since `mark` for this test's namespace, after
    /// waiting until a marker request made now shows up in the log.
    pub fn audit_since(&self, mark: u64) -> Vec<serde_json::Value> {
        let marker = format!("audit-marker-{}", self.ns);
        self.kubectl(&["get", "configmap", &marker, "--ignore-not-found"]).success();
        let mut events = Vec::new();
        eventually("the audit marker", Duration::from_secs(10), || {
            let text = std::fs::read(self.cp.audit_log()).unwrap_or_default();
            let new = String::from_utf8_lossy(&text[(mark as usize).min(text.len())..]).into_owned();
            events = new.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()).collect();
            events.iter().any(|e| e.pointer("/objectRef/name").and_then(|n| n.as_str()) == Some(marker.as_str()))
        });
        events
            .into_iter()
            .filter(|e| e.get("stage").and_then(|s| s.as_str()) == Some("ResponseComplete"))
            .filter(|e| e.pointer("/objectRef/namespace").and_then(|n| n.as_str()) == Some(self.ns.as_str()))
            .collect()
    }
}

/// Events of the given verb made by helm-drift (its user agent) as admin (not impersonating).
pub fn by_drift<'a>(events: &'a [serde_json::Value], verb: &str) -> Vec<&'a serde_json::Value> {
    events
        .iter()
        .filter(|e| e.get("verb").and_then(|v| v.as_str()) == Some(verb))
        .filter(|e| e.get("impersonatedUser").is_none())
        .filter(|e| e.get("userAgent").and_then(|v| v.as_str()).is_some_and(|u| u.starts_with("helm-drift")))
        .collect()
}

/// The helm-drift binary without its debug info, made once per run with `strip` (binutils, which
/// the Rust toolchain's linker needs anyway): the packaging tests gzip, sign, hash, serve and
/// extract it many times, and the debug build weighs ~250 MB. The binary itself when there is no
/// `strip`.
pub fn packaged_binary() -> PathBuf {
    static ONCE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let built = PathBuf::from(env!("CARGO_BIN_EXE_helm-drift"));
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("helm-drift-stripped");
        let partial = out.with_extension(format!("partial-{}", std::process::id()));
        let stripped = Command::new("strip").arg("-o").arg(&partial).arg(&built).status();
        if stripped.is_ok_and(|s| s.success()) && std::fs::rename(&partial, &out).is_ok() { out } else { built }
    })
    .clone()
}

/// A loopback HTTP server for files under `root` (GET only), for plugin download tests.
pub struct FileServer {
    pub url: String,
}

impl FileServer {
    pub fn start(root: PathBuf) -> FileServer {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let root = root.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).map(|n| n == 0).unwrap_or(true) || h == "\r\n" {
                            break;
                        }
                    }
                    let mut words = line.split_whitespace();
                    let method = words.next().unwrap_or("GET").to_string();
                    let path = words.next().unwrap_or("/").trim_start_matches('/').to_string();
                    let file = root.join(&path);
                    let mut stream = stream;
                    match std::fs::read(&file).ok().filter(|_| !path.contains("..")) {
                        Some(body) => {
                            let kind = if path.ends_with(".tgz") { "application/gzip" } else { "text/plain" };
                            let head = format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                body.len()
                            );
                            let body: &[u8] = if method == "HEAD" { &[] } else { &body };
                            let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(body));
                        }
                        None => {
                            let _ = stream
                                .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                        }
                    }
                });
            }
        });
        FileServer { url }
    }
}
