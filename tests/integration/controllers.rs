//! Fields built-in controllers write into a chart's objects by design (the aggregated
//! ClusterRole's rules, a service account token's data, a statically bound volume's claim, a
//! finished Job deleted after its TTL) are expected, with the controller named, in both engines
//! and on both Helms; an edit of what the chart itself decides is still drift.

use crate::support::{Env, Helm, eventually};
use std::time::Duration;

helm_matrix! {
    fn what_controllers_write_by_design_is_expected(helm: Helm) {
        let env = Env::new(&format!("ctl-{}", helm.tag()));
        env.install(helm, "ctl", "controlled", &[]);
        let aggregate = format!("{}-ctl-aggregate", env.ns);
        let limit = Duration::from_secs(60);
        eventually("the aggregation controller fills the rules", limit, || {
            env.get("clusterrole", &aggregate, "{.rules[0].resources[0]}") == "configmaps"
        });
        eventually("the token controller fills the token", limit, || {
            !env.get("secret", "ctl-robot-token", "{.data.token}").is_empty()
        });
        eventually("the binder binds the claim", limit, || env.get("pvc", "ctl-data", "{.status.phase}") == "Bound");
        for engine in [&[][..], &["--read-only"][..]] {
            let args = [&["check", "ctl"][..], engine].concat();
            env.drift(&args).code(0).stdout_has("ctl: in sync (7 objects)");
            let args = [&["check", "ctl", "-v"][..], engine].concat();
            env.drift(&args).code(0).stdout_has("(expected: rules gathered from the ClusterRoles its aggregationRule selects (clusterrole-aggregation-controller)");
        }
        // What the TTL controller does to a finished Job: gone by design.
        env.kubectl(&["delete", "job", "ctl-once", "--cascade=background"]).success();
        env.drift(&["check", "ctl", "-v"])
            .code(0)
            .stdout_has("expected     Job")
            .stdout_has("deleted once finished, as its ttlSecondsAfterFinished asks (the TTL-after-finished controller)");
        env.drift(&["check", "ctl", "--strict"]).code(2).stdout_has("missing      Job");
        // The chart's own decision, edited by hand, is drift in both engines.
        let patch = r#"{"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"team":"anyone"}}]}}"#;
        env.kubectl(&["patch", "clusterrole", &aggregate, "--type", "merge", "-p", patch]).success();
        for engine in [&[][..], &["--read-only"][..]] {
            let args = [&["check", "ctl"][..], engine].concat();
            env.drift(&args).code(2).stdout_has("aggregationRule.clusterRoleSelectors");
        }
    }
}
