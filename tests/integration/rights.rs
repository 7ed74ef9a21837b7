//! A record's chart runs with its writer's rights, never the reader's: the chart, values and hooks
//! stored in a release record are written by whoever may write Secrets in its namespace, and a
//! template's `lookup` reads the cluster with the rights of whoever runs helm. Unless the operator
//! trusts the namespace, `check --rerender` and `plan` (when the upgrade takes the record's values)
//! render without the cluster, and `repair --upgrade` runs nothing.

use crate::support::{Env, Helm, chart_path};
use std::path::{Path, PathBuf};

/// The token of the Secret the hostile templates look up, in a namespace of its own.
fn vault(env: &Env) -> (String, String) {
    let vault = format!("{}-vault", env.ns);
    let token = format!("HUNTER2-{}", env.ns);
    env.kubectl(&["create", "namespace", &vault]).success();
    (vault, token)
}

/// A helm that writes each command line it is given to `calls`, then runs the real one: what
/// helm-drift ran, and with which dry run.
fn logging_helm(env: &Env, helm: Helm) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let calls = env.home().join("helm-calls");
    let script = env.home().join("logging-helm");
    let text =
        format!("#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n", calls.display(), env.helm_bin(helm).display());
    std::fs::write(&script, text).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, calls)
}

fn calls(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

helm_matrix! {
    /// A release whose stored chart reads a Secret of another namespace with `lookup` (failing
    /// with its token in the error, and copying it into a ConfigMap, straight and through a value
    /// rendered with `tpl`): installed while that Secret did not exist, then the Secret is made.
    /// Untrusted, `check --rerender` (text and JSON) and `plan` with the record's values render
    /// without the cluster and say so, `repair --upgrade` (dry run or not) runs no helm at all,
    /// and no output holds the token; trusted, the chart reads the cluster as before.
    fn an_untrusted_records_chart_never_reads_the_cluster_as_the_reader(helm: Helm) {
        let env = Env::new(&format!("rights-{}", helm.tag()));
        let ns = env.ns.clone();
        let (vault, token) = vault(&env);
        let at = |name: &str| format!("vault.namespace={vault},vault.name={name}");
        let extra = env.home().join("extra.yaml");
        let tpl = format!("extra: '{{{{ dig \"data\" \"token\" \"\" (lookup \"v1\" \"Secret\" \"{vault}\" \"top-secret\") | b64dec }}}}'\n");
        std::fs::write(&extra, tpl).unwrap();
        env.install(helm, "f", "looker", &["--set", &at("top-secret"), "--set", "fail=true"]);
        env.install(helm, "c", "looker", &["--set", &at("top-secret"), "-f", extra.to_str().unwrap()]);
        assert_eq!(env.get("configmap", "c-copy", "{.data.stolen}"), "", "installed before the Secret existed");
        env.kubectl(&["-n", &vault, "create", "secret", "generic", "top-secret", &format!("--from-literal=token={token}")])
            .success();
        let (bin, log) = logging_helm(&env, helm);
        let run = |args: &[&str], code: i32| {
            let out = env.drift_untrusted(args).env("HELM_BIN", &bin).code(code);
            let all = out.dump();
            assert!(!all.contains(&token) && !all.contains("LEAK"), "{args:?} read the Secret as the reader\n{all}");
            out
        };

        // check --rerender: rendered without the cluster, and said so.
        for release in ["f", "c"] {
            run(&["check", release, "--rerender"], 0).stdout_has(&format!(
                "lookup answered nothing: namespace {ns} is not trusted, and its chart does not read the cluster with your rights; --trust-namespace {ns} lets it)"
            ));
        }
        let json = run(&["check", "c", "--rerender", "-o", "json"], 0).stdout();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["releases"][0]["rerender"]["lookup"], "none", "{json}");
        let dry_runs = calls(&log);
        assert!(dry_runs.lines().all(|l| l.contains("--dry-run=client")), "an untrusted chart ran against the server:\n{dry_runs}");

        // repair --upgrade: refused before any helm call.
        std::fs::remove_file(&log).ok();
        for args in [&["repair", "f", "--upgrade"][..], &["repair", "f", "--upgrade", "--dry-run"]] {
            run(args, 1)
                .stderr_has("not repaired through helm upgrade")
                .stderr_has("nothing was run")
                .stderr_has(&format!("--trust-namespace {ns} trusts its records as your own"));
        }
        assert_eq!(calls(&log), "", "repair --upgrade ran helm on an untrusted record");
        env.helm(helm, &["status", "f"]).success().stdout_has("REVISION: 1");

        // plan with the record's values (none given, or --reuse-values): without the cluster.
        let chart = chart_path("looker");
        let chart = chart.to_str().unwrap();
        for extra in [&[][..], &["--reuse-values"]] {
            let mut args = vec!["plan", "c", chart];
            args.extend_from_slice(extra);
            run(&args, 0).stdout_has(&format!("note: rendered without the cluster (lookup answered nothing): the upgrade takes the values stored in Secret {ns}/sh.helm.release.v1.c.v1"));
        }
        let json = run(&["plan", "c", chart, "--reuse-values", "-o", "json"], 0).stdout();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(doc["notes"][0].as_str().unwrap().starts_with("rendered without the cluster"), "{json}");
        // The user's own values: the user's chart reads the cluster as the user, as helm would.
        let out = env.drift(&["plan", "c", chart, "--set", &at("top-secret")]).env("HELM_BIN", &bin).code(2);
        assert!(!out.stdout().contains("note: rendered without the cluster"), "{}", out.dump());
        out.stdout_has(&format!("~ data.stolen: \"\" -> \"{token}\""));

        // Trusted, the record's chart reads the cluster with the reader's rights, as before.
        let out = env.drift(&["check", "f", "--rerender", "--trust-namespace", &ns]).env("HELM_BIN", &bin).code(1);
        out.stderr_has(&format!("LEAK {token}"));
        let out = env.drift(&["check", "c", "--rerender", "--trust-namespace", &ns]).env("HELM_BIN", &bin).code(2);
        out.stdout_has("rendered now (stored values, lookup answered by the cluster)")
            .stdout_has(&format!("~ data.stolen: \"\" -> \"{token}\""))
            .stdout_has(&format!("~ data.extra: \"\" -> \"{token}\""));
    }
}
