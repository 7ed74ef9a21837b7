//! The HTML report (`-o html`): one self-contained page (its style inline; no script, font or
//! image from anywhere) that reads offline as a CI artifact: the verdict, a table of releases,
//! per drifted release its objects with the paths, who changed them and a coloured diff, and
//! filters by verdict made of radio buttons and CSS alone. Secret values are hidden as in every
//! report; everything read from the cluster is escaped.

use super::junit::esc;
use super::present::{evidence, object_diff, plural, upgrade_command, worth_showing};
use super::style::Style;
use crate::model::{
    BoardRelease, DriftKind, DriftReport, ExitStatus, FleetReport, ObjectDrift, Outcome, ReleaseVerdict, RunReport,
};
use std::fmt::Write;

/// One run's page.
pub(crate) fn run(run: &RunReport, style: &Style) -> String {
    page(&[(None, run)], style)
}

/// A fleet's page: each cluster's releases under its name.
pub(crate) fn fleet(fleet: &FleetReport, style: &Style) -> String {
    let runs: Vec<(Option<&str>, &RunReport)> =
        fleet.clusters.iter().map(|c| (Some(c.cluster.as_str()), &c.run)).collect();
    page(&runs, style)
}

fn page(runs: &[(Option<&str>, &RunReport)], style: &Style) -> String {
    let (mut in_sync, mut drifted, mut errors) = (0, 0, 0);
    for (_, run) in runs {
        let (a, b, c) = run.counts();
        (in_sync, drifted, errors) = (in_sync + a, drifted + b, errors + c);
    }
    let verdict = super::present::run_verdict(errors, drifted);
    let kinds = shown_kinds(runs, style);
    let mut out = String::with_capacity(16 * 1024);
    let title = format!("helm drift: {verdict}");
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"helm-drift {}\">\n<title>{}</title>\n<style>\n{}{}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(&title),
        STYLE,
        filter_rules(&kinds)
    );
    // The filters' radio buttons come first: the rules select what follows them.
    out.push_str("<input type=\"radio\" name=\"filter\" id=\"show-all\" class=\"filter\" checked>\n");
    for (k, _) in &kinds {
        let _ = writeln!(out, "<input type=\"radio\" name=\"filter\" id=\"show-{}\" class=\"filter\">", k.word());
    }
    let _ = write!(
        out,
        "<header>\n<h1 class=\"verdict {}\">{}</h1>\n<p class=\"counts\"><span id=\"releases-drifted\">{drifted}</span> drifted, <span id=\"releases-in-sync\">{in_sync}</span> in sync, <span id=\"releases-error\">{errors}</span> error{} of {} release{}{}</p>\n",
        verdict.replace(' ', "-"),
        esc(&title),
        plural(errors),
        in_sync + drifted + errors,
        plural(in_sync + drifted + errors),
        style.now.map_or(String::new(), |t| format!(", checked at <time>{t:.0}</time>"))
    );
    if !kinds.is_empty() {
        out.push_str("<nav class=\"filters\">Show: <label for=\"show-all\">all</label>");
        for (k, n) in &kinds {
            let _ = write!(out, " <label for=\"show-{}\" class=\"{}\">{} ({n})</label>", k.word(), k.word(), k.label());
        }
        out.push_str("</nav>\n");
    }
    out.push_str("</header>\n<main>\n");
    body(&mut out, runs, style);
    let code = runs.iter().map(|(_, r)| r.exit_status()).fold(ExitStatus::InSync, ExitStatus::max).code();
    let _ = write!(
        out,
        "</main>\n<footer>helm-drift {}: exit code {code} (0 in sync, 2 drift, 1 error).</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
    );
    out
}

/// Objects shown, by verdict, in the order of the verdicts: the filters offered.
fn shown_kinds(runs: &[(Option<&str>, &RunReport)], style: &Style) -> Vec<(DriftKind, usize)> {
    let mut kinds: Vec<(DriftKind, usize)> = Vec::new();
    for r in runs.iter().flat_map(|(_, run)| run.checked()) {
        for o in r.objects.iter().filter(|o| worth_showing(o, style)) {
            match kinds.iter_mut().find(|(k, _)| *k == o.drift_kind()) {
                Some((_, n)) => *n += 1,
                None => kinds.push((o.drift_kind(), 1)),
            }
        }
    }
    kinds.sort_by_key(|(k, _)| DriftKind::all().position(|(_, each)| each == *k));
    kinds
}

