//! A release as each Helm major installs it, every line of the README's install section played
//! on loopback: Helm 4 takes the signed package (`drift-<version>.tgz` and its `.prov`, made by
//! `scripts/package-helm4.sh` with a GnuPG key the test makes, as the release workflow does) from
//! an OCI registry (pushed by `scripts/push-plugin.sh`), a URL and a file, with its default
//! verification, and the repository (git) unverified; what the keyring does not vouch for is
//! refused with nothing installed; Helm 3.12, 3.18 and 3.22 take the legacy plugin from the
//! repository (and update it), a release archive URL and an offline archive, and refuse the
//! Helm 4 package.

use crate::support::{Done, Env, FileServer, Helm, packaged_binary, repo_root};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use testcluster::OciRegistry;

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The uid of the key the tests sign releases with.
const SIGNER: &str = "helm-drift test <release@helm-drift.invalid>";

/// This machine's platform as the archives name it (linux-amd64...).
fn platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{}-{arch}", std::env::consts::OS)
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A GnuPG key made for one test (RSA, passphrase-protected like the release key): the secret
/// keyring `helm plugin package --sign` reads, the passphrase file, and the public key users
/// give `helm plugin install --keyring`.
struct SigningKey {
    home: tempfile::TempDir,
    uid: String,
}

impl SigningKey {
    fn new(uid: &str) -> SigningKey {
        let home = tempfile::tempdir().unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::create_dir(home.path().join("gnupg")).unwrap();
        std::fs::set_permissions(home.path().join("gnupg"), std::fs::Permissions::from_mode(0o700)).unwrap();
        let key = SigningKey { home, uid: uid.to_string() };
        std::fs::write(key.passphrase(), "test passphrase").unwrap();
        let pass = key.passphrase();
        let secret = ["--batch", "--pinentry-mode", "loopback", "--passphrase-file", pass.to_str().unwrap()];
        key.gpg(&[&secret[..], &["--quick-generate-key", uid, "rsa2048", "sign", "never"]].concat());
        let ring = key.gpg(&[&secret[..], &["--export-secret-keys"]].concat());
        std::fs::write(key.secret_keyring(), ring).unwrap();
        std::fs::write(key.public(), key.gpg(&["--armor", "--export"])).unwrap();
        key
    }

