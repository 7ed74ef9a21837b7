//! Snapshot tests of every format for one representative run, and of a printer's two writers.

use super::printer::Printer;
use super::*;
use crate::model::{
    Attribution, DriftReport, Expected, FieldDiff, Foreign, Ignored, ItemKey, Method, ObjectDrift, ObjectId, Outcome,
    Ownership, ReleaseError, RunReport, Verdict,
};
use serde_json::json;

fn obj(kind: &str, name: &str, verdict: Verdict) -> ObjectDrift {
    let api_version = if kind == "Deployment" { "apps/v1" } else { "v1" };
    let source = format!("web/templates/{name}.yaml");
    ObjectDrift {
        engine: Some(Method::Exact),
        ..ObjectDrift::new(ObjectId::new(api_version, kind, Some("apps"), name), Some(&source), verdict)
    }
}

/// A ConfigMap deleted and created again by hand: values as recorded, owned by kubectl.
fn recreated() -> ObjectDrift {
    let mut cm = obj("ConfigMap", "recreated", Verdict::Modified);
    for path in ["/data/greeting", "/metadata/labels/app"] {
        cm.disowned.push(Ownership {
            path: crate::testing::path(path),
            manager: "kubectl-create".into(),
            shared: false,
        });
    }
    cm.apply = crate::model::Apply::ServerSide;
    cm.recreated = Some(crate::model::Attribution {
        manager: "kubectl-create".into(),
        operation: "Update".into(),
        subresource: None,
        time: Some("2026-11-30T09:00:00Z".into()),
        person: true,
        audit: None,
    });
    cm
}

/// A Deployment restarted with `kubectl rollout restart`: expected, not drift.
fn restarted() -> ObjectDrift {
    let mut d = obj("Deployment", "restarted", Verdict::InSync);
    d.expected.push(Expected {
        path: crate::testing::path("/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"),
        value: json!("2026-11-29T09:00:00Z"),
        reason: "kubectl rollout restart (kubectl-rollout)".into(),
        changed_by: None,
    });
    d
}

/// The drifted Deployment of the fixture: a scaled replica count, a port removed, a variable
/// added, a label ignored.
fn drifted_web() -> ObjectDrift {
    let p = crate::testing::path;
    let container = p("/spec/template/spec/containers").item(
        Some(0),
        Some(0),
        Some(ItemKey::from_fields([("name", &json!("web"))])),
    );
    let mut web = obj("Deployment", "web", Verdict::Modified);
    let mut replicas = FieldDiff::new(p("/spec/replicas"), Some(&json!(2)), Some(&json!(5)));
    replicas.changed_by = Some(Attribution {
        manager: "kubectl".into(),
        operation: "Update".into(),
        subresource: Some("scale".into()),
        // Kubernetes records no time for a write through the scale subresource.
        time: None,
        person: true,
        audit: None,
    });
    web.fields.push(replicas);
    let port = ItemKey::from_fields([("containerPort", &json!(8080)), ("protocol", &json!("TCP"))]);
    web.fields.push(FieldDiff::new(
        container.field("ports").item(Some(0), None, Some(port)),
        Some(&json!({"containerPort": 8080, "name": "http", "protocol": "TCP"})),
        None,
    ));
    web.added.push(Foreign {
        path: container.field("env").item(None, Some(1), Some(ItemKey::from_fields([("name", &json!("EXTRA"))]))),
        value: json!({"name": "EXTRA", "value": "1"}),
        manager: "kubectl-set".into(),
        changed_by: None,
    });
    web.ignored.push(Ignored { path: p("/metadata/labels/team"), reason: "--ignore /metadata/labels/team".into() });
    web.live = Some(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "apps"},
        "spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "web", "image": "web:1", "ports": [],
            "env": [{"name": "A", "value": "a"}, {"name": "EXTRA", "value": "1"}]}]}}}
    }));
    web
}

