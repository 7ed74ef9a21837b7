//! Reading releases exactly as Helm stored them: every storage driver (Secrets, ConfigMaps,
//! PostgreSQL), revision selection after upgrades and failures, hooks, CRDs, and corrupt records.

use crate::support::{Env, Helm};
use base64::Engine;
use std::io::Write;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn gzip(text: &str) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap()
}

helm_matrix! {
    fn configmap_driver(helm: Helm) {
        let env = Env::new(&format!("store-cm-{}", helm.tag()));
        env.helm(helm, &["install", "web", crate::support::chart_path("basic").to_str().unwrap()])
            .env("HELM_DRIVER", "configmap")
            .success();
        let records = env.kubectl(&["get", "configmaps", "-l", "owner=helm,name=web", "-o", "name"]).success().stdout();
        assert_eq!(records.trim(), "configmap/sh.helm.release.v1.web.v1");
        env.drift(&["check", "web"]).env("HELM_DRIVER", "configmap").success().stdout_has("web: in sync (4 objects)");
        env.drift(&["check", "web"])
            .code(1)
            .stderr_has("not found in namespace")
            .stderr_has("(storage driver: secrets)");
        env.kubectl(&["delete", "deployment", "web-web"]).success();
        env.drift(&["check", "web"]).env("HELM_DRIVER", "configmaps").code(2).stdout_has("missing      Deployment");
    }
}