    fn gpg(&self, args: &[&str]) -> Vec<u8> {
        let out =
            Command::new("gpg").env("GNUPGHOME", self.gnupg_home()).args(args).output().unwrap_or_else(|e| {
                panic!("cannot run gpg ({e}): scripts/test.sh installs GnuPG (apt-get install gnupg)")
            });
        assert!(out.status.success(), "gpg {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    /// GnuPG's own directory; the files Helm reads are beside it (gpg would migrate a
    /// secring.gpg inside it).
    fn gnupg_home(&self) -> PathBuf {
        self.home.path().join("gnupg")
    }

    fn passphrase(&self) -> PathBuf {
        self.home.path().join("passphrase")
    }

    fn secret_keyring(&self) -> PathBuf {
        self.home.path().join("secring.gpg")
    }

    /// The armored public key, as the release publishes it.
    fn public(&self) -> PathBuf {
        self.home.path().join("public.asc")
    }
}

impl Drop for SigningKey {
    fn drop(&mut self) {
        let _ = Command::new("gpgconf").env("GNUPGHOME", self.gnupg_home()).args(["--kill", "gpg-agent"]).output();
    }
}

/// A release's files as the workflow publishes them, under `<root>/v<version>/`: the Helm 3
/// archive for this platform and its checksums (`scripts/package.sh`), the Helm 4 package with
/// its `.prov` (`scripts/package-helm4.sh`, signed by `key`, or unsigned), the public key.
struct Release {
    root: tempfile::TempDir,
}

impl Release {
    fn build(env: &Env, key: Option<&SigningKey>) -> Release {
        let release = Release { root: tempfile::tempdir().unwrap() };
        let dist = release.dist();
        run(Command::new("bash")
            .arg(repo_root().join("scripts/package.sh"))
            .arg("--binary")
            .arg(packaged_binary())
            .arg("--out")
            .arg(&dist));
        release.package_helm4(env, key, &dist);
        if let Some(key) = key {
            std::fs::copy(key.public(), dist.join("helm-drift-signing-key.asc")).unwrap();
        }
        release
    }

    /// `scripts/package-helm4.sh` into `out`, with this machine's binary.
    fn package_helm4(&self, env: &Env, key: Option<&SigningKey>, out: &Path) -> PathBuf {
        let mut cmd = Command::new("bash");
        cmd.arg(repo_root().join("scripts/package-helm4.sh"))
            .env("HELM", env.helm_bin(Helm::V4))
            .arg("--out")
            .arg(out)
            .arg("--binary")
            .arg(format!("{}={}", platform(), packaged_binary().display()));
        match key {
            Some(key) => cmd
                .args(["--key", &key.uid, "--keyring"])
                .arg(key.secret_keyring())
                .arg("--passphrase-file")
                .arg(key.passphrase()),
            None => cmd.arg("--unsigned"),
        };
        PathBuf::from(run(&mut cmd))
    }

    fn dist(&self) -> PathBuf {
        self.root.path().join(format!("v{VERSION}"))
    }

    fn package(&self) -> PathBuf {
        self.dist().join(format!("drift-{VERSION}.tgz"))
    }

    fn keyring(&self) -> PathBuf {
        self.dist().join("helm-drift-signing-key.asc")
    }

    /// A copy of the Helm 4 package under `<root>/<name>/` (served as `/<name>/drift-V.tgz`),
    /// with its `.prov` if `prov`.
    fn copy_package(&self, name: &str, prov: bool) -> PathBuf {
        let dir = self.root.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let to = dir.join(format!("drift-{VERSION}.tgz"));
        std::fs::copy(self.package(), &to).unwrap();
        if prov {
            std::fs::copy(self.package().with_extension("tgz.prov"), to.with_extension("tgz.prov")).unwrap();
        }
        to
    }
}

/// `scripts/push-plugin.sh PACKAGE REFERENCE --plain-http`, with the oras of the tools directory.
fn push(env: &Env, package: &Path, reference: &str) {
    run(Command::new("bash")
        .arg(repo_root().join("scripts/push-plugin.sh"))
        .arg(package)
        .args([reference, "--plain-http"])
        .env("ORAS", env.cp.tools().path("oras")));
}

fn sha256(path: &Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The plugin's files as the repository holds them, committed to a git repository named
/// `helm-drift` (what `helm plugin install https://github.com/helm-drift/helm-drift` clones).
fn git_repository(env: &Env, name: &str) -> String {
    let repo = env.home().join(name).join("helm-drift");
    std::fs::create_dir_all(&repo).unwrap();
    for f in ["plugin.yaml", "install-binary.sh", "plugin.complete", "completion.yaml"] {
        std::fs::copy(repo_root().join(f), repo.join(f)).unwrap();
    }
    let git = |args: &[&str]| {
        run(Command::new("git")
            .args(["-c", "user.name=test", "-c", "user.email=test@helm-drift.invalid"])
            .args(args)
            .current_dir(&repo))
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "the plugin"]);
    // Tagged as a release is, so that `--version vX.Y.Z` picks it as the install page says.
    git(&["tag", &format!("v{VERSION}")]);
    format!("file://{}", repo.display())
}

/// `helm plugin list` lacks drift and nothing of it is left in the plugins directory.
fn nothing_installed(env: &Env, helm: &str, why: &str) {
    let list = env.helm_tool(helm, &["plugin", "list"]).success().stdout();
    assert!(!list.contains("drift"), "{why}: the plugin is listed\n{list}");
    let plugins = env.home().join("data/plugins");
    let left: Vec<String> = std::fs::read_dir(&plugins)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("drift"))
        .collect();
    assert!(left.is_empty(), "{why}: left behind in {}: {left:?}", plugins.display());
}

/// The installed plugin runs through `helm` and reports this version.
fn runs(env: &Env, helm: &str) {
    let version = env.helm_tool(helm, &["drift", "version"]).success().stdout();
    assert!(version.starts_with(&format!("helm-drift {VERSION} (commit ")), "{helm}: {version}");
    env.helm_tool(helm, &["drift", "check", "web"]).success().stdout_has("web: in sync (4 objects)");
}

/// Helm 4 with its default verification (no `--verify` flag anywhere): the signed package from
/// OCI, from a URL and from a file beside its `.prov` (air-gapped), each verified against the
/// public key the release publishes, then run and uninstalled; the repository with
/// `--verify=false` (git cannot be verified), then `helm plugin update`.
#[test]
fn helm4_installs_the_signed_package_from_oci_a_url_and_a_file() {
    let env = Env::new("dist-h4");
    env.install(Helm::V4, "web", "basic", &[]);
    let key = SigningKey::new(SIGNER);
    let release = Release::build(&env, Some(&key));
    let registry = OciRegistry::start(env.cp.tools(), &env.home().join("registry")).unwrap();
    let reference = format!("{}/helm-plugins/drift:{VERSION}", registry.host());
    push(&env, &release.package(), &reference);
    let server = FileServer::start(release.root.path().to_path_buf());
    let keyring = release.keyring();
    let hash = sha256(&release.package());

    let oci = format!("oci://{reference}");
    let url = format!("{}/v{VERSION}/drift-{VERSION}.tgz", server.url);
    let file = release.package();
    let sources: [(&str, &str, &[&str]); 3] =
        [("OCI", &oci, &["--plain-http"]), ("URL", &url, &[]), ("file", file.to_str().unwrap(), &[])];
    for (how, source, extra) in sources {
        let mut args = vec!["plugin", "install", source, "--keyring", keyring.to_str().unwrap()];
        args.extend_from_slice(extra);
        let done = env.helm(Helm::V4, &args).success();
        done.says("Verifying plugin signature...")
            .says(&format!("Signed by: {SIGNER}"))
            .says(&format!("Plugin Hash Verified: sha256:{hash}"))
            .says(&format!("helm-drift: using the bundled binary for {}", platform()))
            .says("Installed plugin: drift");
        let list = env.helm(Helm::V4, &["plugin", "list"]).success().stdout();
        assert!(list.lines().any(|l| l.starts_with("drift") && l.contains(VERSION)), "{how}: {list}");
        runs(&env, "helm4");
        // Helm keeps the package and its .prov beside the plugin, to be verified again later
        // (4.3 verifies tarballs only, not the plugin's directory).
        let kept = env.home().join(format!("data/plugins/drift-{VERSION}.tgz"));
        env.helm(Helm::V4, &["plugin", "verify", kept.to_str().unwrap(), "--keyring", keyring.to_str().unwrap()])
            .success()
            .says(&format!("Signed by: {SIGNER}"));
        env.helm(Helm::V4, &["plugin", "uninstall", "drift"]).success();
        nothing_installed(&env, "helm4", how);
    }

    // The repository: Helm 4 cannot verify git, so it says so unless told --verify=false; the
    // hook then downloads the release archive and checks its SHA-256.
    let git = git_repository(&env, "h4");
    let refused = env.helm(Helm::V4, &["plugin", "install", &git]).output();
    assert_ne!(refused.out.status.code(), Some(0), "{}", refused.dump());
    refused.says("plugin source does not support verification. Use --verify=false");
    env.helm(Helm::V4, &["plugin", "install", &git, "--verify=false"])
        .env("HELM_DRIFT_BASE_URL", &server.url)
        .success()
        .says(&format!("downloading {}/v{VERSION}/helm-drift-{}.tgz", server.url, platform()));
    runs(&env, "helm4");
    env.helm(Helm::V4, &["plugin", "update", "drift"])
        .env("HELM_DRIFT_BASE_URL", &server.url)
        .success()
        .says("downloading");
    runs(&env, "helm4");
    // The install page names the version: pinned to the release's tag.
    env.helm(Helm::V4, &["plugin", "uninstall", "drift"]).success();
    let pinned = git_repository(&env, "h4-pinned");
    env.helm(Helm::V4, &["plugin", "install", &pinned, "--verify=false", "--version", &format!("v{VERSION}")])
        .env("HELM_DRIFT_BASE_URL", &server.url)
        .success();
    runs(&env, "helm4");
}

/// What the keyring does not vouch for is refused before anything is written: a key not in the
/// keyring (over OCI), a package signed by someone else (pushed to the same registry), a tampered
/// package, a tampered `.prov`, a package without `.prov`.
#[test]
fn helm4_refuses_what_the_keyring_does_not_vouch_for() {
    let env = Env::new("dist-h4-refuse");
    let key = SigningKey::new(SIGNER);
    let stranger = SigningKey::new("someone else <someone@helm-drift.invalid>");
    let release = Release::build(&env, Some(&key));
    let registry = OciRegistry::start(env.cp.tools(), &env.home().join("registry")).unwrap();
    let reference = format!("{}/helm-plugins/drift:{VERSION}", registry.host());
    push(&env, &release.package(), &reference);
    let forged_dir = tempfile::tempdir().unwrap();
    let forged = release.package_helm4(&env, Some(&stranger), forged_dir.path());
    let forged_reference = format!("{}/helm-plugins/drift:forged", registry.host());
    push(&env, &forged, &forged_reference);

    let tampered = release.copy_package("tampered", true);
    let mut bytes = std::fs::read(&tampered).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&tampered, bytes).unwrap();
    let bad_prov = release.copy_package("bad-prov", true).with_extension("tgz.prov");
    let text = std::fs::read_to_string(&bad_prov).unwrap();
    let hash = sha256(&release.package());
    assert!(text.contains(&hash), "the .prov names the package's hash:\n{text}");
    let other: String = hash.chars().map(|c| if c == '0' { '1' } else { '0' }).collect();
    std::fs::write(&bad_prov, text.replace(&hash, &other)).unwrap();
    release.copy_package("no-prov", false);
    let server = FileServer::start(release.root.path().to_path_buf());

