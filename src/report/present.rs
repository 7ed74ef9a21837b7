//! Presentation decisions every format shares: which objects are shown, each object's evidence
//! line by line, how a value is cut around a change, writers' ages, the `--set-json` flags of an
//! explanation, a run's verdict in words. The formats (text, Markdown, HTML, JUnit) lay them out.

use super::color::Tone;
use super::secret;
use super::style::Style;
use crate::model::{
    Actor, Attribution, Audited, Cause, DocChange, DriftKind, DriftReport, Explanation, FieldPath, Method, ObjectDrift,
};
use serde_json::Value;
use std::fmt::Write;

/// Longest rendering of one value before it is cut.
const VALUE_WIDTH: usize = 100;

/// `--set-json 'key=VALUE'` for each value an explained field needs (hidden for secrets).
pub(crate) fn set_flags(e: &Explanation, style: &Style) -> Vec<String> {
    set_pairs(e, style).iter().map(|pair| format!("--set-json '{}'", pair.replace('\'', "'\\''"))).collect()
}

/// `key=JSON` for each value an explained field needs (hidden for secrets unless shown).
pub(crate) fn set_pairs(e: &Explanation, style: &Style) -> Vec<String> {
    let Cause::Values(built) = &e.cause else { return Vec::new() };
    let secret = e.object.is_secret_path(&e.path.pointer()) && !style.show_secrets;
    built
        .set
        .iter()
        .map(|(key, value)| {
            let value = if secret { Value::String(secret::HIDDEN.into()) } else { value.clone() };
            format!("{key}={value}")
        })
        .collect()
}

/// The one `helm upgrade` line with every `--set-json` of the release's explanations.
pub(crate) fn upgrade_command(r: &DriftReport, style: &Style) -> Option<String> {
    let mut sets: Vec<String> = r.explanations.iter().flat_map(|e| set_flags(e, style)).collect();
    let mut seen = std::collections::HashSet::new();
    sets.retain(|s| seen.insert(s.clone()));
    (!sets.is_empty())
        .then(|| format!("helm upgrade {} CHART -n {} --reuse-values {}", r.release, r.namespace, sets.join(" ")))
}

/// Whether an object is shown: everything but in-sync, excluded and expected objects, those too
/// with `-v`; an object outside the record's claim is always named (it was not judged).
pub(crate) fn worth_showing(o: &ObjectDrift, style: &Style) -> bool {
    style.verbose
        || o.outside_claim()
        || !matches!(o.drift_kind(), DriftKind::InSync | DriftKind::Excluded | DriftKind::Expected)
}

/// The unified diff shown under a modified object (secret values hidden unless shown).
pub(crate) fn object_diff(o: &ObjectDrift, style: &Style) -> Option<String> {
    matches!(o.drift_kind(), DriftKind::Changed | DriftKind::FieldsAdded)
        .then(|| super::diff::unified(o, style.context, style.show_secrets))
        .flatten()
}