helm_matrix! {
    fn sql_driver_with_postgres(helm: Helm) {
        let pg = testcluster::postgres();
        let db = format!("store_sql_{}", helm.tag());
        let conn = pg.connection_string(&db).unwrap();
        let env = Env::new(&format!("store-sql-{}", helm.tag()));
        let sql =
            |run: crate::support::Run| run.env("HELM_DRIVER", "sql").env("HELM_DRIVER_SQL_CONNECTION_STRING", &conn);
        sql(env.helm(
            helm,
            &["install", "web", crate::support::chart_path("basic").to_str().unwrap(), "--labels", "tier=front"],
        ))
        .success();
        sql(env.drift(&["check", "web"])).success().stdout_has("web: in sync (4 objects)");
        let rows =
            pg.psql(&db, &format!("SELECT key, status FROM releases_v1 WHERE namespace = '{}'", env.ns)).unwrap();
        assert_eq!(rows.trim(), "sh.helm.release.v1.web.v1|deployed");
        env.kubectl(&["delete", "configmap", "web-config"]).success();
        let out = sql(env.drift(&["check", "-A", "-l", "tier=front", "-o", "json"])).code(2).stdout();
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mine = doc["releases"].as_array().unwrap();
        assert_eq!(mine.len(), 1, "the database of this test holds one release: {out}");
        assert_eq!(mine[0]["verdict"], "drifted");
        assert_eq!(mine[0]["record"], format!("SQL row {}/sh.helm.release.v1.web.v1", env.ns));
        // The selector is applied in SQL: nothing matches, which is no pass unless allowed.
        sql(env.drift(&["check", "-A", "-l", "tier=back"])).code(1).stderr_has("no release matched");
        sql(env.drift(&["check", "-A", "-l", "tier=back", "--allow-empty"])).success();
        // Rows whoever may write the table can add: a name longer than Helm takes (the column holds
        // 64) is no record; a body of 40 MB is refused, naming its row, unread.
        let ns = &env.ns;
        let insert = |key: &str, name: &str, body: &str| {
            format!(
                "INSERT INTO releases_v1 (key, type, body, name, namespace, version, status, owner, createdat) \
                 VALUES ('{key}', 'helm.sh/release.v1', {body}, {name}, '{ns}', 1, 'deployed', 'helm', 0)"
            )
        };
        let long = insert("sh.helm.release.v1.long.v1", "repeat('n', 60)", "'x'");
        pg.psql(&db, &long).unwrap();
        pg.psql(&db, &insert("sh.helm.release.v1.huge.v1", "'huge'", "repeat('A', 40000000)")).unwrap();
        let out = sql(env.drift(&["check", "-n", ns, "--all", "-o", "json"])).code(1).stdout();
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let names: Vec<&str> = doc["releases"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
        assert!(!names.iter().any(|n| n.starts_with("nnn")), "a name Helm refuses is no record: {names:?}");
        sql(env.drift(&["check", "huge"])).code(1).stderr_has("holds a body of 40000000 bytes, over the 32 MiB");
        sql(env.drift(&["check", "-A", "-l", "tier=front"])).code(2).stdout_has("web");
        sql(env.drift(&["check", "web"]))
            .env_remove("HELM_DRIVER_SQL_CONNECTION_STRING")
            .code(1)
            .stderr_has("needs HELM_DRIVER_SQL_CONNECTION_STRING");
    }
}

helm_matrix! {
    /// Helm's sql driver over TLS, as libpq reads the connection string: `verify-full` with the
    /// server's CA (the same string Helm itself installs with), `verify-ca` without the host name, a
    /// CA that did not sign the server refused with a clear error.
    fn sql_driver_over_tls(helm: Helm) {
        let pg = testcluster::postgres();
        let env = Env::new(&format!("store-sql-tls-{}", helm.tag()));
        let address = pg.database(&format!("helm_tls_{}", helm.tag())).unwrap();
        let ca = pg.ca_file();
        let with = |extra: &str| format!("{address} {extra}");
        let full = with(&format!("sslmode=verify-full sslrootcert={}", ca.display()));
        let sql = |run: crate::support::Run, conn: &str| {
            run.env("HELM_DRIVER", "sql").env("HELM_DRIVER_SQL_CONNECTION_STRING", conn)
        };
        let chart = crate::support::chart_path("basic");
        sql(env.helm(helm, &["install", "tls", chart.to_str().unwrap()]), &full).success();
        sql(env.drift(&["check", "tls"]), &full).success().stdout_has("tls: in sync (4 objects)");
        sql(env.drift(&["check", "tls"]), &with("sslmode=require")).success();
        // The name checked is `host`, the address dialled `hostaddr`: verify-ca ignores the name.
        let renamed = format!("sslrootcert={} host=db.invalid hostaddr=127.0.0.1", ca.display());
        let renamed = format!("{} {renamed}", address.replace("host=127.0.0.1 ", ""));
        sql(env.drift(&["check", "tls"]), &format!("{renamed} sslmode=verify-ca")).success();
        sql(env.drift(&["check", "tls"]), &format!("{renamed} sslmode=verify-full"))
            .code(1)
            .stderr_has("cannot connect to the SQL storage");
        // Another CA (the control plane's) did not sign the server's certificate.
        let other = env.cp.dir().join("pki/ca.crt");
        sql(env.drift(&["check", "tls"]), &with(&format!("sslmode=verify-full sslrootcert={}", other.display())))
            .code(1)
            .stderr_has("cannot connect to the SQL storage");
        sql(env.drift(&["check", "tls"]), &with("sslmode=verify-full sslrootcert=/nonexistent/ca.pem"))
            .code(1)
            .stderr_has("cannot read sslrootcert /nonexistent/ca.pem");
    }
}

#[test]
fn memory_driver_is_refused() {
    let env = Env::new("store-memory");
    env.drift(&["check", "web"]).env("HELM_DRIVER", "memory").code(1).stderr_has("\"memory\" is not supported");
}

fn revisions(helm: Helm) {
    let env = Env::new(&format!("store-rev-{}", helm.tag()));
    let chart = crate::support::chart_path("basic");
    let chart = chart.to_str().unwrap();
    env.helm(helm, &["install", "web", chart]).success();
    env.helm(helm, &["upgrade", "web", chart, "--set", "greeting=bye"]).success();
    env.helm(helm, &["upgrade", "web", chart, "--reuse-values", "--set", "servicePort=70000"]).code(1);
    let history = env.helm(helm, &["history", "web", "-o", "json"]).success().stdout();
    assert!(history.contains("\"revision\":3") && history.contains("\"status\":\"failed\""), "{history}");

    env.drift(&["check", "web"])
        .success()
        .stdout_has("web: in sync (4 objects) [namespace")
        .stdout_has("revision 2 deployed")
        .stdout_has("note: newest revision 3 is failed; compared with revision 2");
    env.drift(&["check", "web", "--revision", "1"]).code(2).stdout_has(r#"~ data.greeting: "hello" -> "bye""#);
    env.drift(&["check", "web", "--revision", "9"]).code(1).stderr_has("revision 9 of release \"web\" not found");

    env.helm(helm, &["uninstall", "web", "--keep-history"]).success();
    env.drift(&["check", "web"])
        .code(1)
        .stderr_has("has no deployed revision (newest is revision 3, status uninstalled)");
}

helm_matrix! {
    fn revisions_upgrades_and_failures(helm: Helm) {
        revisions(helm);
    }
}

helm_matrix! {
    fn hooks_are_not_expected_and_crds_only_on_request(helm: Helm) {
        let env = Env::new(&format!("store-hooks-{}", helm.tag()));
        env.install(helm, "h", "hooked", &[]);
        env.kubectl(&["get", "configmap", "h-hook"]).success();
        env.kubectl(&["delete", "configmap", "h-hook"]).success();
        env.drift(&["check", "h", "-v"])
            .success()
            .stdout_has("in sync (1 object)")
            .stdout_has("note: 4 hook(s) not checked");

        let other = format!("{}-other", env.ns);
        env.kubectl(&["create", "namespace", &other]).success();
        env.install(helm, "f", "full", &["--set", &format!("otherNamespace={other}")]);
        env.drift(&["check", "f"]).success().stdout_has("in sync (20 objects)");
        let out = env.drift(&["check", "f", "--include-crds", "-v"]).success();
        out.stdout_has("in sync (21 objects)")
            .stdout_has("in sync      CustomResourceDefinition widgets.test.helm-drift.io  (from full/crds/widgets.yaml)");
    }
}

/// Stores `text` as Helm's `release` key of a Secret with Helm's labels.
pub fn store(env: &Env, release: &str, encoded: Option<&str>) {
    env.store_record(release, encoded, "");
}

#[test]
fn corrupt_records_are_errors_naming_the_secret() {
    let env = Env::new("store-corrupt");
    let good = r#"{"name":"ok","namespace":"store-corrupt","version":1,"info":{"status":"deployed","deleted":""},"manifest":"---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok-cm\ndata:\n  a: b\n"}"#;
    let full = gzip(good);
    let cases: Vec<(&str, Option<String>, &str)> = vec![
        ("b64", Some("%%%".into()), "bad base64"),
        ("gz", Some(b64(&full[..full.len() / 2])), "bad gzip data"),
        ("json", Some(b64(&gzip("{\"name\": "))), "bad release JSON"),
        ("fields", Some(b64(&gzip(r#"{"namespace":"x","version":1}"#))), "missing field `name`"),
        ("empty", Some(String::new()), "the record is empty"),
        ("nodata", None, "no `release` key in its data"),
    ];
    for (release, encoded, want) in &cases {
        store(&env, release, encoded.as_deref());
        let out = env.drift(&["check", release]).code(1);
        out.stderr_has(&format!("Secret store-corrupt/sh.helm.release.v1.{release}.v1")).stderr_has(want);
        assert_eq!(out.stderr().lines().count(), 1, "{}", out.dump());
        crate::messages::clean(&out);
    }
    // The good record next to them still checks, alone and in a scan of the namespace.
    store(&env, "ok", Some(&b64(&full)));
    env.kubectl(&["create", "configmap", "ok-cm", "--from-literal=a=b"]).success();
    env.drift(&["check", "ok"])
        .code(2)
        .stdout_has("- metadata.labels: {\"app.kubernetes.io/managed-by\":\"Helm\"} (removed)")
        .stdout_has("ok: 1 of 1 object drifted");
    // A scan that did not name them refuses them: said and counted, not in the exit code.
    let out = env.drift(&["check", "--all", "-o", "json"]).code(2);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(doc["summary"]["releases"], cases.len() + 1);
    assert_eq!(doc["summary"]["refused"], cases.len());
    assert_eq!(doc["summary"]["errors"], 0);
}

helm_matrix! {
    fn render_finds_documents_that_render_differently(helm: Helm) {
        let env = Env::new(&format!("store-render-{}", helm.tag()));
        let bin = env.helm_bin(helm);
        env.install(helm, "r", "rendered", &["--set", "greeting=hi"]);
        let render = |args: &[&str]| env.drift(args).env("HELM_BIN", &bin);
        let out = if helm == Helm::V4 {
            // What the render page shows (the snapshot holds the exit code, 2).
            crate::support::example("example-render", &env, &["render", "r"], "shop")
        } else {
            render(&["render", "r"]).code(2)
        };
        // Values, release name, Capabilities (the cluster's version and APIs) render as stored;
        // a random function and a lookup (empty without a cluster) do not.
        out.stdout_has("r: 2 of 4 documents render differently")
            .stdout_has("changed  rendered/templates/random.yaml")
            .stdout_has("changed  rendered/templates/lookup.yaml")
            .stdout_has(&format!("-  namespace: \"{}\"", env.ns))
            .stdout_has("+  namespace: \"not-found\"");
        assert!(!out.stdout().contains("static.yaml") && !out.stdout().contains("capabilities.yaml"), "{}", out.dump());
        let doc: serde_json::Value =
            serde_json::from_str(&render(&["render", "r", "-o", "json"]).code(2).stdout()).unwrap();
        assert_eq!(doc["documents"], 4);
        // An upgrade renders with .Release.IsUpgrade, and so does the re-render of its revision.
        let chart = crate::support::chart_path("rendered");
        env.helm(helm, &["upgrade", "r", chart.to_str().unwrap(), "--reuse-values"]).success();
        render(&["render", "r"]).code(2).stdout_has("r: 2 of 4 documents render differently [namespace");

        env.install(helm, "p", "parent", &[]);
        render(&["render", "p"])
            .code(1)
            .stderr_has("chart parent declares dependencies (subcharts), which Helm does not store");
        let chart = crate::support::chart_path("parent");
        render(&["render", "p", "--chart", chart.to_str().unwrap()])
            .success()
            .stdout_has("p: renders as stored (2 documents)");
    }
}
