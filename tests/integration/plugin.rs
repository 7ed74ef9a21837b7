//! The plugin as users meet it: `helm plugin install` (directory with download, archive URL,
//! tampered archive), `helm plugin list/uninstall`, global flags and exit codes through helm,
//! and shell completion, with real helm v3 and v4.

use crate::support::{Env, FileServer, Helm, packaged_binary, repo_root};
use std::path::{Path, PathBuf};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Builds the release archive (with the test binary) into `<root>/v<version>/` and returns its
/// file name.
fn package(root: &Path) -> String {
    let out = root.join(format!("v{VERSION}"));
    let script = repo_root().join("scripts/package.sh");
    let status = std::process::Command::new("bash")
        .arg(script)
        .arg("--binary")
        .arg(packaged_binary())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let archive = PathBuf::from(String::from_utf8_lossy(&status.stdout).trim().to_string());
    archive.file_name().unwrap().to_string_lossy().into_owned()
}

/// The plugin's source files without a binary (as a git or directory install holds them).
fn source_dir(env: &Env, name: &str) -> PathBuf {
    let dir = env.home().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["plugin.yaml", "install-binary.sh", "plugin.complete", "completion.yaml"] {
        std::fs::copy(repo_root().join(f), dir.join(f)).unwrap();
    }
    dir
}

fn verify_off(helm: Helm) -> Vec<&'static str> {
    if helm == Helm::V4 { vec!["--verify=false"] } else { vec![] }
}

helm_matrix! {
    fn install_downloads_verifies_and_uninstalls(helm: Helm) {
        let served = tempfile::tempdir().unwrap();
        let archive = package(served.path());
        let server = FileServer::start(served.path().to_path_buf());
        let env = Env::new(&format!("plugin-dl-{}", helm.tag()));
        let src = source_dir(&env, "drift");
        env.helm(helm, &["plugin", "install", src.to_str().unwrap()])
            .env("HELM_DRIFT_BASE_URL", &server.url)
            .success()
            .stdout_has(&format!("downloading {}/v{VERSION}/{archive}", server.url));
        assert!(src.join("bin/helm-drift").is_file());
        env.helm(helm, &["plugin", "list"]).success().stdout_has("drift").stdout_has(VERSION);
        let version = env.helm(helm, &["drift", "version"]).success().stdout();
        assert!(version.starts_with(&format!("helm-drift {VERSION} (commit ")), "{version}");
        assert!(version.contains(", built 20"), "the build date: {version}");
        env.helm(helm, &["plugin", "uninstall", "drift"]).success();
        assert!(!env.helm(helm, &["plugin", "list"]).success().stdout().contains("drift"));

        // The archive URL itself installs too (its binary is bundled).
        let url = format!("{}/v{VERSION}/{archive}", server.url);
        let mut args = vec!["plugin", "install", url.as_str()];
        args.extend(verify_off(helm));
        env.helm(helm, &args).success();
        env.helm(helm, &["drift", "version"]).success().stdout_has(VERSION);
    }
}

helm_matrix! {
    fn tampered_archive_fails_with_nothing_installed(helm: Helm) {
        let served = tempfile::tempdir().unwrap();
        let archive = package(served.path());
        let path = served.path().join(format!("v{VERSION}")).join(&archive);
        let mut bytes = std::fs::read(&path).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
        let server = FileServer::start(served.path().to_path_buf());
        let env = Env::new(&format!("plugin-bad-{}", helm.tag()));
        let src = source_dir(&env, "drift");
        let out = env
            .helm(helm, &["plugin", "install", src.to_str().unwrap()])
            .env("HELM_DRIFT_BASE_URL", &server.url)
            .output();
        assert_ne!(out.out.status.code(), Some(0), "{}", out.dump());
        assert!(out.dump().contains(&format!("checksum mismatch for {archive}")), "{}", out.dump());
        assert!(!src.join("bin/helm-drift").exists(), "no binary is left behind");
    }
}

