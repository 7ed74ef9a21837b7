//! Two objects of one kind and name in two namespaces of one release: `--only KIND/NAME` names
//! neither (refused, exit 1, both listed, nothing written), `--only NAMESPACE/KIND/NAME` names
//! one and repairs (or accepts) only it.

use crate::support::{Env, Helm};

helm_matrix! {
    fn namesakes_in_two_namespaces_are_told_apart(helm: Helm) {
        let env = Env::new(&format!("namesakes-{}", helm.tag()));
        let other = format!("{}-other", env.ns);
        env.kubectl(&["create", "namespace", &other]).success();
        env.install(helm, "twins", "namesakes", &["--set", &format!("otherNamespace={other}")]);
        let edit = |ns: &str| {
            env.kubectl(&["-n", ns, "patch", "configmap", "dup", "--type", "merge", "-p", r#"{"data":{"greeting":"edited"}}"#]).success();
        };
        let greeting = |ns: &str| env.kubectl(&["-n", ns, "get", "configmap", "dup", "-o", "jsonpath={.data.greeting}"]).success().stdout();
        edit(&env.ns);
        edit(&other);
        let mut listed = [format!("{}/ConfigMap/dup", env.ns), format!("{other}/ConfigMap/dup")];
        listed.sort();
        for command in ["repair", "accept"] {
            let refused = env.drift(&[command, "twins", "--only", "ConfigMap/dup"]).code(1);
            refused.stderr_has("--only ConfigMap/dup names 2 objects of release twins in different namespaces");
            refused.stderr_has(&format!("({}, {})", listed[0], listed[1])).stderr_has("nothing was changed");
        }
        assert_eq!((greeting(&env.ns), greeting(&other)), ("edited".to_string(), "edited".to_string()), "nothing written");
        let none = env.kubectl(&["get", "configmap", "helm-drift-baseline.twins", "--ignore-not-found", "-o", "name"]).success();
        assert!(none.stdout().trim().is_empty(), "no baseline written");
        // The one outside the record's namespace, trusted as the README says; its namesake still
        // drifts after it (exit 2).
        env.drift(&["repair", "twins", "--only", &format!("{other}/cm/dup"), "--trust-namespace", &env.ns])
            .code(2)
            .stdout_has(&format!("repair ConfigMap {other}/dup: applied"));
        assert_eq!((greeting(&env.ns), greeting(&other)), ("edited".to_string(), "hello".to_string()), "only the one named");
        env.drift(&["check", "twins"]).code(2).stdout_has(&format!("ConfigMap {}/dup", env.ns));
        env.drift(&["repair", "twins", "--only", &format!("{}/ConfigMap/dup", env.ns)]).success();
        env.drift(&["check", "twins"]).code(0);
    }
}