/// A run with a drifted release, a clean one and one that could not be read.
fn fixture() -> RunReport {
    let p = crate::testing::path;
    let web = drifted_web();
    let mut secret = obj("Secret", "creds", Verdict::Modified);
    secret.fields.push(FieldDiff::new(p("/data/password"), Some(&json!("b2xk")), Some(&json!("bmV3"))));
    secret.live = Some(
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}, "data": {"password": "bmV3"}}),
    );
    let web_release = DriftReport {
        release: "web".into(),
        namespace: "apps".into(),
        revision: 3,
        status: "deployed".into(),
        chart: "web-1.2.0".into(),
        record: "Secret apps/sh.helm.release.v1.web.v3".into(),
        stored_apart: None,
        newest: Some((4, "failed".into())),
        objects: vec![
            obj("ConfigMap", "config", Verdict::InSync),
            obj("Deployment", "worker", Verdict::Missing),
            web,
            secret,
            recreated(),
            restarted(),
            obj("Widget", "w", Verdict::Unknown { reason: "the cluster does not serve example.io/v1 Widget".into() }),
            obj(
                "ConfigMap",
                "tuned",
                Verdict::Excluded { reason: "annotation helm-drift.io/disabled: \"true\"".into() },
            ),
        ],
        notes: vec!["1 hook(s) not checked (--hooks compares the hook objects Helm keeps after they ran)".into()],
        stale: Vec::new(),
        findings: Vec::new(),
        explanations: Vec::new(),
        rerender: None,
        guard: None,
        accepted_until: None,
        writer: Default::default(),
    };
    let mut db = crate::testing::report("data", "db", vec![obj("ConfigMap", "db", Verdict::InSync)]);
    db.chart = "db-0.1.0".into();
    let broken = ReleaseError {
        namespace: "ops".into(),
        release: "broken".into(),
        message: "cannot read release \"broken\": Secret ops/sh.helm.release.v1.broken.v1: bad gzip data: unexpected end of file".into(),
        refused: false,
    };
    RunReport { outcomes: vec![Outcome::Checked(web_release), Outcome::Checked(db), Outcome::Failed(broken)] }
}