/// An object's evidence, a line each with its tone (`None`: plain): why it could not be
/// compared, each field that differs with who last wrote it, fields added outside Helm, fields
/// another manager took, accepted drift; with `-v` also expected and ignored differences. The
/// text report writes them under the verdict line; Markdown and HTML list them.
pub(crate) fn evidence(o: &ObjectDrift, style: &Style) -> Vec<(Option<Tone>, String)> {
    let mut out = Vec::new();
    if let Some(reason) = o.reason() {
        out.push((None, reason.to_string()));
    }
    if let Some(why) = &o.flux_left_out {
        out.push((Some(Tone::Note), format!("left alone by repair: {why}")));
    }
    if let Some(writer) = &o.ownership_wiped {
        out.push((
            Some(Tone::Warn),
            format!(
                "its managedFields hold no entry of {writer}, the release's writer: the ownership record was wiped \
                 (or every field taken over), so nothing on it is excused as admission's"
            ),
        ));
    }
    if let Some(d) = &o.deleted_by {
        out.push((Some(Tone::Warn), deletion(d, style)));
    }
    if let (true, Some(Method::ReadOnly { reason })) = (style.verbose, &o.engine) {
        out.push((None, format!("engine: read-only client-side comparison ({reason})")));
    }
    fields(&mut out, o, style);
    if !o.fields.is_empty() && !o.admission.is_empty() {
        out.push((
            Some(Tone::Dim),
            format!(
                "  may be admission's: {} covers this object at create and update, and a rewrite at admission \
                 looks like an edit to the read-only engine (the exact engine's dry-run tells them apart)",
                o.admission.join(" and ")
            ),
        ));
    }
    for a in &o.added {
        let by = match (&a.changed_by, a.manager.is_empty()) {
            (Some(by), _) => format!("added by {}", who(by, style)),
            (None, true) => "added under no field manager; nothing shows Helm's apply made it".to_string(),
            (None, false) => format!("added by {}", a.manager),
        };
        let value = show(o, style, &a.path, a.path.live_pointer(), &a.value);
        out.push((Some(Tone::Note), format!("+ {}: {value} ({by})", a.path)));
    }
    ownership(&mut out, o, style);
    for a in &o.accepted {
        let until = a.until.as_ref().map_or(String::new(), |t| format!(", until {t}"));
        out.push((
            Some(Tone::Dim),
            format!("✓ {} (accepted: {}{until})", a.path, crate::model::accept::said(&a.change)),
        ));
    }
    if style.verbose {
        for e in &o.expected {
            let when = e.changed_by.as_ref().map_or(String::new(), |by| age(by, style));
            let line = match e.path.is_root() {
                true => format!("≈ deleted (expected: {})", e.reason),
                false => {
                    let value = show(o, style, &e.path, e.path.live_pointer(), &e.value);
                    format!("≈ {}: {value} (expected: {}{when})", e.path, e.reason)
                }
            };
            out.push((Some(Tone::Dim), line));
        }
        for v in &o.server_values {
            out.push((
                Some(Tone::Dim),
                format!("= {}: the server's value for the recorded object (owned by {})", v.path, v.manager),
            ));
        }
        for i in &o.ignored {
            out.push((Some(Tone::Dim), format!("= {} ignored ({})", i.path, i.reason)));
        }
    }
    out
}

/// A value of an object as shown, secret values hidden unless shown.
fn masked(o: &ObjectDrift, style: &Style, path: &FieldPath, pointer: Option<String>, v: &Value) -> Value {
    secret::mask(&o.id, &pointer.unwrap_or_else(|| path.pointer()), v, style.show_secrets)
}

fn show(o: &ObjectDrift, style: &Style, path: &FieldPath, pointer: Option<String>, v: &Value) -> String {
    shown(&masked(o, style, path, pointer, v))
}

/// Each field that differs, with who last wrote it.
fn fields(out: &mut Vec<(Option<Tone>, String)>, o: &ObjectDrift, style: &Style) {
    let masked = |path: &FieldPath, pointer: Option<String>, v: &Value| masked(o, style, path, pointer, v);
    let show = |path: &FieldPath, pointer: Option<String>, v: &Value| show(o, style, path, pointer, v);
    for f in &o.fields {
        let (r, l) = (|v| show(&f.path, f.path.recorded_pointer(), v), |v| show(&f.path, f.path.live_pointer(), v));
        let mut line = match (&f.recorded, &f.live) {
            (Some(rv), Some(lv)) => {
                let (r, l) = around_the_change(
                    &shown_whole(&masked(&f.path, f.path.recorded_pointer(), rv)),
                    &shown_whole(&masked(&f.path, f.path.live_pointer(), lv)),
                );
                format!("~ {}: {r} -> {l}", f.path)
            }
            (Some(rv), None) => format!("- {}: {} (removed)", f.path, r(rv)),
            (None, Some(lv)) => format!("+ {}: {} (not in the release)", f.path, l(lv)),
            (None, None) => continue,
        };
        if let Some(by) = &f.changed_by {
            let _ = write!(line, "  ({})", who(by, style));
        }
        out.push((Some(Tone::Warn), line));
        // Under Helm's name (the read-only engine): what the cluster cannot tell is always
        // said; what it told, with -v.
        match &f.provenance {
            Some(p) if !p.decided() => out.push((
                Some(Tone::Note),
                format!(
                    "  ? not known to be Helm's apply, so counted as drift: {} (the exact engine, or an expected rule naming the path, settles it)",
                    p.evidence
                ),
            )),
            Some(p) if style.verbose => {
                let said = if p.admitted() { "Helm's apply (--strict counts it)" } else { "not Helm's apply" };
                out.push((Some(Tone::Dim), format!("  = {said}: {}", p.evidence)));
            }
            _ => {}
        }
    }
}

