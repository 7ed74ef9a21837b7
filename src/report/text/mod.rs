//! The human-readable report: a verdict line per release, then each drifted object with the
//! fields that differ (readable paths, secret values hidden unless asked) and a unified diff.

pub(crate) mod accept;
pub(crate) mod plan;
mod render;
pub(crate) mod repair;

pub(crate) use render::render;

use super::color::{self, Tone, paint};
use super::present::{evidence, object_diff, set_flags, shown, upgrade_command, worth_showing};
use super::secret;
use super::style::Style;
use crate::model::{
    Cause, DriftKind, DriftReport, ExitStatus, Explanation, FieldPath, FleetReport, Method, ObjectDrift, Outcome,
    ReleaseVerdict, Rerender, RunReport, Verdict,
};
use serde_json::Value;
use std::fmt::Write;

/// Indentation of an object's evidence.
const DETAIL: &str = "      ";

/// How many baseline lines a release shows before it counts the rest.
const STALE_SHOWN: usize = 20;

/// One release: its verdict line, notes, and every object worth showing.
pub(crate) fn release(out: &mut String, r: &DriftReport, style: &Style) {
    verdict_line(out, r, style);
    if let Some((rev, status)) = &r.newest {
        let _ = writeln!(out, "  note: newest revision {rev} is {status}; compared with revision {}", r.revision);
    }
    engine_line(out, r, style);
    if style.verbose {
        for n in &r.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }
    for f in &r.findings {
        let _ = writeln!(out, "  finding: {f}");
    }
    for (object, path, changed) in r.stale.iter().take(STALE_SHOWN) {
        let at = if path.is_empty() { "(whole object)" } else { path };
        let line = if *changed {
            format!(
                "accepted {object} {at} drifts again with another value, reported below (helm drift accept {} takes the new value)",
                r.release
            )
        } else {
            format!("stale entry {object} {at}: its drift is gone (helm drift accept {} --prune drops it)", r.release)
        };
        let _ = writeln!(out, "  baseline: {line}");
    }
    if r.stale.len() > STALE_SHOWN {
        let _ = writeln!(
            out,
            "  baseline: {} more entries stale or drifting again (--output json lists them; helm drift accept {} --prune drops the stale ones)",
            r.stale.len() - STALE_SHOWN,
            r.release
        );
    }
    for o in r.objects.iter().filter(|o| o.hook.is_none()) {
        object(out, o, style);
    }
    hooks(out, r, style);
    explanations(out, r, style);
    if let Some(now) = &r.rerender {
        rerender(out, r, now, style);
    }
}

/// The hook objects Helm keeps (`--hooks`), under a heading of their own when one is shown.
fn hooks(out: &mut String, r: &DriftReport, style: &Style) {
    let shown: Vec<&ObjectDrift> = r.objects.iter().filter(|o| o.hook.is_some() && worth_showing(o, style)).collect();
    if shown.is_empty() {
        return;
    }
    let _ = writeln!(out, "  hooks (objects Helm keeps after their hook ran):");
    for o in shown {
        object(out, o, style);
    }
}

/// Which engine compared: with `-v`, the release's here and each object's under it; by default
/// one line, only when drifted objects were compared client-side (the read-only engine decided
/// their verdicts).
fn engine_line(out: &mut String, r: &DriftReport, style: &Style) {
    if style.verbose {
        let line = match r.engine() {
            Method::Exact => "exact (server-side apply dry-run for objects that differ client-side)".to_string(),
            Method::ReadOnly { reason } => format!("read-only client-side comparison for some objects ({reason})"),
        };
        let _ = writeln!(out, "  engine: {line}");
        let _ = writeln!(out, "  writer: {} ({})", r.writer.manager, r.writer.why());
        return;
    }
    let read_only: Vec<&str> = r
        .objects
        .iter()
        .filter(|o| o.is_drift())
        .filter_map(|o| match &o.engine {
            Some(Method::ReadOnly { reason }) => Some(reason.as_str()),
            _ => None,
        })
        .collect();
    let Some(reason) = read_only.first() else { return };
    let _ = writeln!(
        out,
        "  engine: {} of {} compared client-side, with the read-only engine ({reason}); -v shows each object's engine",
        read_only.len(),
        objects(r.drifted()).replace("object", "drifted object"),
    );
}