    let keyring = release.keyring();
    let strangers = stranger.public();
    let url = |dir: &str| format!("{}/{dir}/drift-{VERSION}.tgz", server.url);
    let cases: [(&str, String, &Path, &str); 5] = [
        ("a key not in the keyring", format!("oci://{reference}"), &strangers, "signature made by unknown entity"),
        ("signed by someone else", format!("oci://{forged_reference}"), &keyring, "signature made by unknown entity"),
        ("a tampered package", url("tampered"), &keyring, "sha256 sum does not match"),
        ("a tampered .prov", url("bad-prov"), &keyring, "plugin verification failed"),
        ("no .prov", url("no-prov"), &keyring, "no provenance file (.prov) found"),
    ];
    for (why, source, ring, error) in cases {
        let mut args = vec!["plugin", "install", source.as_str(), "--keyring", ring.to_str().unwrap()];
        if source.starts_with("oci://") {
            args.push("--plain-http");
        }
        let done: Done = env.helm(Helm::V4, &args).output();
        assert_ne!(done.out.status.code(), Some(0), "{why}: installed\n{}", done.dump());
        done.says(error);
        assert!(!done.dump().contains("Installed plugin"), "{why}\n{}", done.dump());
        nothing_installed(&env, "helm4", why);
    }
    // The genuine package from the same registry, with the right key, still installs.
    let genuine = format!("oci://{reference}");
    env.helm(Helm::V4, &["plugin", "install", &genuine, "--plain-http", "--keyring", keyring.to_str().unwrap()])
        .success()
        .says("Installed plugin: drift");
}