/// Who owns the object's recorded fields besides Helm, and what the next upgrade does with them.
fn ownership(out: &mut Vec<(Option<Tone>, String)>, o: &ObjectDrift, style: &Style) {
    // A re-created object tells its own short story; its fields one by one only with -v.
    if let Some(by) = &o.recreated {
        let when = age(by, style);
        let when = when.strip_prefix(", ").map_or(String::new(), |w| format!(" ({w})"));
        let values = if o.fields.is_empty() && o.added.is_empty() { ", values as recorded" } else { "" };
        out.push((Some(Tone::Warn), format!("re-created by {}{}{when}{values}", by.manager, audited(by))));
    }
    let listed = o.recreated.is_none() || style.verbose;
    for d in o.disowned.iter().filter(|_| listed) {
        let owner = if d.shared { "shared by Helm with" } else { "owned by" };
        let helm = if d.shared { "" } else { ", not by Helm" };
        out.push((Some(Tone::Warn), format!("! {}: {owner} {}{helm} (the value is the release's)", d.path, d.manager)));
    }
    if !listed && !o.disowned.is_empty() {
        let owners = o.disowned.iter().fold(Vec::<&str>::new(), |mut seen, d| {
            if !seen.contains(&d.manager.as_str()) {
                seen.push(&d.manager);
            }
            seen
        });
        let next = if o.apply.is_server_side() {
            "a helm upgrade (server-side apply) that changes them will conflict; helm drift repair gives them back to Helm"
        } else {
            "the release is applied client-side, so the next helm upgrade writes them without a conflict"
        };
        out.push((
            None,
            format!(
                "the {} recorded field(s) are owned by {}, not by Helm: {next} (-v lists them)",
                o.disowned.len(),
                owners.join(", ")
            ),
        ));
    } else if !o.disowned.is_empty() {
        let next = if o.apply.is_server_side() {
            "a helm upgrade (server-side apply) that changes these fields will conflict, one that keeps their values will not; helm drift repair gives them back to Helm"
        } else {
            "the release is applied client-side, so the next helm upgrade writes these fields without a conflict"
        };
        out.push((None, next.into()));
    }
}

/// `kubectl-edit by alice@example.com, 12 min ago`: the writer's manager, who the audit says
/// made the write (when it was read), and when.
pub(crate) fn who(by: &Attribution, style: &Style) -> String {
    format!("{}{}{}", crate::model::manager_shown(&by.manager), audited(by), age(by, style))
}

/// ` by alice@example.com`, `, no audit record`, or nothing when no audit was read.
fn audited(by: &Attribution) -> String {
    match &by.audit {
        None => String::new(),
        Some(Audited::Found(a)) => format!(" by {}", person(a)),
        Some(Audited::NoRecord(why)) => format!(", {why}"),
    }
}

/// `alice@example.com [team-a] via admin`: a user, the groups that decided, who impersonated.
pub(crate) fn person(a: &Actor) -> String {
    let groups = if a.groups.is_empty() { String::new() } else { format!(" [{}]", a.groups.join(", ")) };
    let via = a.impersonated_by.as_ref().map_or(String::new(), |i| format!(" via {i}"));
    format!("{}{groups}{via}", a.user)
}

/// The line of a deleted object with the audit read: who deleted it, with what, when.
fn deletion(audited: &Audited, style: &Style) -> String {
    match audited {
        Audited::Found(a) => {
            let client = a.user_agent.split(' ').next().unwrap_or_default();
            let how = if a.verb == "deletecollection" {
                " with a deletecollection of its kind in its namespace (whether it matched this object, the audit does not say)"
            } else {
                ""
            };
            format!("deleted by {}{how} ({client}{})", person(a), age_at(Some(&a.time), style))
        }
        Audited::NoRecord(why) => format!("deleted: {why}"),
    }
}