/// The chart as it renders now (`--rerender`): render drift, then what an upgrade would change,
/// in the direction it would change it (live -> after the upgrade). The drift listed above is
/// not repeated: an upgrade undoes it too, and one line says so.
fn rerender(out: &mut String, recorded: &DriftReport, r: &Rerender, style: &Style) {
    let untrusted;
    let head = if r.lookup_answered {
        "rendered now (stored values, lookup answered by the cluster)"
    } else {
        let ns = &recorded.namespace;
        untrusted = format!(
            "rendered now (stored values; lookup answered nothing: namespace {ns} is not trusted, and its chart does not \
             read the cluster with your rights; --trust-namespace {ns} lets it)"
        );
        &untrusted
    };
    if !r.unpredictable.is_empty() {
        let _ = writeln!(
            out,
            "  not predictable without the namespace's trust: {} (rendered by a template that calls lookup, which answered nothing)",
            r.unpredictable.join(", ")
        );
    }
    if !r.would_change() {
        let _ = writeln!(out, "  {head}: as recorded; a helm upgrade with the same values would change nothing");
        return;
    }
    let _ = writeln!(out, "  {head}: {} of {} documents render differently", r.changed.len(), r.documents);
    for d in &r.changed {
        let label = d.change.word();
        let _ = writeln!(out, "{DETAIL}{label:<8} {}", d.source);
    }
    let mut lines = Vec::new();
    let mut undoes = false;
    for now in r.against_live.objects.iter().filter(|o| o.is_drift()) {
        let before = recorded.objects.iter().find(|o| o.id == now.id);
        let (changes, known) = upgrade_changes(now, before, style);
        undoes |= known;
        if !changes.is_empty() {
            lines.push(format!("{DETAIL}{}", now.id));
            lines.extend(changes.into_iter().map(|c| format!("{DETAIL}  {}", paint(style.color, Tone::Warn, &c))));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(out, "  a helm upgrade with the same values would change (live -> after the upgrade):");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
    }
    if undoes {
        let _ = writeln!(out, "  a helm upgrade with the same values would also undo the drift listed above");
    }
}

/// What an upgrade would do to one object, live -> after the upgrade, leaving out what undoes
/// the drift already listed for it (`before`); and whether there was such drift.
fn upgrade_changes(now: &ObjectDrift, before: Option<&ObjectDrift>, style: &Style) -> (Vec<String>, bool) {
    let show = |pointer: String, v: &Value| shown(&secret::mask(&now.id, &pointer, v, style.show_secrets));
    if now.verdict == Verdict::Missing {
        let known = before.is_some_and(|b| b.verdict == Verdict::Missing);
        return (if known { Vec::new() } else { vec!["+ created".to_string()] }, known);
    }
    let listed = |path: &FieldPath, live: &Option<Value>| {
        before.is_some_and(|b| b.fields.iter().any(|f| f.path.pointer() == path.pointer() && &f.live == live))
    };
    let mut known = false;
    let mut out = Vec::new();
    for f in &now.fields {
        if listed(&f.path, &f.live) {
            known = true;
            continue;
        }
        let (live, after) = (f.path.live_pointer(), f.path.recorded_pointer());
        let (live, after) = (live.unwrap_or_else(|| f.path.pointer()), after.unwrap_or_else(|| f.path.pointer()));
        match (&f.live, &f.recorded) {
            (Some(l), Some(a)) => out.push(format!("~ {}: {} -> {}", f.path, show(live, l), show(after, a))),
            (None, Some(a)) => out.push(format!("+ {}: {}", f.path, show(after, a))),
            (Some(l), None) => out.push(format!("- {}: {}", f.path, show(live, l))),
            (None, None) => {}
        }
    }
    (out, known)
}

/// Where each modified field comes from, and the upgrade that would make the live state the
/// desired state (`--explain`).
fn explanations(out: &mut String, r: &DriftReport, style: &Style) {
    if r.explanations.is_empty() {
        return;
    }
    let _ = writeln!(out, "  explain:");
    for e in &r.explanations {
        let what = cause(e, style);
        let _ = writeln!(out, "{DETAIL}{} {}: {what}", e.object, e.path);
        if let Cause::Values(built) = &e.cause
            && !built.also.is_empty()
            && built.misfit.is_none()
        {
            let _ = writeln!(out, "{DETAIL}  that --set also changes {}", built.also.join(", "));
        }
    }
    let unexplained = r.unexplained();
    if !unexplained.is_empty() {
        let _ = writeln!(out, "  not explained (no value writes them: the upgrade below does not keep them):");
        for u in unexplained {
            let _ = writeln!(out, "{DETAIL}{u}");
        }
    }
    if let Some(line) = upgrade_command(r, style) {
        let _ = writeln!(out, "  to make the live state the desired state (CHART: the chart's reference or path):");
        let _ = writeln!(out, "{DETAIL}{line}");
    }
}

/// What produced an explained field, in words.
fn cause(e: &Explanation, style: &Style) -> String {
    match &e.cause {
        Cause::Values(built) => {
            let secret = e.object.is_secret_path(&e.path.pointer());
            let from = match &built.keys[..] {
                [key] if built.shape == format!("{{{key}}}") || built.shape.is_empty() || secret => {
                    format!("from value {key}")
                }
                keys if secret => format!("from values {}", keys.join(", ")),
                keys => format!("from values {} as \"{}\"", keys.join(", "), built.shape),
            };
            match (&built.misfit, set_flags(e, style)) {
                (Some(why), _) => format!("{from}, but {why}"),
                (None, sets) if sets.is_empty() => format!("{from} (already as live)"),
                (None, sets) => format!("{from}: {}", sets.join(" ")),
            }
        }
        Cause::HardCoded(Some(t)) => format!("no value produces it: written as is by {t} (change the chart)"),
        Cause::HardCoded(None) => "no value produces it: written as is by its template (change the chart)".into(),
        Cause::NotFound(why) => format!("no value found: {why}"),
    }
}

/// `name: verdict [namespace, revision, chart]`.
fn verdict_line(out: &mut String, r: &DriftReport, style: &Style) {
    let unclaimed = r.objects.iter().filter(|o| o.outside_claim()).count();
    let total = objects(r.objects.len() - unclaimed);
    let verdict = match r.verdict() {
        ReleaseVerdict::Error => {
            paint(style.color, Tone::Alarm, &format!("error ({} of {total} could not be checked)", r.errors()))
        }
        ReleaseVerdict::Drifted if r.drifted() == 0 => {
            let would = r.rerender.as_ref().map_or(0, |now| now.against_live.drifted());
            let line = format!("in sync with the record ({total}); rendered now, {} would change", objects(would));
            paint(style.color, Tone::Warn, &line)
        }
        ReleaseVerdict::Drifted => paint(style.color, Tone::Warn, &format!("{} of {total} drifted", r.drifted())),
        ReleaseVerdict::InSync => match r.taken_over() {
            0 => paint(style.color, Tone::Good, &format!("in sync ({total})")),
            n => paint(style.color, Tone::Good, &format!("in sync ({total}; {} taken over)", objects(n))),
        },
    };
    // What the record claims beyond its namespace without that namespace's word: not judged.
    let verdict = match unclaimed {
        0 => verdict,
        n => format!("{verdict}, {n} outside the claim (not judged)"),
    };
    let _ = writeln!(
        out,
        "{}: {verdict} [namespace {}{}, revision {} {}{}{}]",
        paint(style.color, Tone::Strong, &r.release),
        r.namespace,
        r.stored_apart.as_ref().map_or(String::new(), |s| format!(", stored in {}: {}", s.namespace, s.why())),
        r.revision,
        r.status,
        if r.chart.is_empty() { String::new() } else { format!(", chart {}", r.chart) },
        r.guard.as_ref().map_or(String::new(), |mode| format!(", guard: {mode}"))
    );
}

/// Every release of a run, then a summary line when there are several.
/// `check -o text`.
pub(crate) fn run(run: &RunReport, style: &Style) -> String {
    let mut out = String::new();
    write_run(&mut out, run, style);
    out
}

/// `check -o text` over several clusters.
pub(crate) fn fleet(fleet: &FleetReport, style: &Style) -> String {
    let mut out = String::new();
    write_fleet(&mut out, fleet, style);
    out
}

fn write_run(out: &mut String, run: &RunReport, style: &Style) {
    // One release in error: its message on stderr is the whole report.
    // A refused record is always said on stdout too: it does not make the exit code.
    let several = run.outcomes.len() > 1 || run.refused() > 0;
    releases(out, run, style, several);
    if several {
        let refused = match run.refused() {
            0 => String::new(),
            n => format!(", {n} record{} refused", if n == 1 { "" } else { "s" }),
        };
        let _ = writeln!(out, "{} releases: {}{refused}", run.outcomes.len(), tally(run.counts()));
    }
}

/// A fleet check: each cluster under its name, with its tally, then the fleet's.
fn write_fleet(out: &mut String, fleet: &FleetReport, style: &Style) {
    for c in &fleet.clusters {
        let tone = match c.run.exit_status() {
            ExitStatus::InSync => Tone::Good,
            ExitStatus::Drift => Tone::Warn,
            ExitStatus::Error | ExitStatus::WouldFail => Tone::Bad,
        };
        let n = c.run.outcomes.len();
        let head =
            format!("cluster {}: {n} release{}: {}", c.cluster, if n == 1 { "" } else { "s" }, tally(c.run.counts()));
        let _ = writeln!(out, "{}", paint(style.color, tone, &head));
        releases(out, &c.run, style, true);
    }
    let _ =
        writeln!(out, "{} clusters, {} releases: {}", fleet.clusters.len(), fleet.releases(), tally(fleet.counts()));
}

fn tally((in_sync, drifted, errors): (usize, usize, usize)) -> String {
    format!("{in_sync} in sync, {drifted} drifted, {errors} error{}", if errors == 1 { "" } else { "s" })
}

/// Each release's report; releases in error as one line pointing at stderr when `errors`.
fn releases(out: &mut String, run: &RunReport, style: &Style, errors: bool) {
    for o in &run.outcomes {
        match o {
            Outcome::Checked(r) if style.summary => verdict_line(out, r, style),
            Outcome::Checked(r) => release(out, r, style),
            Outcome::Failed(_) if !errors => {}
            Outcome::Failed(e) => {
                let word = match (e.refused, e.message.contains(crate::model::CONFLICTING_CLAIM)) {
                    (_, true) => "error: a conflicting claim",
                    (true, false) => "refused",
                    (false, false) => "error",
                };
                let line = format!("{}: {word} [namespace {}] (see stderr)", e.release, e.namespace);
                let _ = writeln!(out, "{}", paint(style.color, Tone::Bad, &line));
            }
        }
    }
}

/// One object's verdict line and evidence (also the body of a JUnit failure).
pub(crate) fn object(out: &mut String, o: &ObjectDrift, style: &Style) {
    let kind = o.drift_kind();
    if !worth_showing(o, style) {
        return;
    }
    // Padded before it is painted: a column whatever the colours.
    let label = format!("{:<width$}", kind.label(), width = DriftKind::label_width());
    let label = paint(style.color, color::verdict(kind), &label);
    let _ = write!(out, "  {label} {}", o.id);
    match (&o.hook, &o.source) {
        (Some(h), Some(src)) => _ = write!(out, "  ({} from {src})", h.describe()),
        (Some(h), None) => _ = write!(out, "  ({})", h.describe()),
        (None, Some(src)) => _ = write!(out, "  (from {src})"),
        (None, None) => {}
    }
    out.push('\n');
    for (tone, line) in evidence(o, style) {
        let line = tone.map_or_else(|| line.clone(), |t| paint(style.color, t, &line));
        let _ = writeln!(out, "{DETAIL}{line}");
    }
    if let Some(diff) = object_diff(o, style) {
        for line in diff.lines() {
            let _ = writeln!(out, "{DETAIL}{}", color::diff_line(style.color, line));
        }
    }
}

fn objects(n: usize) -> String {
    if n == 1 { "1 object".into() } else { format!("{n} objects") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, Foreign, ObjectId, Verdict};
    use serde_json::json;

    fn obj(kind: &str, ns: Option<&str>, name: &str, verdict: Verdict) -> ObjectDrift {
        let source = format!("demo/templates/{name}.yaml");
        ObjectDrift {
            engine: Some(Method::Exact),
            ..ObjectDrift::new(ObjectId::new("v1", kind, ns, name), Some(&source), verdict)
        }
    }

    fn report(objects: Vec<ObjectDrift>) -> DriftReport {
        let mut r = crate::testing::report("apps", "demo", objects);
        r.revision = 2;
        r.chart = "demo-0.1.0".into();
        r.record = "Secret apps/sh.helm.release.v1.demo.v2".into();
        r
    }

    fn plain(r: &DriftReport) -> String {
        let mut out = String::new();
        release(&mut out, r, &Style::default());
        out
    }

    #[test]
    fn lists_missing_objects_with_their_template() {
        let r = report(vec![
            obj("ConfigMap", Some("apps"), "cfg", Verdict::InSync),
            obj("Deployment", Some("apps"), "web", Verdict::Missing),
            obj("ClusterRole", None, "reader", Verdict::Missing),
        ]);
        assert_eq!(
            plain(&r),
            "demo: 2 of 3 objects drifted [namespace apps, revision 2 deployed, chart demo-0.1.0]\n  missing      Deployment apps/web  (from demo/templates/web.yaml)\n  missing      ClusterRole reader  (from demo/templates/reader.yaml)\n"
        );
    }

    #[test]
    fn modified_fields_and_secret_values_hidden() {
        let p = crate::testing::path;
        let mut web = obj("Deployment", Some("apps"), "web", Verdict::Modified);
        web.fields.push(FieldDiff::new(p("/spec/replicas"), Some(&json!(2)), Some(&json!(5))));
        web.added.push(Foreign {
            path: p("/metadata/labels/x"),
            value: json!("y"),
            manager: "kubectl-label".into(),
            changed_by: None,
        });
        let mut secret = obj("Secret", Some("apps"), "creds", Verdict::Modified);
        secret.fields.push(FieldDiff::new(p("/data/password"), Some(&json!("czNjcmV0")), Some(&json!("b3RoZXI="))));
        let out = plain(&report(vec![web, secret]));
        assert!(out.contains("  changed      Deployment apps/web  (from demo/templates/web.yaml)\n      ~ spec.replicas: 2 -> 5\n      + metadata.labels.x: \"y\" (added by kubectl-label)\n"), "{out}");
        assert!(out.contains("~ data.password: (hidden) -> (hidden)"), "{out}");
        assert!(!out.contains("czNjcmV0"));
    }

    #[test]
    fn show_secrets_prints_values() {
        let mut secret = obj("Secret", Some("apps"), "creds", Verdict::Modified);
        secret.fields.push(FieldDiff::new(crate::testing::path("/data/password"), Some(&json!("czNjcmV0")), None));
        let mut out = String::new();
        release(&mut out, &report(vec![secret]), &Style { show_secrets: true, ..Style::default() });
        assert!(out.contains("- data.password: \"czNjcmV0\" (removed)"), "{out}");
    }

    #[test]
    fn in_sync_is_one_line_and_colour_is_optional() {
        let r = report(vec![obj("ConfigMap", Some("apps"), "cfg", Verdict::InSync)]);
        assert_eq!(plain(&r), "demo: in sync (1 object) [namespace apps, revision 2 deployed, chart demo-0.1.0]\n");
        let mut coloured = String::new();
        release(&mut coloured, &r, &Style { color: true, ..Style::default() });
        assert!(coloured.contains('\x1b'));
    }

    #[test]
    fn the_engine_line_only_where_the_read_only_engine_decided_a_verdict() {
        let read_only = |mut o: ObjectDrift| {
            o.engine = Some(Method::ReadOnly { reason: "the server refused the dry-run: 422".into() });
            o
        };
        let mut edited = obj("ConfigMap", Some("apps"), "cfg", Verdict::Modified);
        edited.fields.push(FieldDiff::new(crate::testing::path("/data/a"), Some(&json!("x")), Some(&json!("y"))));
        // The read-only engine compared an object in sync; the drift came from the exact engine.
        let r = report(vec![edited.clone(), read_only(obj("Service", Some("apps"), "web", Verdict::InSync))]);
        assert!(!plain(&r).contains("engine"), "{}", plain(&r));
        let mut verbose = String::new();
        release(&mut verbose, &r, &Style { verbose: true, ..Style::default() });
        assert!(
            verbose.contains("  in sync      Service apps/web  (from demo/templates/web.yaml)\n      engine: read-only client-side comparison (the server refused the dry-run: 422)\n"),
            "{verbose}"
        );
        // It decided a drifted object's verdict: one line says so.
        let r = report(vec![read_only(edited), obj("Service", Some("apps"), "web", Verdict::InSync)]);
        assert!(
            plain(&r).contains("  engine: 1 of 1 drifted object compared client-side, with the read-only engine (the server refused the dry-run: 422); -v shows each object's engine\n"),
            "{}",
            plain(&r)
        );
    }
}