/// Each cluster's table of releases, then each release worth showing and each error.
fn body(out: &mut String, runs: &[(Option<&str>, &RunReport)], style: &Style) {
    for (cluster, run) in runs {
        if let Some(c) = cluster {
            let _ = writeln!(out, "<h2 class=\"cluster\">Cluster {}</h2>", esc(c));
        }
        releases_table(out, run);
        for o in &run.outcomes {
            match o {
                Outcome::Checked(r) if r.verdict() != ReleaseVerdict::InSync || style.verbose => release(out, r, style),
                Outcome::Checked(_) => {}
                Outcome::Failed(e) => {
                    let _ = writeln!(
                        out,
                        "<section class=\"release error\"><h2>{} <span class=\"ns\">namespace {}</span> <span class=\"verdict error\">error</span></h2><pre class=\"message\">{}</pre></section>",
                        esc(&e.release),
                        esc(&e.namespace),
                        esc(&e.message)
                    );
                }
            }
        }
    }
}

/// The watcher's page (`watch --ui`): every release with its verdict, revision and last check,
/// and per release its objects worth a look with their paths, verdicts and writers; never a
/// value. The browser refreshes it every 10 seconds; no script.
pub(crate) fn board(
    releases: &[BoardRelease],
    lives: &[crate::model::DriftLife],
    ready: bool,
    now: k8s_openapi::jiff::Timestamp,
) -> String {
    let drifted = releases.iter().filter(|r| r.verdict == "drifted").count();
    let errors = releases.iter().filter(|r| r.verdict == "error").count();
    let verdict =
        if ready { super::present::run_verdict(errors, drifted) } else { "starting: the first full check is not done" };
    let mut out = String::with_capacity(8 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"10\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>helm drift watch: {}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<header>\n<h1 class=\"verdict {}\">helm drift watch: {}</h1>\n<p class=\"counts\"><span id=\"releases-drifted\">{drifted}</span> drifted, <span id=\"releases-error\">{errors}</span> error{} of <span id=\"releases\">{}</span> release{}; as of <time>{now:.0}</time> (refreshed every 10 s)</p>\n</header>\n<main>\n",
        esc(verdict),
        verdict.split(':').next().unwrap_or("").replace(' ', "-"),
        esc(verdict),
        plural(errors),
        releases.len(),
        plural(releases.len()),
    );
    out.push_str("<table class=\"releases\">\n<thead><tr><th>Release</th><th>Namespace</th><th>Revision</th><th>Verdict</th><th>Objects</th><th>Last check</th></tr></thead>\n<tbody>\n");
    for r in releases {
        let _ = writeln!(
            out,
            "<tr class=\"{}\"><td><a href=\"#{}\">{}</a></td><td>{}</td><td>{}</td><td class=\"verdict {}\">{}</td><td>{}</td><td><time>{}</time></td></tr>",
            r.verdict,
            anchor(&r.namespace, &r.release),
            esc(&r.release),
            esc(&r.namespace),
            r.revision,
            r.verdict,
            r.verdict.replace('-', " "),
            r.objects,
            esc(&r.checked)
        );
    }
    out.push_str("</tbody>\n</table>\n");
    for r in releases.iter().filter(|r| !r.shown.is_empty()) {
        let _ = writeln!(
            out,
            "<section class=\"release {}\" id=\"{}\">\n<h2>{} <span class=\"ns\">namespace {}, revision {}</span></h2>",
            r.verdict,
            anchor(&r.namespace, &r.release),
            esc(&r.release),
            esc(&r.namespace),
            r.revision
        );
        out.push_str("<table class=\"objects\">\n<thead><tr><th>Object</th><th>Verdict</th><th>Paths</th><th>Changed by</th></tr></thead>\n<tbody>\n");
        for o in &r.shown {
            let code = |items: &[String], class: &str| {
                items
                    .iter()
                    .map(|i| format!("<code class=\"{class}\">{}</code>", esc(i)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(
                out,
                "<tr class=\"object {}\"><td class=\"id\">{}</td><td class=\"verdict {}\">{}</td><td>{}</td><td>{}</td></tr>",
                o.verdict,
                esc(&o.id),
                o.verdict,
                o.label,
                code(&o.paths, "path"),
                code(&o.managers, "manager")
            );
        }
        out.push_str("</tbody>\n</table>\n</section>\n");
    }
    out.push_str(&super::timeline::section(lives, now));
    let _ = write!(
        out,
        "</main>\n<footer>helm-drift {}: values are never shown here (helm drift check shows them to whoever may read the objects).</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out
}

fn releases_table(out: &mut String, run: &RunReport) {
    out.push_str("<table class=\"releases\">\n<thead><tr><th>Release</th><th>Namespace</th><th>Revision</th><th>Chart</th><th>Verdict</th></tr></thead>\n<tbody>\n");
    for o in &run.outcomes {
        match o {
            Outcome::Checked(r) => {
                let v = r.verdict();
                let words = match v {
                    ReleaseVerdict::InSync => "in sync".to_string(),
                    ReleaseVerdict::Drifted => format!("{} of {} drifted", r.drifted(), r.objects.len()),
                    ReleaseVerdict::Error => format!("error ({} of {} not checked)", r.errors(), r.objects.len()),
                };
                let _ = writeln!(
                    out,
                    "<tr class=\"{}\"><td><a href=\"#{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td class=\"verdict {}\">{}</td></tr>",
                    v.word(),
                    anchor(&r.namespace, &r.release),
                    esc(&r.release),
                    esc(&r.namespace),
                    r.revision,
                    esc(&r.chart),
                    v.word(),
                    esc(&words)
                );
            }
            Outcome::Failed(e) => {
                let _ = writeln!(
                    out,
                    "<tr class=\"error\"><td>{}</td><td>{}</td><td></td><td></td><td class=\"verdict error\">error</td></tr>",
                    esc(&e.release),
                    esc(&e.namespace)
                );
            }
        }
    }
    out.push_str("</tbody>\n</table>\n");
}

fn release(out: &mut String, r: &DriftReport, style: &Style) {
    let v = r.verdict();
    let _ = writeln!(
        out,
        "<section class=\"release {}\" id=\"{}\">\n<h2>{} <span class=\"ns\">namespace {}, revision {} {}{}</span></h2>",
        v.word(),
        anchor(&r.namespace, &r.release),
        esc(&r.release),
        esc(&r.namespace),
        r.revision,
        esc(&r.status),
        if r.chart.is_empty() { String::new() } else { format!(", chart {}", esc(&r.chart)) }
    );
    for f in &r.findings {
        let _ = writeln!(out, "<p class=\"finding\">finding: {}</p>", esc(f));
    }
    for o in r.objects.iter().filter(|o| worth_showing(o, style)) {
        object(out, o, style);
    }
    if let Some(line) = upgrade_command(r, style) {
        let _ = writeln!(
            out,
            "<p>To make the live state the desired state:</p>\n<pre class=\"command\">{}</pre>",
            esc(&line)
        );
    }
    out.push_str("</section>\n");
}

fn object(out: &mut String, o: &ObjectDrift, style: &Style) {
    let kind = o.drift_kind();
    let _ = write!(
        out,
        "<article class=\"object {}\">\n<details open>\n<summary><span class=\"verdict {}\">{}</span> <span class=\"id\">{}</span>",
        kind.word(),
        kind.word(),
        kind.label(),
        esc(&o.id.to_string())
    );
    if let Some(src) = &o.source {
        let _ = write!(out, " <span class=\"source\">from {}</span>", esc(src));
    }
    if let Some(h) = &o.hook {
        let _ = write!(out, " <span class=\"hook\">{} hook</span>", esc(&h.events.join(",")));
    }
    out.push_str("</summary>\n");
    let paths = o.drifted_paths();
    if !paths.is_empty() {
        out.push_str("<p class=\"paths\">Paths: ");
        let list: Vec<String> = paths.iter().map(|p| format!("<code class=\"path\">{}</code>", esc(p))).collect();
        out.push_str(&list.join(", "));
        let managers = o.managers();
        if !managers.is_empty() {
            let list: Vec<String> =
                managers.iter().map(|m| format!("<code class=\"manager\">{}</code>", esc(m))).collect();
            let _ = write!(out, "; changed by {}", list.join(", "));
        }
        out.push_str("</p>\n");
    }
    let lines = evidence(o, style);
    if !lines.is_empty() {
        out.push_str("<ul class=\"evidence\">\n");
        for (tone, line) in lines {
            let class = tone.map_or("plain", tone_class);
            let _ = writeln!(out, "<li class=\"{class}\">{}</li>", esc(&line));
        }
        out.push_str("</ul>\n");
    }
    if let Some(diff) = object_diff(o, style) {
        out.push_str("<pre class=\"diff\">");
        for line in diff.lines() {
            let class = if line.starts_with("+++") || line.starts_with("---") {
                "head"
            } else if line.starts_with('+') {
                "add"
            } else if line.starts_with('-') {
                "del"
            } else if line.starts_with("@@") {
                "hunk"
            } else {
                "ctx"
            };
            // Each line a block of its own (no newline between: `pre` would show it twice).
            let _ = write!(out, "<span class=\"{class}\">{}</span>", esc(line));
        }
        out.push_str("</pre>\n");
    }
    out.push_str("</details>\n</article>\n");
}

fn tone_class(t: super::color::Tone) -> &'static str {
    use super::color::Tone;
    match t {
        Tone::Good => "good",
        Tone::Warn => "warn",
        Tone::Bad | Tone::Alarm => "bad",
        Tone::Note => "note",
        Tone::Dim => "dim",
        Tone::Odd => "odd",
        Tone::Strong => "strong",
    }
}

/// An element id from a release's namespace and name (both DNS labels in a valid release; any
/// other character is replaced).
fn anchor(namespace: &str, release: &str) -> String {
    let clean =
        |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect::<String>();
    format!("release-{}-{}", clean(namespace), clean(release))
}

/// One rule per verdict offered: with its radio button checked, objects of other verdicts and
/// releases without any of it are hidden.
fn filter_rules(kinds: &[(DriftKind, usize)]) -> String {
    let mut out = String::new();
    for (k, _) in kinds {
        let w = k.word();
        let _ = writeln!(
            out,
            "#show-{w}:checked ~ main .object:not(.{w}), #show-{w}:checked ~ main .release:not(:has(.object.{w})) {{ display: none; }}\n#show-{w}:checked ~ header label[for=show-{w}] {{ background: #24292f; color: #fff; }}"
        );
    }
    out
}

const STYLE: &str = "body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1em 2em; color: #24292f; background: #fff; }
input.filter { position: absolute; opacity: 0; pointer-events: none; }
h1 { font-size: 1.6em; margin: .2em 0; }
h1.in-sync { color: #1a7f37; } h1.drift-found { color: #9a6700; } h1.error { color: #cf222e; }
h2 { font-size: 1.2em; margin: 1.4em 0 .4em; } h2 .ns { font-weight: normal; color: #57606a; font-size: .85em; }
nav.filters label { display: inline-block; padding: .15em .6em; margin: .1em; border: 1px solid #d0d7de; border-radius: 1em; cursor: pointer; }
#show-all:checked ~ header label[for=show-all] { background: #24292f; color: #fff; }
table.releases { border-collapse: collapse; margin: 1em 0; width: 100%; }
table.releases th, table.releases td { text-align: left; padding: .3em .7em; border-bottom: 1px solid #d0d7de; }
.verdict.in-sync { color: #1a7f37; } .verdict.drifted, .verdict.changed, .verdict.fields-added, .verdict.taken-over { color: #9a6700; }
.verdict.missing, .verdict.error { color: #cf222e; } .verdict.unknown { color: #8250df; }
.verdict.excluded, .verdict.expected, .verdict.accepted { color: #57606a; }
summary .verdict { font-weight: 600; } summary .id { font-family: ui-monospace, monospace; } summary .source { color: #57606a; font-size: .9em; }
article.object { border: 1px solid #d0d7de; border-radius: 6px; padding: .4em .8em; margin: .5em 0; }
p.paths code, ul.evidence { font-family: ui-monospace, monospace; font-size: .92em; }
ul.evidence { list-style: none; padding-left: .5em; } li.warn { color: #9a6700; } li.note { color: #0969da; } li.bad { color: #cf222e; } li.dim { color: #57606a; }
pre { background: #f6f8fa; padding: .6em .8em; overflow-x: auto; border-radius: 6px; }
pre.diff span { display: block; } pre.diff .add { background: #dafbe1; color: #116329; } pre.diff .del { background: #ffebe9; color: #82071e; }
pre.diff .hunk { color: #0969da; } pre.diff .head { font-weight: 600; }
footer { margin-top: 2em; color: #57606a; font-size: .9em; }
table.objects { border-collapse: collapse; width: 100%; } table.objects th, table.objects td { text-align: left; padding: .25em .6em; border-bottom: 1px solid #d0d7de; vertical-align: top; }
table.objects td.id, table.objects code { font-family: ui-monospace, monospace; font-size: .92em; }
h1.starting { color: #57606a; }
";
