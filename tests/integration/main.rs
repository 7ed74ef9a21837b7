//! helm-drift's integration tests, one binary: every test runs against the one local control
//! plane of the suite (a namespace each, in parallel), with real helm v3 and v4 installing the
//! project's test charts. Tests that restart or freeze the API server get a second control plane
//! of their own ([`support::Env::disturbable`]). The tools come from `scripts/tools.sh`
//! (`scripts/test.sh` builds them).

// The tests run helpers and read the cluster as its users do: the doors bind the product only.
#![allow(clippy::disallowed_methods)]

/// One test per Helm flavour, each failing on its own: `helm_matrix! { fn name(helm: Helm) {...} }`
/// gives `name::helm3` and `name::helm4` (a loop over both would stop at the first failure and
/// hide whether the other passes).
macro_rules! helm_matrix {
    ($(#[$meta:meta])* fn $name:ident($helm:ident: Helm) $body:block) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            fn run($helm: Helm) $body
            #[test]
            fn helm3() {
                run(Helm::V3)
            }
            #[test]
            fn helm4() {
                run(Helm::V4)
            }
        }
    };
}

mod admission;
mod admission_facts;
mod support;
mod tenancy;
mod trust;

mod audit;
mod baseline;
mod book;
mod book_chart;
mod book_run;
mod borrowed_names;
mod bounded;
mod caaph;
mod chart;
mod check_missing;
mod ci_rights;
mod connection;
mod controllers;
mod dashboard;
mod dashboard_picture;
mod distribution;
mod docs;
mod doors;
mod drift_engine;
mod expected;
mod explain;
mod figures;
mod fleet;
mod fleet_heal;
mod fleet_watch;
mod flux_layout;
mod flux_rules;
mod gate;
mod gitops;
mod guard;
mod helmfile;
mod hooks;
mod hostile;
mod inventory;
mod lifecycle;
mod messages;
mod namesakes;
mod order;
mod pause;
mod pictures;
mod plan;
mod plan_caaph;
mod plan_flux;
mod plan_switch;
mod plugin;
mod real_charts;
mod release;
mod reliability;
mod repair;
mod repair_cases;
mod restart;
mod restore;
mod rights;
mod scan;
mod server;
mod storage;
mod watch;
mod watching;
mod windows;
mod writers;
