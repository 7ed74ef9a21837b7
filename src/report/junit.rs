//! `-o junit`: a test suite per release, a test case per object, a failure per drifted object.
//! In a fleet check, each suite and class name starts with the release's cluster.

use super::style::Style;
use super::text;
use crate::model::{DriftKind, FleetReport, Outcome, RunReport};
use std::fmt::Write;

/// Test suites and their counts.
#[derive(Default)]
struct Suites {
    text: String,
    tests: usize,
    failures: usize,
    errors: usize,
}

impl Suites {
    fn document(self) -> String {
        let Suites { text, tests, failures, errors } = self;
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"helm-drift\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n{text}</testsuites>\n"
        )
    }
}

pub(crate) fn run(run: &RunReport, style: &Style) -> String {
    let mut suites = Suites::default();
    add(&mut suites, run, style, "");
    suites.document()
}

/// A fleet: every cluster's suites, named `cluster/namespace/release`.
pub(crate) fn fleet(fleet: &FleetReport, style: &Style) -> String {
    let mut suites = Suites::default();
    for c in &fleet.clusters {
        add(&mut suites, &c.run, style, &format!("{}/", c.cluster));
    }
    suites.document()
}

/// Adds a run's suites, each name and class name after `prefix`.
fn add(all: &mut Suites, run: &RunReport, style: &Style, prefix: &str) {
    let plain = Style { color: false, verbose: false, ..style.clone() };
    let Suites { text: suites, tests, failures, errors } = all;
    for o in &run.outcomes {
        match o {
            Outcome::Checked(r) => {
                let f = r.drifted();
                let e = r.errors();
                let skipped = r.objects.iter().filter(|o| o.drift_kind() == DriftKind::Excluded).count();
                *tests += r.objects.len();
                *failures += f;
                *errors += e;
                let _ = writeln!(
                    suites,
                    "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{f}\" errors=\"{e}\" skipped=\"{skipped}\">",
                    esc(&format!("{prefix}{}/{}", r.namespace, r.release)),
                    r.objects.len()
                );
                for obj in &r.objects {
                    let name = esc(&obj.id.to_string());
                    let hooks = if obj.hook.is_some() { ".hooks" } else { "" };
                    let class = esc(&format!("{prefix}{}.{}{hooks}", r.namespace, r.release));
                    let _ = write!(suites, "    <testcase classname=\"{class}\" name=\"{name}\"");
                    let mut detail = String::new();
                    text::object(&mut detail, obj, &plain);
                    let word = obj.drift_kind().word();
                    let reason = obj.reason().unwrap_or_default();
                    match obj.drift_kind() {
                        DriftKind::InSync | DriftKind::Expected | DriftKind::Accepted => suites.push_str("/>\n"),
                        DriftKind::Excluded => {
                            let _ =
                                writeln!(suites, ">\n      <skipped message=\"{}\"/>\n    </testcase>", esc(reason));
                        }
                        DriftKind::Error => {
                            let _ = writeln!(
                                suites,
                                ">\n      <error message=\"{}\">{}</error>\n    </testcase>",
                                esc(reason),
                                esc(&detail)
                            );
                        }
                        _ => {
                            let _ = writeln!(
                                suites,
                                ">\n      <failure message=\"{word}\" type=\"drift\">{}</failure>\n    </testcase>",
                                esc(&detail)
                            );
                        }
                    }
                }
                suites.push_str("  </testsuite>\n");
            }
            Outcome::Failed(e) if e.refused => {
                *tests += 1;
                let _ = writeln!(
                    suites,
                    "  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\">\n    <testcase classname=\"{}\" name=\"release\">\n      <skipped message=\"{}\"/>\n    </testcase>\n  </testsuite>",
                    esc(&format!("{prefix}{}/{}", e.namespace, e.release)),
                    esc(&format!("{prefix}{}.{}", e.namespace, e.release)),
                    esc(&format!("refused: {}", e.message))
                );
            }
            Outcome::Failed(e) => {
                *tests += 1;
                *errors += 1;
                let _ = writeln!(
                    suites,
                    "  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"1\">\n    <testcase classname=\"{}\" name=\"release\">\n      <error message=\"{}\"/>\n    </testcase>\n  </testsuite>",
                    esc(&format!("{prefix}{}/{}", e.namespace, e.release)),
                    esc(&format!("{prefix}{}.{}", e.namespace, e.release)),
                    esc(&e.message)
                );
            }
        }
    }
}

/// Escapes text for XML (and HTML) attributes and content; drops control characters XML cannot
/// hold.
pub(super) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_xml() {
        assert_eq!(esc("a<b>&\"c'\u{1}"), "a&lt;b&gt;&amp;&quot;c&apos;");
    }
}