helm_matrix! {
    fn global_flags_exit_codes_and_completion_through_helm(helm: Helm) {
        let env = Env::new(&format!("plugin-flags-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let dir = env.plugin_dir();
        env.helm(helm, &["plugin", "install", dir.to_str().unwrap()]).success();
        let ns = env.ns.clone();
        // Helm's global flags before and after the plugin name reach it as its environment.
        let plain = |args: &[&str]| {
            let mut cmd = env.command(&env.helm_bin(helm));
            cmd.args(args);
            cmd.output().unwrap()
        };
        let code = |args: &[&str]| plain(args).status.code();
        assert_eq!(code(&["-n", &ns, "drift", "check", "web"]), Some(0));
        assert_eq!(code(&["drift", "check", "web", "-n", &ns]), Some(0));
        assert_eq!(code(&["drift", "check", "web"]), Some(1), "the default namespace has no release web");
        let kc = env.home().join("ctx.yaml");
        let real = std::fs::read_to_string(env.cp.kubeconfig()).unwrap();
        std::fs::write(&kc, real.replace("current-context: local", "current-context: nowhere")).unwrap();
        let kc = kc.to_str().unwrap();
        assert_eq!(code(&["drift", "check", "web", "-n", &ns, "--kubeconfig", kc]), Some(1), "no such context");
        assert_eq!(code(&["drift", "check", "web", "-n", &ns, "--kubeconfig", kc, "--kube-context", "local"]), Some(0));
        assert_eq!(code(&["--kube-context", "local", "--kubeconfig", kc, "drift", "check", "web", "-n", &ns]), Some(0));
        env.kubectl(&["delete", "configmap", "web-config"]).success();
        assert_eq!(code(&["drift", "check", "web", "-n", &ns]), Some(2));
        assert_eq!(code(&["drift", "check", "web", "-n", &ns, "--no-such-flag"]), Some(1));
        let help = plain(&["drift", "--help"]);
        assert_eq!(help.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: helm drift"));

        // Completion: sub-commands, flags, and release names from the cluster.
        let complete = |args: &[&str]| {
            let mut all = vec!["__complete"];
            all.extend_from_slice(args);
            String::from_utf8_lossy(&plain(&all).stdout).into_owned()
        };
        let subs = complete(&["drift", ""]);
        for s in ["check", "render", "version"] {
            assert!(subs.lines().any(|l| l.starts_with(s)), "{s} in {subs}");
        }
        let releases = complete(&["-n", &ns, "drift", "check", ""]);
        assert!(releases.lines().any(|l| l == "web"), "{releases}");
        assert!(!subs.contains("__complete"), "the hidden command is not offered\n{subs}");
        let flags = complete(&["drift", "check", "--sel"]);
        assert!(flags.contains("--selector"), "{flags}");
        let formats = complete(&["drift", "check", "web", "-o", ""]);
        for f in ["text", "json", "junit"] {
            assert!(formats.lines().any(|l| l == f), "{f} in {formats}");
        }
        let everywhere = complete(&["drift", "check", "-A", ""]);
        assert!(everywhere.lines().any(|l| l == "web"), "-A completes every namespace's releases\n{everywhere}");
    }
}

/// Runs install-binary.sh by hand with a restricted PATH holding only `tools` (plus fakes).
fn run_script(dir: &Path, tools: &[&str], fakes: &[(&str, &str)], env: &[(&str, &str)]) -> std::process::Output {
    let bin = dir.join("path");
    std::fs::create_dir_all(&bin).unwrap();
    for t in tools {
        let real = which(t);
        std::os::unix::fs::symlink(real, bin.join(t)).ok();
    }
    for (name, body) in fakes {
        let f = bin.join(name);
        std::fs::write(&f, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&f).status().unwrap();
    }
    let mut cmd = std::process::Command::new(which("sh"));
    cmd.arg(dir.join("install-binary.sh")).env_clear().env("PATH", &bin).env("HELM_PLUGIN_DIR", dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn which(tool: &str) -> PathBuf {
    let out = std::process::Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().unwrap();
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

const BASE_TOOLS: &[&str] = &[
    "sh",
    "sed",
    "head",
    "tr",
    "mktemp",
    "rm",
    "mkdir",
    "tar",
    "gzip",
    "find",
    "cp",
    "chmod",
    "mv",
    "awk",
    "cut",
    "sha256sum",
    "basename",
    "dirname",
    "sleep",
];

#[test]
fn install_script_errors_and_offline_install() {
    let work = tempfile::tempdir().unwrap();
    let served = work.path().join("served");
    let archive = package(&served);
    let archive_path = served.join(format!("v{VERSION}")).join(&archive);
    let checksums = served.join(format!("v{VERSION}")).join("helm-drift-checksums.txt");
    let fresh = |name: &str| {
        let d = work.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        for f in ["plugin.yaml", "install-binary.sh"] {
            std::fs::copy(repo_root().join(f), d.join(f)).unwrap();
        }
        d
    };
    let text = |o: &std::process::Output| {
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    };

    let d = fresh("platform");
    let out = run_script(
        &d,
        BASE_TOOLS,
        &[("uname", "if [ \"$1\" = -s ]; then echo Plan9; else echo mips; fi"), ("curl", "exit 1")],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("unsupported operating system \"plan9\""), "{}", text(&out));

    let d = fresh("arch");
    let out = run_script(&d, BASE_TOOLS, &[("uname", "if [ \"$1\" = -s ]; then echo Linux; else echo mips; fi")], &[]);
    assert!(text(&out).contains("unsupported architecture \"mips\""), "{}", text(&out));

    let d = fresh("nocurl");
    let out = run_script(&d, &[BASE_TOOLS, &["uname"]].concat(), &[], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("neither curl nor wget is installed"), "{}", text(&out));
    assert!(!d.join("bin/helm-drift").exists());

    let d = fresh("offline");
    let a = archive_path.to_str().unwrap();
    let c = checksums.to_str().unwrap();
    let out = run_script(&d, BASE_TOOLS, &[], &[("HELM_DRIFT_ARCHIVE", a), ("HELM_DRIFT_CHECKSUMS", c)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let version = std::process::Command::new(d.join("bin/helm-drift")).arg("version").output().unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).contains(VERSION));

    // An archive that does not match its checksums file: refused, nothing installed.
    let d = fresh("mismatch");
    let wrong = work.path().join("wrong-checksums.txt");
    let name = archive_path.file_name().unwrap().to_str().unwrap();
    std::fs::write(&wrong, format!("{}  {name}\n", "0".repeat(64))).unwrap();
    let w = wrong.to_str().unwrap();
    let out = run_script(&d, BASE_TOOLS, &[], &[("HELM_DRIFT_ARCHIVE", a), ("HELM_DRIFT_CHECKSUMS", w)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains(&format!("checksum mismatch for {name}")), "{}", text(&out));
    assert!(text(&out).contains("nothing was installed"), "{}", text(&out));
    assert!(!d.join("bin/helm-drift").exists());

    // HELM_DRIFT_BUILD_FROM_SOURCE=1: `cargo build --release --locked` in the plugin directory
    // (a stand-in cargo that records its arguments and writes the binary), then installed.
    let d = fresh("source");
    std::fs::write(d.join("Cargo.toml"), "[package]\n").unwrap();
    let args_file = work.path().join("cargo-args");
    let cargo = format!(
        "echo \"$@\" > {args}; mkdir -p \"$CARGO_TARGET_DIR/release\"; printf '#!/bin/sh\\necho built\\n' > \"$CARGO_TARGET_DIR/release/helm-drift\"; chmod +x \"$CARGO_TARGET_DIR/release/helm-drift\"",
        args = args_file.display()
    );
    let out = run_script(&d, BASE_TOOLS, &[("cargo", &cargo)], &[("HELM_DRIFT_BUILD_FROM_SOURCE", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&args_file).unwrap().trim(), "build --release --locked --bin helm-drift");
    let built = std::process::Command::new(d.join("bin/helm-drift")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&built.stdout).trim(), "built");

    let d = fresh("skip");
    let out = run_script(&d, BASE_TOOLS, &[], &[("HELM_DRIFT_SKIP_BINARY", "1")]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!d.join("bin").exists());

    // A mirror that fails a few times is retried with backoff.
    let d = fresh("retry");
    let count = work.path().join("count");
    let flaky = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; if [ $n -le 2 ]; then exit 22; fi; while [ $# -gt 2 ]; do shift; done; cp {served}/v{VERSION}/$(basename \"$2\") \"$1\"",
        c = count.display(),
        served = served.display()
    );
    let out = run_script(&d, &[BASE_TOOLS, &["uname", "cat"]].concat(), &[("curl", &flaky)], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("failed (attempt 2); retrying in 2s"), "{}", text(&out));
}

/// Helm 4's plugin format (`packaging/helm4/plugin.yaml`, apiVersion v1): Helm 4 installs a
/// directory with it (the install hook runs through `sh`, keeping the bundled binary), lists the
/// plugin with its version, runs it with Helm's environment, and uninstalls it. Helm 3 refuses
/// the file, which is why the repository root keeps the legacy one.
#[test]
fn helm4_installs_the_v1_plugin_format() {
    let env = Env::new("plugin-v1");
    env.install(Helm::V4, "web", "basic", &[]);
    let dir = env.plugin_dir();
    std::fs::copy(repo_root().join("packaging/helm4/plugin.yaml"), dir.join("plugin.yaml")).unwrap();
    let installed = env.helm(Helm::V4, &["plugin", "install", dir.to_str().unwrap()]).success();
    installed.stdout_has("Installed plugin: drift").stdout_has("helm-drift: using the bundled binary");
    let list = env.helm(Helm::V4, &["plugin", "list"]).success().stdout();
    assert!(list.lines().any(|l| l.starts_with("drift") && l.contains(VERSION) && l.contains("cli/v1")), "{list}");
    env.helm(Helm::V4, &["drift", "check", "web"]).success().stdout_has("web: in sync (4 objects)");
    env.helm(Helm::V4, &["drift", "version"]).success().stdout_has(VERSION);
    env.helm(Helm::V4, &["plugin", "uninstall", "drift"]).success();
    let refused = env.helm(Helm::V3, &["plugin", "install", dir.to_str().unwrap()]).output();
    assert_ne!(refused.out.status.code(), Some(0), "Helm 3 takes no v1 plugin.yaml\n{}", refused.dump());
}