/// What a printer with `style` writes for the fixture: stdout and stderr.
fn printed(style: Style) -> (String, String) {
    let mut printer = Printer::new(Vec::new(), Vec::new(), style);
    printer.check(&fixture());
    let (out, err) = printer.into_parts();
    (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

#[test]
fn text_report() {
    let (out, err) = printed(Style::default());
    insta::assert_snapshot!("text", out);
    assert_eq!(
        err,
        "Error: cannot read release \"broken\": Secret ops/sh.helm.release.v1.broken.v1: bad gzip data: unexpected end of file\n"
    );
}

#[test]
fn ages_of_changes() {
    let now = "2026-11-29T10:00:00Z".parse().ok();
    let (out, _) = printed(Style { now, ..Style::default() });
    assert!(out.contains("~ spec.replicas: 2 -> 5  (kubectl)\n"), "a scale has no time: {out}");
    let mut run = fixture();
    if let Outcome::Checked(r) = &mut run.outcomes[0] {
        let web = r.objects.iter_mut().find(|o| !o.fields.is_empty()).unwrap();
        web.fields[0].changed_by.as_mut().unwrap().time = Some("2026-11-29T09:48:00Z".into());
    }
    let mut out = String::new();
    out.push_str(&text::run(&run, &Style { now, ..Style::default() }));
    assert!(out.contains("~ spec.replicas: 2 -> 5  (kubectl, 12 min ago)"), "{out}");
}

/// A baseline flood of stale entries shows a few lines and counts the rest.
#[test]
fn stale_baseline_lines_are_counted_past_a_few() {
    let mut run = fixture();
    if let Outcome::Checked(r) = &mut run.outcomes[0] {
        r.stale = (0..1000).map(|i| (format!("v1 Secret apps/s{i}"), "/data/x".to_string(), false)).collect();
    }
    let out = text::run(&run, &Style::default());
    assert_eq!(out.matches("baseline: stale entry").count(), 20, "{out}");
    assert!(out.contains("baseline: 980 more entries stale or drifting again"), "{out}");
}

#[test]
fn text_report_verbose_and_summary() {
    insta::assert_snapshot!("text_verbose", printed(Style { verbose: true, context: 1, ..Style::default() }).0);
    insta::assert_snapshot!("text_summary", printed(Style { summary: true, ..Style::default() }).0);
}

#[test]
fn json_report() {
    let doc = json::document(&fixture(), false);
    assert!(!doc.contains("bmV3") && !doc.contains("b2xk"), "secret values are masked");
    insta::assert_snapshot!("json", doc);
    assert!(json::document(&fixture(), true).contains("bmV3"));
}

/// Every `path` in JSON resolves in the object it describes: the recorded object for removed
/// values, the live one otherwise.
#[test]
fn json_paths_resolve() {
    let doc: serde_json::Value = serde_json::from_str(&json::document(&fixture(), true)).unwrap();
    let web = &doc["releases"][0]["objects"][2];
    let live = fixture_live();
    for d in web["differences"].as_array().unwrap() {
        let at = d["path"].as_str().unwrap();
        if d["live"].is_null() {
            assert_eq!(at, "/spec/template/spec/containers/0/ports/0", "the recorded object's pointer");
        } else {
            assert_eq!(live.pointer(at), Some(&d["live"]), "{at}");
        }
    }
    for a in web["addedOutsideHelm"].as_array().unwrap() {
        let at = a["path"].as_str().unwrap();
        assert_eq!(live.pointer(at), Some(&a["value"]), "{at}");
    }
}

fn fixture_live() -> serde_json::Value {
    match &fixture().outcomes[0] {
        Outcome::Checked(r) => r.objects[2].live.clone().unwrap(),
        _ => unreachable!(),
    }
}

#[test]
fn junit_report() {
    let (xml, _) = printed(Style { format: Format::Junit, color: true, ..Style::default() });
    assert!(!xml.contains('\x1b'));
    insta::assert_snapshot!("junit", xml);
}

#[test]
fn quiet_prints_errors_only() {
    let (out, err) = printed(Style { quiet: true, ..Style::default() });
    assert_eq!(out, "");
    assert!(err.starts_with("Error: cannot read release \"broken\""));
}

#[test]
fn exit_status_error_outranks_drift() {
    use crate::model::ExitStatus;
    let mut run = fixture();
    assert_eq!(run.exit_status(), ExitStatus::Error);
    run.outcomes.pop();
    assert_eq!(run.exit_status(), ExitStatus::Drift);
    run.outcomes.remove(0);
    assert_eq!(run.exit_status(), ExitStatus::InSync);
}

#[test]
fn errors_say_each_cause_once() {
    let mut printer = Printer::new(Vec::new(), Vec::new(), Style::default());
    let inner = anyhow::anyhow!("Invalid symbol 33, offset 0.");
    printer.error(&inner.context("bad base64: Invalid symbol 33, offset 0.").context("Secret a/b"));
    let (_, err) = printer.into_parts();
    assert_eq!(String::from_utf8(err).unwrap(), "Error: Secret a/b: bad base64: Invalid symbol 33, offset 0.\n");
}

/// `watch` notifications: the object in the `-o json` shape with secret values hidden, and the
/// Slack form as one line naming the event, the object, the release and the paths.
#[test]
fn watch_notifications() {
    let run = fixture();
    let Outcome::Checked(report) = &run.outcomes[0] else { panic!("a checked release first") };
    let drifted = report.objects.iter().find(|o| o.is_drift()).expect("a drifted object");
    let note = json::notification("DriftDetected", report, "abc", Some(drifted), &drifted.id);
    assert_eq!(note["event"], "DriftDetected");
    assert_eq!(note["release"]["name"], report.release.as_str());
    assert_eq!(note["object"]["name"], drifted.id.name.as_str());
    assert_eq!(note["object"]["verdict"], drifted.drift_kind().word());
    let text = json::slack(&note)["text"].as_str().unwrap().to_string();
    assert!(text.starts_with(&format!("DriftDetected {} ", drifted.id.kind)), "{text}");
    assert!(text.contains(&format!("of release {}/{}", report.namespace, report.release)), "{text}");
    // A watcher given --cluster names it first.
    let mut placed = note.clone();
    placed["cluster"] = "prod-eu".into();
    let text = json::slack(&placed)["text"].as_str().unwrap().to_string();
    assert!(text.starts_with(&format!("[prod-eu] DriftDetected {} ", drifted.id.kind)), "{text}");
    let resolved = json::notification("DriftResolved", report, "abc", None, &drifted.id);
    assert_eq!(resolved["object"]["verdict"], "in-sync");
    assert!(json::slack(&resolved)["text"].as_str().unwrap().contains("in-sync"));
    let mut refused = json::notification("DriftRepairRefused", report, "abc", Some(drifted), &drifted.id);
    refused["message"] = "helm-drift did not repair it: outside the release's namespace".into();
    let text = json::slack(&refused)["text"].as_str().unwrap().to_string();
    assert_eq!(text, "DriftRepairRefused: helm-drift did not repair it: outside the release's namespace");
    // Names and paths from a record or the cluster never become a mention or a link.
    let mut hostile = note.clone();
    hostile["object"]["name"] = "<!channel> <https://evil.example|click> & more".into();
    let text = json::slack(&hostile)["text"].as_str().unwrap().to_string();
    assert!(text.contains("&lt;!channel&gt; &lt;https://evil.example|click&gt; &amp; more"), "{text}");
    assert!(!text.contains('<') && !text.contains('>'), "{text}");
    for o in report.objects.iter().filter(|o| o.id.is_secret() && o.is_drift()) {
        let body = json::notification("DriftDetected", report, "abc", Some(o), &o.id).to_string();
        for f in &o.fields {
            if let Some(serde_json::Value::String(v)) = &f.live {
                assert!(!body.contains(v.as_str()), "a secret value in {body}");
            }
        }
    }
}

/// JSON read with its keys in the order written (serde_json's maps sort them).
#[derive(Debug)]
enum Ordered {
    Map(Vec<(String, Ordered)>),
    List(Vec<Ordered>),
    Scalar,
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Ordered>()? {
                    out.push((k, v));
                }
                Ok(Ordered::Map(out))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = s.next_element::<Ordered>()? {
                    out.push(v);
                }
                Ok(Ordered::List(out))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// Every map of the README's example has its keys in the output's order (sorted), and the
/// levels a reader relies on have exactly the output's keys; `...` marks an elided map.
fn same_keys(example: &Ordered, real: &serde_json::Value, at: &str, exact: &[&str], problems: &mut Vec<String>) {
    match (example, real) {
        (Ordered::Map(entries), serde_json::Value::Object(m)) => {
            let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
            if keys.contains(&"...") {
                return;
            }
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            if keys != sorted {
                problems.push(format!("{at}: {keys:?} is not in the output's order {sorted:?}"));
            }
            let real_keys: Vec<&str> = m.keys().map(String::as_str).collect();
            if exact.contains(&at) && keys != real_keys {
                problems.push(format!("{at}: the example has {keys:?}, the output {real_keys:?}"));
            }
            for (k, v) in entries {
                if let Some(r) = m.get(k) {
                    same_keys(v, r, &format!("{at}/{k}"), exact, problems);
                }
            }
        }
        (Ordered::List(items), serde_json::Value::Array(real)) => {
            if let (Some(e), Some(r)) = (items.first(), real.first()) {
                same_keys(e, r, &format!("{at}/0"), exact, problems);
            }
        }
        _ => {}
    }
}

/// The book's `-o json` example (the output page) shows the document as it is written: every map's keys in the
/// output's order, and exactly the output's keys at the top, per release and per object.
#[test]
fn readme_json_example_has_the_keys_of_the_output_in_order() {
    let readme = include_str!("../../docs/src/output.md");
    let start = readme.find("- `-o json`: one document per run").expect("the output page documents -o json");
    let block = &readme[start..];
    let body = &block[block.find("```jsonc\n").expect("a jsonc block (JSON with comments)") + 9..];
    let body = &body[..body.find("```").expect("the block ends")];
    let without_comments: String = body
        .lines()
        .map(|l| match l.find("  //") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let example: Ordered = serde_json::from_str(&without_comments).expect("the example is JSON");
    let real: serde_json::Value = serde_json::from_str(&json::document(&fixture(), false)).unwrap();
    let exact = ["", "/summary", "/releases/0", "/releases/0/counts", "/releases/0/objects/0"];
    let mut problems = Vec::new();
    same_keys(&example, &real, "", &exact, &mut problems);
    assert!(problems.is_empty(), "README's JSON example:\n{}", problems.join("\n"));
}

#[test]
fn markdown_report() {
    let doc = markdown::run_within(&fixture(), &Style::default(), markdown::COMMENT_LIMIT);
    assert!(!doc.contains("bmV3") && !doc.contains("b2xk"), "secret values are masked");
    insta::assert_snapshot!("markdown", doc);
    let (out, _) = printed(Style { format: Format::Markdown, ..Style::default() });
    assert_eq!(out, doc);
}

#[test]
fn html_report() {
    let page = html::run(&fixture(), &Style::default());
    assert!(!page.contains("bmV3") && !page.contains("b2xk"), "secret values are masked");
    for external in ["<script", "src=", "href=\"http", "@import", "url("] {
        assert!(!page.contains(external), "self-contained: {external}");
    }
    insta::assert_snapshot!("html", page.replace(env!("CARGO_PKG_VERSION"), "VERSION"));
}

/// What the cluster holds is written by others: a release, a path or a value that looks like
/// markup or a fence stays text in both documents.
#[test]
fn markup_from_the_cluster_stays_text() {
    let mut run = fixture();
    let Outcome::Checked(r) = &mut run.outcomes[0] else { panic!() };
    r.release = "web<script>alert(1)</script>|x".into();
    r.status = "deployed<img src=x onerror=alert(1)>".into(); // an SQL row says what it likes
    let web = r.objects.iter_mut().find(|o| o.id.name == "web").unwrap();
    web.fields.push(FieldDiff::new(
        crate::testing::path("/metadata/annotations/note"),
        Some(&json!("a")),
        Some(&json!("```\n</details><img src=x onerror=alert(1)>")),
    ));
    web.live.as_mut().unwrap()["metadata"]["annotations"] =
        json!({"note": "```\n</details><img src=x onerror=alert(1)>"});
    let md = markdown::run_within(&run, &Style::default(), markdown::COMMENT_LIMIT);
    assert!(md.contains("web&lt;script&gt;alert(1)&lt;/script&gt;\\|x"), "{md}");
    // Markup only inside fences (code, shown as is), each longer than any backtick run in it.
    let mut fence: Option<&str> = None;
    for line in md.lines() {
        match fence {
            Some(f) if line == f => fence = None,
            Some(_) => {}
            None if line.starts_with("```") => fence = Some(line.trim_end_matches(|c: char| c != '`')),
            None => assert!(!line.contains("<img") && !line.contains("<script"), "{line}\n{md}"),
        }
    }
    assert!(md.contains("````text\n") && md.contains("````diff\n"), "{md}");
    let page = html::run(&run, &Style::default());
    assert!(!page.contains("<script>") && !page.contains("<img"), "{page}");
}

/// Over the limit, the longest diffs go first, then objects from the end, with a note; the
/// document stays under the limit.
#[test]
fn markdown_stays_under_its_limit() {
    let big = |name: &str, lines: usize| {
        let mut o = obj("ConfigMap", name, Verdict::Modified);
        o.fields.push(FieldDiff::new(crate::testing::path("/data/k"), Some(&json!("a")), Some(&json!("b"))));
        let data: serde_json::Map<String, serde_json::Value> =
            (0..lines).map(|i| (format!("key{i:05}"), json!(format!("value {i}")))).collect();
        let mut live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data});
        live["data"]["k"] = json!("b");
        o.live = Some(live);
        o
    };
    let r = crate::testing::report("apps", "many", vec![big("small", 3), big("large", 2000), big("medium", 400)]);
    let run = RunReport { outcomes: vec![Outcome::Checked(r)] };
    let style = Style { context: 100_000, ..Style::default() };
    let whole = markdown::run_within(&run, &style, usize::MAX);
    assert!(!whole.contains("left out"));
    let limit = whole.len() - 1000;
    let cut = markdown::run_within(&run, &style, limit);
    assert!(cut.len() <= limit, "{} > {limit}", cut.len());
    assert_eq!(cut.matches("_diff left out").count(), 1, "only the longest: {cut}");
    assert!(cut.contains("key00399") && !cut.contains("key01999"), "the large one went");
    assert!(cut.contains("1 diff (the longest) and 0 object details"), "{cut}");
    let tiny = markdown::run_within(&run, &style, 1480);
    assert!(tiny.len() <= 1480, "{}", tiny.len());
    assert!(tiny.contains("3 diffs (the longest) and 1 object detail;"), "{tiny}");
}

/// A cluster of many releases: the table lists those that need a look and counts the rest; a
/// table alone over the limit is cut at a line with a note.
#[test]
fn markdown_of_many_releases_lists_what_needs_a_look() {
    let mut run = fixture();
    for i in 0..200 {
        let mut r =
            crate::testing::report("apps", &format!("quiet-{i:03}"), vec![obj("ConfigMap", "c", Verdict::InSync)]);
        r.chart = "quiet-0.1.0".into();
        run.outcomes.push(Outcome::Checked(r));
    }
    let md = markdown::run_within(&run, &Style::default(), markdown::COMMENT_LIMIT);
    assert!(!md.contains("quiet-000") && md.contains("201 more releases in sync (not listed)."), "{md}");
    assert!(md.contains("| web | apps | 3 | web-1.2.0 | **5 of 8 drifted** |"), "{md}");
    let verbose = markdown::run_within(&run, &Style { verbose: true, ..Style::default() }, 4096);
    assert!(verbose.len() <= 4096 && verbose.ends_with("`helm drift check` shows everything._\n"), "{verbose}");
}

/// Terminal control sequences in what the cluster holds (a value, a list item's key, a live
/// object in the diff) are shown escaped, never sent to the terminal: someone who may only edit
/// a ConfigMap must not repaint or retitle the terminal of whoever checks it.
#[test]
fn control_characters_from_the_cluster_never_reach_the_terminal() {
    let mut run = fixture();
    let Outcome::Checked(r) = &mut run.outcomes[0] else { panic!() };
    let web = r.objects.iter_mut().find(|o| o.id.name == "web").unwrap();
    let hostile = "x\u{1b}]0;owned\u{7}\u{1b}[2J\r\u{9b}31m";
    web.fields.push(FieldDiff::new(
        crate::testing::path("/metadata/annotations/note"),
        Some(&json!("a")),
        Some(&json!(hostile)),
    ));
    let key = ItemKey::from_fields([("name", &json!(hostile))]);
    web.added.push(Foreign {
        path: crate::testing::path("/spec/template/spec/containers").item(None, Some(1), Some(key)),
        value: json!({"name": hostile}),
        manager: "kubectl-patch".into(),
        changed_by: None,
    });
    web.live.as_mut().unwrap()["metadata"]["annotations"] = json!({"note": hostile});
    for verbose in [false, true] {
        let mut printer = Printer::new(Vec::new(), Vec::new(), Style { verbose, ..Style::default() });
        printer.check(&run);
        let (out, _) = printer.into_parts();
        let out = String::from_utf8(out).unwrap();
        let bad: Vec<char> = out.chars().filter(|c| c.is_control() && *c != '\n' && *c != '\t').collect();
        assert!(bad.is_empty(), "{bad:?} in\n{out}");
    }
}

#[test]
fn hook_objects_are_a_section_of_their_own() {
    let mut run = fixture();
    let Outcome::Checked(r) = &mut run.outcomes[0] else { panic!("a checked release first") };
    let mut crd = obj("ConfigMap", "settings", Verdict::Missing);
    let origin = crate::testing::hook(&["pre-install"], 1, 3);
    crd.hook = Some(Box::new(origin));
    r.objects.push(crd);
    let mut printer = Printer::new(Vec::new(), Vec::new(), Style::default());
    printer.check(&run);
    let text = String::from_utf8(printer.into_parts().0).unwrap();
    let heading = text.find("  hooks (objects Helm keeps after their hook ran):").expect(&text);
    let hook = text.find("missing      ConfigMap apps/settings").expect(&text);
    assert!(heading < hook && text[..heading].contains("Deployment apps/web"), "{text}");
    assert!(text.contains("missing      ConfigMap apps/settings  (pre-install hook, as created at revision 1 from web/templates/settings.yaml)"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&json::document(&run, false)).unwrap();
    let release = &doc["releases"][0];
    assert_eq!(release["hooks"][0]["name"], "settings");
    assert_eq!(release["hooks"][0]["hook"]["events"], json!(["pre-install"]));
    assert!(release["objects"].as_array().unwrap().iter().all(|o| o["name"] != "settings"));
}