/// Every supported Helm 3 (the oldest, 3.12; 3.18, the first with `platformHooks`; and the
/// suite's 3.22) installs the legacy plugin from the repository (the hook downloads the release
/// archive and checks its SHA-256) and updates it, from a release archive URL (again after an
/// uninstall), and offline from an archive on disk; and refuses the Helm 4 package (its plugin.yaml is Helm 4's format).
#[test]
fn helm3_releases_install_the_legacy_plugin() {
    let env = Env::new("dist-h3");
    env.install(Helm::V3, "web", "basic", &[]);
    let release = Release::build(&env, None);
    let server = FileServer::start(release.root.path().to_path_buf());
    let archive = format!("helm-drift-{}.tgz", platform());
    for helm in ["helm3.12", "helm3.18", "helm3"] {
        let git = git_repository(&env, helm);
        env.helm_tool(helm, &["plugin", "install", &git])
            .env("HELM_DRIFT_BASE_URL", &server.url)
            .success()
            .says(&format!("downloading {}/v{VERSION}/{archive}", server.url));
        runs(&env, helm);
        env.helm_tool(helm, &["plugin", "update", "drift"])
            .env("HELM_DRIFT_BASE_URL", &server.url)
            .success()
            .says(&format!("downloading {}/v{VERSION}/{archive}", server.url));
        runs(&env, helm);
        env.helm_tool(helm, &["plugin", "uninstall", "drift"]).success();
        // Pinned to a release's tag, as the install page says.
        let pinned = git_repository(&env, &format!("{helm}-pinned"));
        env.helm_tool(helm, &["plugin", "install", &pinned, "--version", &format!("v{VERSION}")])
            .env("HELM_DRIFT_BASE_URL", &server.url)
            .success();
        runs(&env, helm);
        env.helm_tool(helm, &["plugin", "uninstall", "drift"]).success();

        // Twice: Helm 3 extracts into a cache directory it never empties, and an archive with a
        // directory entry then fails ("mkdir .../bin: file exists").
        let url = format!("{}/v{VERSION}/{archive}", server.url);
        for _ in 0..2 {
            env.helm_tool(helm, &["plugin", "install", &url]).success().says("Installed plugin: drift");
            runs(&env, helm);
            env.helm_tool(helm, &["plugin", "uninstall", "drift"]).success();
        }

        // Offline: the archive and the checksums file copied beside a checkout.
        let checkout = git.trim_start_matches("file://");
        env.helm_tool(helm, &["plugin", "install", checkout])
            .env("HELM_DRIFT_ARCHIVE", release.dist().join(&archive))
            .env("HELM_DRIFT_CHECKSUMS", release.dist().join("helm-drift-checksums.txt"))
            .env("HELM_DRIFT_BASE_URL", "http://127.0.0.1:9/unreachable")
            .success()
            .says("helm-drift: installed");
        runs(&env, helm);
        env.helm_tool(helm, &["plugin", "uninstall", "drift"]).success();

        let package = format!("{}/v{VERSION}/drift-{VERSION}.tgz", server.url);
        let refused = env.helm_tool(helm, &["plugin", "install", &package]).output();
        assert_ne!(refused.out.status.code(), Some(0), "{helm} installed the Helm 4 package\n{}", refused.dump());
        nothing_installed(&env, helm, "the Helm 4 package on Helm 3");
    }
}
