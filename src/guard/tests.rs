use super::*;

fn spec(mode: GuardMode) -> GuardSpec {
    GuardSpec {
        namespace: Some("shop".into()),
        releases: vec!["web".into(), "it's".into()],
        resources: vec![("".into(), "configmaps".into()), ("apps".into(), "deployments".into())],
        mode,
        managers: DEFAULT_MANAGERS.iter().map(|m| m.to_string()).collect(),
        users: vec!["ci-bot".into()],
        groups: vec!["platform".into()],
        service_accounts: false,
        scaled: vec!["shop/web".into()],
    }
}

#[test]
fn a_policy_per_namespace_with_the_releases_kinds_and_scale() {
    let p = spec(GuardMode::Warn).policy();
    assert_eq!(p["metadata"]["name"], "helm-drift-guard-shop");
    assert_eq!(p["spec"]["failurePolicy"], "Ignore");
    let rules = p["spec"]["matchConstraints"]["resourceRules"].as_array().unwrap();
    assert_eq!(rules[0]["resources"], json!(["configmaps"]));
    assert_eq!(rules[1]["apiGroups"], json!(["apps"]));
    assert_eq!(rules[1]["resources"], json!(["deployments", "deployments/scale"]));
    let managed = p["spec"]["matchConditions"][1]["expression"].as_str().unwrap();
    assert!(
        managed.starts_with(r#"(request.?subResource.orValue('') == 'scale' && request.namespace + '/' + request.name in ["shop/web"]) ||"#),
        "only the releases' scales: {managed}"
    );
    let conditions: Vec<&str> =
        p["spec"]["matchConditions"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(
        conditions,
        [
            "not-the-control-plane",
            "managed-by-helm",
            "not-being-deleted",
            "a-release-of-the-namespace",
            "a-guarded-release",
            "not-an-allowed-writer"
        ]
    );
    let ours = p["spec"]["matchConditions"][3]["expression"].as_str().unwrap();
    assert_eq!(
        ours,
        r#"oldObject.metadata.?annotations[?'meta.helm.sh/release-namespace'].orValue(request.?namespace.orValue('')) in ["shop"]"#
    );
    let releases = p["spec"]["matchConditions"][4]["expression"].as_str().unwrap();
    assert!(releases.ends_with(r#"in ["web","it's"]"#), "{releases}");
    let check = p["spec"]["validations"][0]["expression"].as_str().unwrap();
    assert_eq!(
        check,
        r#"request.operation == 'UPDATE' && request.options.?fieldManager.orValue('') in ["helm","helm-controller","kubectl-rollout"]"#
    );
    let b = spec(GuardMode::Warn).binding();
    assert_eq!(b["spec"]["validationActions"], json!(["Warn", "Audit"]));
    assert_eq!(b["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"], json!(["shop"]));
}

#[test]
fn modes_and_every_namespace() {
    assert_eq!(spec(GuardMode::Audit).binding()["spec"]["validationActions"], json!(["Audit"]));
    assert_eq!(spec(GuardMode::Deny).binding()["spec"]["validationActions"], json!(["Deny", "Audit"]));
    let deny = spec(GuardMode::Deny).policy();
    assert!(
        deny["spec"]["validations"][0]["expression"].as_str().unwrap().starts_with("request.operation == 'DELETE' ||")
    );
    let all = GuardSpec {
        namespace: None,
        releases: Vec::new(),
        users: Vec::new(),
        groups: Vec::new(),
        ..spec(GuardMode::Warn)
    };
    assert_eq!(all.name(), "helm-drift-guard-all-namespaces");
    assert!(all.binding()["spec"].get("matchResources").is_none());
    assert_eq!(all.policy()["spec"]["matchConditions"].as_array().unwrap().len(), 3);
    assert_eq!(GuardMode::parse("deny"), Some(GuardMode::Deny));
    assert_eq!(GuardMode::parse("block"), None);
}

#[test]
fn status_reads_what_install_wrote() {
    let info = GuardInfo::of(&spec(GuardMode::Deny).policy());
    assert_eq!(
        info,
        GuardInfo {
            name: "helm-drift-guard-shop".into(),
            mode: "deny".into(),
            namespace: "shop".into(),
            releases: "web,it's".into(),
            kinds: Some(3)
        }
    );
    assert!(info.covers("shop", "web") && info.covers("shop", "it's"));
    assert!(!info.covers("shop", "db") && !info.covers("other", "web"));
    let all = GuardInfo { namespace: "*".into(), releases: "*".into(), ..info };
    assert!(all.covers("anywhere", "anything"));
}

#[test]
fn every_kind_covers_every_resource_and_its_scale() {
    let every = GuardSpec { resources: Vec::new(), ..spec(GuardMode::Warn) };
    let rules = &every.policy()["spec"]["matchConstraints"]["resourceRules"];
    assert_eq!(rules[0]["apiGroups"], json!(["*"]));
    assert_eq!(rules[0]["resources"], json!(["*", "*/scale"]));
    assert_eq!(rules.as_array().unwrap().len(), 1);
    assert_eq!(GuardInfo::of(&every.policy()).kinds, None);
}

#[test]
fn service_accounts_are_let_through_unless_judged() {
    let first = |s: &GuardSpec| s.policy()["spec"]["matchConditions"][0]["expression"].as_str().unwrap().to_string();
    assert_eq!(
        first(&spec(GuardMode::Warn)),
        "!request.userInfo.username.startsWith('system:') || request.userInfo.username == 'system:admin'"
    );
    let judged = first(&GuardSpec { service_accounts: true, ..spec(GuardMode::Warn) });
    assert!(judged.contains("startsWith('system:serviceaccount:') && !request.userInfo.username.startsWith('system:serviceaccount:kube-system:')"), "{judged}");
}

/// Names from the cluster or the flags cannot break out of a CEL string literal.
#[test]
fn names_stay_inside_their_cel_strings() {
    let hostile =
        GuardSpec { releases: vec![r#"a" || true || ""#.into(), "b\\".into(), "c'".into()], ..spec(GuardMode::Deny) };
    let e = hostile.policy()["spec"]["matchConditions"][4]["expression"].as_str().unwrap().to_string();
    assert!(e.ends_with(r#"in ["a\" || true || \"","b\\","c'"]"#), "{e}");
}

#[test]
fn the_config_files_writers_are_let_through_by_name() {
    let config = crate::policy::config::parse(
        "expected:\n  - {name: injector, paths: [/spec/caBundle], manager: cainjector, reason: r}\n  - {name: any-kubectl, paths: [/x], manager: 'kubectl.*'}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web}\nspec:\n  ignoreDifferences:\n    - {group: apps, kind: Deployment, managedFieldsManagers: [rollouts-controller]}\n",
        "c.yaml",
    )
    .unwrap();
    let (names, notes) = config_managers(&config.rules, &config.expected);
    assert_eq!(names, ["cainjector", "rollouts-controller"]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("any-kubectl") && notes[0].contains("is a pattern"), "{notes:?}");
}

#[test]
fn a_mode_not_ours_is_unknown_and_the_strongest_guard_is_named() {
    let mut policy = spec(GuardMode::Warn).policy();
    policy["metadata"]["annotations"]["helm-drift.io/guard-mode"] = json!("\u{1b}[2Jdeny");
    let odd = GuardInfo::of(&policy);
    assert_eq!(odd.mode, "unknown");
    let deny = GuardInfo::of(&spec(GuardMode::Deny).policy());
    let warn = GuardInfo { name: "other".into(), ..GuardInfo::of(&spec(GuardMode::Warn).policy()) };
    assert_eq!(covering(&[warn.clone(), deny, odd.clone()], "shop", "web").as_deref(), Some("deny"));
    assert_eq!(covering(&[odd, warn], "shop", "web").as_deref(), Some("warn"));
    assert_eq!(covering(&[], "shop", "web"), None);
}
