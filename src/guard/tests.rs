use super::*;

fn spec(mode: Mode) -> GuardSpec {
    GuardSpec {
        namespace: Some("shop".into()),
        releases: vec!["web".into(), "it's".into()],
        resources: vec![("".into(), "configmaps".into()), ("apps".into(), "deployments".into())],
        mode,
        managers: DEFAULT_MANAGERS.iter().map(|m| m.to_string()).collect(),
        users: vec!["ci-bot".into()],
        groups: vec!["platform".into()],
    }
}

#[test]
fn a_policy_per_namespace_with_the_releases_kinds_and_scale() {
    let p = spec(Mode::Warn).policy();
    assert_eq!(p["metadata"]["name"], "helm-drift-guard-shop");
    assert_eq!(p["spec"]["failurePolicy"], "Ignore");
    let rules = p["spec"]["matchConstraints"]["resourceRules"].as_array().unwrap();
    assert_eq!(rules[0]["resources"], json!(["configmaps"]));
    assert_eq!(rules[1]["apiGroups"], json!(["apps"]));
    assert_eq!(rules[1]["resources"], json!(["deployments", "deployments/scale"]));
    let conditions: Vec<&str> =
        p["spec"]["matchConditions"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(conditions, ["not-the-control-plane", "managed-by-helm", "a-guarded-release", "not-an-allowed-writer"]);
    let releases = p["spec"]["matchConditions"][2]["expression"].as_str().unwrap();
    assert!(releases.ends_with("in ['web', 'it\\'s']"), "{releases}");
    let check = p["spec"]["validations"][0]["expression"].as_str().unwrap();
    assert_eq!(
        check,
        "request.operation == 'UPDATE' && request.options.?fieldManager.orValue('') in ['helm', 'kubectl-rollout']"
    );
    let b = spec(Mode::Warn).binding();
    assert_eq!(b["spec"]["validationActions"], json!(["Warn", "Audit"]));
    assert_eq!(b["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"], json!(["shop"]));
}

#[test]
fn modes_and_every_namespace() {
    assert_eq!(spec(Mode::Audit).binding()["spec"]["validationActions"], json!(["Audit"]));
    assert_eq!(spec(Mode::Deny).binding()["spec"]["validationActions"], json!(["Deny", "Audit"]));
    let deny = spec(Mode::Deny).policy();
    assert!(
        deny["spec"]["validations"][0]["expression"].as_str().unwrap().starts_with("request.operation == 'DELETE' ||")
    );
    let all =
        GuardSpec { namespace: None, releases: Vec::new(), users: Vec::new(), groups: Vec::new(), ..spec(Mode::Warn) };
    assert_eq!(all.name(), "helm-drift-guard-all-namespaces");
    assert!(all.binding()["spec"].get("matchResources").is_none());
    assert_eq!(all.policy()["spec"]["matchConditions"].as_array().unwrap().len(), 2);
    assert_eq!(Mode::parse("deny"), Some(Mode::Deny));
    assert_eq!(Mode::parse("block"), None);
}

#[test]
fn status_reads_what_install_wrote() {
    let info = GuardInfo::of(&spec(Mode::Deny).policy());
    assert_eq!(
        info,
        GuardInfo {
            name: "helm-drift-guard-shop".into(),
            mode: "deny".into(),
            namespace: "shop".into(),
            releases: "web,it's".into(),
            kinds: 3
        }
    );
    assert!(info.covers("shop", "web") && info.covers("shop", "it's"));
    assert!(!info.covers("shop", "db") && !info.covers("other", "web"));
    let all = GuardInfo { namespace: "*".into(), releases: "*".into(), ..info };
    assert!(all.covers("anywhere", "anything"));
}
