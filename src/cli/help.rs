//! The examples and exit codes at the end of each command's `--help`. Each command's exit codes
//! are written once, in [`EXITS`]: its `--help`, its reference page and the exit codes page are
//! made from them.

pub(crate) const CHECK_HELP: &str = "\
Examples:
  helm drift check web                     # one release in the current namespace
  helm drift check -A -o junit > drift.xml # every release, as a CI report
  helm drift check web -v --ignore kind=Deployment:/spec/replicas
  helm drift check web --hooks             # also the hook objects Helm keeps (ConfigMaps, CRDs...)";

pub(crate) const REPAIR_HELP: &str = "\
Examples:
  helm drift repair web --dry-run          # the plan, validated by server dry-runs
  helm drift repair web --only Deployment/web-api
  helm drift repair web -n shop --upgrade --trust-namespace shop   # through helm upgrade (a new revision)
  helm drift repair web --hooks            # kept hook objects too, without running the hooks
  helm drift repair web --clusters capi --clusters-namespace fleet --cluster fleet/eu";

pub(crate) const RENDER_HELP: &str = "\
Examples:
  helm drift render web                    # does the stored chart still render the same?
  helm drift render web --chart ./charts/web --revision 3";

pub(crate) const ACCEPT_HELP: &str = "\
Examples:
  helm drift accept web                          # everything web drifted by, into ./.helm-drift-baseline.yaml
  helm drift accept web --only Deployment/web --path /spec/replicas
  helm drift accept web --dry-run                # what would be accepted; nothing written
  helm drift accept web --baseline cluster=platform --prune";

pub(crate) const GUARD_HELP: &str = "\
Examples:
  helm drift guard install --all -n shop           # warn on hand edits of shop's releases
  helm drift guard install web -n shop --mode deny --allow-group platform-admins
  helm drift guard install -A --every-kind --dry-run > guard.yaml   # to keep in Git
  helm drift guard status
  helm drift guard remove -n shop";

pub(crate) const WATCH_HELP: &str = "\
Examples:
  helm drift watch -A                              # every release, metrics on :8080
  helm drift watch -A --notify https://hooks.slack.com/services/... --notify-format slack
  helm drift watch -A --repair --repair-selector helm-drift.io/repair=true
  helm drift watch -A --leader-elect --log-format json   # in the cluster (charts/helm-drift)

Endpoints: /metrics (OpenMetrics), /healthz, /readyz (after the first full check).
Runs until SIGINT or SIGTERM.";

pub(crate) const TOP_HELP: &str = "\
Examples:
  helm drift check web
  helm drift check -A --summary
  helm drift repair web --dry-run
  helm drift plan web ./charts/web -f values.yaml

Exit codes: 0 in sync, 2 drift found, 1 error (an error outranks drift); plan: 3 the upgrade would fail";

pub(crate) const PAUSE_HELP: &str = "Examples:
  helm drift pause web -n shop --for 2h --reason \"INC-42: replicas raised by hand\"
  helm drift pause web -n shop --object Deployment/web --for 30m --reason \"debugging\"
  helm drift pause web -n shop --end
  helm drift pause web -n shop --cluster eu --for 1h --reason \"INC-7\"   # a fleet's, in its management cluster

The pause lives in the watcher's namespace (--pause-namespace, $HELM_DRIFT_PAUSE_NAMESPACE),
which whoever may write a release record cannot write. The watcher reports the drift as paused
(helm_drift_release_paused, a DriftPaused Event with the reason, who and until when) and heals
it once the pause ends. `helm drift check` still reports the drift.";

pub(crate) const PLAN_HELP: &str = "\
Examples:
  helm drift plan web ./charts/web -f values-prod.yaml      # what helm upgrade would do now
  helm drift plan web ./charts/web --reuse-values --set image.tag=2.0 -o json";

/// Each command's exit codes, in the order they are read.
pub(crate) const EXITS: &[(&str, &[(u8, &str)])] = &[
    (
        "check",
        &[
            (0, "every checked release is in sync"),
            (2, "drift found"),
            (1, "error: bad input, no such release, an empty selection, unreachable, forbidden (outranks drift)"),
        ],
    ),
    ("render", &[(0, "every document renders as stored"), (2, "some documents render differently"), (1, "error")]),
    (
        "repair",
        &[
            (0, "repaired (or nothing to repair): in sync"),
            (
                2,
                "drift remains (fields added outside Helm kept without --remove-foreign, an object that cannot be repaired), or, with --dry-run, something would change",
            ),
            (1, "error: a step was refused or failed (see which were applied)"),
        ],
    ),
    ("accept", &[(0, "recorded (with --dry-run: shown, nothing written)"), (1, "error")]),
    ("watch", &[(0, "stopped by SIGINT or SIGTERM"), (1, "an error at start")]),
    ("guard", &[(0, "done"), (1, "error (nothing half written)")]),
    ("pause", &[(0, "done"), (1, "error")]),
    (
        "plan",
        &[
            (0, "the upgrade changes nothing"),
            (2, "it changes something"),
            (3, "it would fail (a conflict with another field manager, an immutable field, an object it does not own)"),
            (1, "error, or an object could not be read or dry-run (what the upgrade does to it is unknown)"),
        ],
    ),
    ("version", &[(0, "always")]),
];

/// A command's exit codes (none for a name [`EXITS`] does not list).
pub(crate) fn exits(command: &str) -> &'static [(u8, &'static str)] {
    EXITS.iter().find(|(name, _)| *name == command).map_or(&[], |(_, codes)| codes)
}

/// `--help`'s text after the flags: the examples, then the command's exit codes.
pub(crate) fn after(examples: &str, command: &str) -> String {
    let mut out = format!("{examples}\n\nExit codes:");
    for (code, meaning) in exits(command) {
        let mut line = format!("\n  {code}  ");
        for word in meaning.split(' ') {
            if line.len() + word.len() > 100 {
                out.push_str(line.trim_end());
                line = String::from("\n     ");
            }
            line.push_str(word);
            line.push(' ');
        }
        out.push_str(line.trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_has_its_exit_codes_once() {
        use clap::CommandFactory;
        let cli = crate::cli::Cli::command();
        for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
            assert!(!exits(sub.get_name()).is_empty(), "{} has no exit codes", sub.get_name());
        }
        assert_eq!(
            after("Examples:\n  x", "render"),
            "Examples:\n  x\n\nExit codes:\n  0  every document renders as stored\n  2  some documents render differently\n  1  error"
        );
        let repair = after("", "repair");
        assert!(repair.lines().all(|l| l.len() <= 100), "{repair}");
    }
}