/// `, 12 min ago` from a writer's time and the report's, or nothing when either is unknown.
pub(crate) fn age(by: &Attribution, style: &Style) -> String {
    age_at(by.time.as_deref(), style)
}

fn age_at(time: Option<&str>, style: &Style) -> String {
    let (Some(now), Some(time)) = (style.now, time.and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok())) else {
        return String::new();
    };
    let secs = now.as_second().saturating_sub(time.as_second()).max(0);
    match secs {
        0..60 => format!(", {secs} s ago"),
        60..3600 => format!(", {} min ago", secs / 60),
        3600..172_800 => format!(", {} h ago", secs / 3600),
        _ => format!(", {} days ago", secs / 86_400),
    }
}

/// A value as shown to people: compact JSON, cut when long; the secret marker bare.
pub(crate) fn shown(v: &Value) -> String {
    around_the_change(&shown_whole(v), "").0
}

/// A value as shown to people, whole.
pub(crate) fn shown_whole(v: &Value) -> String {
    if v.as_str() == Some(secret::HIDDEN) {
        return secret::HIDDEN.to_string();
    }
    v.to_string()
}

/// How much of what two long values share is kept before the first difference.
const LEAD: usize = 24;

/// Two values as shown side by side: each cut to [`VALUE_WIDTH`], starting a little before
/// where they first differ when that is further in (`...` marks what is left out), so that an
/// argument appended to a long list or a tag changed in a long image reference stays in sight.
pub(crate) fn around_the_change(recorded: &str, live: &str) -> (String, String) {
    let (r, l): (Vec<char>, Vec<char>) = (recorded.chars().collect(), live.chars().collect());
    let first = r.iter().zip(&l).take_while(|(a, b)| a == b).count();
    let start = if r.len().max(l.len()) > VALUE_WIDTH && first > LEAD + 3 { first - LEAD } else { 0 };
    let cut = |text: &[char]| {
        let lead = if start > 0 { "..." } else { "" };
        let rest = &text[start.min(text.len())..];
        let tail = if rest.len() > VALUE_WIDTH { "..." } else { "" };
        format!("{lead}{}{tail}", rest.iter().take(VALUE_WIDTH).collect::<String>())
    };
    (cut(&r), cut(&l))
}

/// Both sides of a change as they may be shown (secret values hidden unless `show`).
pub(crate) fn sides(change: &DocChange, show: bool) -> (String, String) {
    let (stored, rendered) = match change {
        DocChange::Changed { stored, rendered } => (Some(stored.as_str()), Some(rendered.as_str())),
        DocChange::OnlyStored(s) => (Some(s.as_str()), None),
        DocChange::OnlyRendered(s) => (None, Some(s.as_str())),
    };
    secret::mask_documents(stored, rendered, show)
}

/// A run's verdict in words from its release counts (errors, then drift): the headline of the
/// Markdown and HTML reports and of the watcher's page.
pub(crate) fn run_verdict(errors: usize, drifted: usize) -> &'static str {
    match (errors, drifted) {
        (0, 0) => "in sync",
        (0, _) => "drift found",
        _ => "error",
    }
}

/// `s` after a count other than one.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    /// Long values are shown from a little before where they first differ.
    #[test]
    fn long_values_are_shown_around_the_change() {
        let args = |extra: &str| {
            let mut a: Vec<String> = (0..12).map(|i| format!("--flag-number-{i}=value")).collect();
            if !extra.is_empty() {
                a.push(extra.into());
            }
            serde_json::to_string(&a).unwrap()
        };
        let (r, l) = super::around_the_change(&args(""), &args("--v=5"));
        assert!(l.contains("--v=5") && l.starts_with("...") && r.starts_with("..."), "{r} -> {l}");
        assert!(l.chars().count() <= super::VALUE_WIDTH + 6, "{l}");
        let digest = format!("\"registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:{}\"", "5".repeat(64));
        let (r, l) = super::around_the_change(&digest, "\"registry.k8s.io/ingress-nginx/controller:v1.0.0\"");
        assert!(r.contains("v1.15.1") && l.ends_with("v1.0.0\""), "{r} -> {l}");
        assert_eq!(super::around_the_change("\"short\"", "\"shirt\""), ("\"short\"".into(), "\"shirt\"".into()));
    }
}
