//! Repair in a working order: a release whose Namespace, CRD, ServiceAccount and Deployment
//! (and a ConfigMap in that Namespace) were all deleted is put back in one run, in Helm's
//! install order, the Namespace and the CRD first and the rest judged again once they are
//! served; an edit the API server can only undo by replacing the object (a field that cannot
//! change) is refused with the `--replace` hint and nothing is half-applied; `--replace`
//! replaces it.

use crate::support::{Env, Helm, eventually};
use std::time::Duration;

helm_matrix! {
    fn a_release_deleted_whole_is_put_back_in_a_working_order(helm: Helm) {
        let env = Env::new(&format!("order-{}", helm.tag()));
        let release = format!("ord{}", helm.tag());
        env.install(helm, &release, "ordered", &[]);
        let extra = format!("{release}-extra");
        let crd = format!("gizmos.{release}.drift.test");
        for (kind, name) in [("deployment", format!("{release}-app")), ("serviceaccount", format!("{release}-runner"))] {
            env.kubectl(&["delete", kind, &name]).success();
        }
        env.kubectl(&["delete", "customresourcedefinition", &crd, "--wait=true"]).success();
        env.kubectl(&["delete", "namespace", &extra, "--wait=true", "--timeout=90s"]).success();
        eventually("the namespace gone", Duration::from_secs(90), || {
            !env.kubectl(&["get", "namespace", &extra]).output().out.status.success()
        });
        let check = env.drift(&["check", &release]).code(2);
        check.stdout_has(&format!("missing      Namespace {extra}")).stdout_has(&format!("missing      CustomResourceDefinition {crd}"));

        // Nothing is written on the word of a record its reader does not trust: refused until trusted.
        let untrusted = env.drift_untrusted(&["repair", &release]).code(1);
        untrusted.stdout_has(&format!("namespace {} is not trusted", env.ns));
        let out = env.drift(&["repair", &release, "--trust-namespace", &env.ns]).code(0);
        let text = out.stdout();
        let order: Vec<usize> = [
            format!("Namespace {extra}"),
            format!("CustomResourceDefinition {crd}"),
            format!("ServiceAccount {}/{release}-runner", env.ns),
            format!("ConfigMap {extra}/{release}-settings"),
            format!("Deployment {}/{release}-app", env.ns),
        ]
        .iter()
        .map(|s| text.find(&format!("recreate {s}: applied")).unwrap_or_else(|| panic!("{s} not recreated:\n{text}")))
        .collect();
        // The foundation first, then the rest in Helm's install order (the ConfigMap in the
        // re-created namespace judged once that namespace was served).
        assert!(order.windows(2).all(|w| w[0] < w[1]), "a working order:\n{text}");
        out.stdout_has(&format!("{release}: in sync"));
        env.drift(&["check", &release]).success();
        // Helm owns what was put back: the next upgrade lands and leaves it in sync.
        let chart = crate::support::chart_path("ordered");
        env.helm(helm, &["upgrade", &release, chart.to_str().unwrap()]).success();
        env.drift(&["check", &release]).success();
    }
}

helm_matrix! {
    fn a_field_that_cannot_change_is_refused_with_the_replace_hint_then_replaced(helm: Helm) {
        let env = Env::new(&format!("immutable-{}", helm.tag()));
        let release = format!("imm{}", helm.tag());
        env.install(helm, &release, "ordered", &[]);
        let config = format!("{release}-config");
        // Frozen by hand with another value: the API server refuses any change to its data now.
        env.merge_patch("configmap", &config, r#"{"immutable":true,"data":{"greeting":"frozen"}}"#);
        env.kubectl(&["delete", "serviceaccount", &format!("{release}-runner")]).success();
        let out = env.drift(&["repair", &release]).code(1);
        out.stdout_has("run again with --replace");
        // All or nothing: the ServiceAccount, which could be made, was not.
        assert!(!env.kubectl(&["get", "serviceaccount", &format!("{release}-runner")]).output().out.status.success());
        assert_eq!(env.get("configmap", &config, "{.data.greeting}"), "frozen");

        let out = env.drift(&["repair", &release, "--replace", "--remove-foreign"]).code(0);
        out.stdout_has(&format!("replace ConfigMap {}/{config}: applied", env.ns));
        assert_eq!(env.get("configmap", &config, "{.data.greeting}"), "hello");
        assert_eq!(env.get("configmap", &config, "{.immutable}"), "", "replaced as recorded: mutable again");
        env.drift(&["check", &release]).success();
        let chart = crate::support::chart_path("ordered");
        env.helm(helm, &["upgrade", &release, chart.to_str().unwrap()]).success();
        env.drift(&["check", &release]).success();
    }
}
