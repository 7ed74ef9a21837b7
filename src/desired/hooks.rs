//! Hook objects as Helm created them: each kept hook's manifest parsed (one budget for all of a
//! record's hooks), as Helm sends hooks: without release metadata.

use super::object::{DesiredError, DesiredObject, parse_within};
use crate::model::HookOrigin;
use crate::release::Hook;
use crate::yaml::Budget;

/// The objects of `hooks` (each with the revision whose run made it) of revision `revision`, each
/// with its origin; documents that are not objects apart.
pub(crate) fn hook_objects(hooks: &[(Hook, u32)], revision: u32) -> (Vec<DesiredObject>, Vec<DesiredError>) {
    let total = hooks.iter().map(|(h, _)| h.manifest.len()).sum();
    let mut budget = Budget::for_manifest(total);
    let (mut objects, mut broken) = (Vec::new(), Vec::new());
    for (hook, ran_at) in hooks {
        let origin = HookOrigin {
            events: hook.events.clone(),
            delete_policies: hook.delete_policies.clone(),
            ran_at: *ran_at,
            revision,
        };
        for parsed in parse_within(&hook.manifest, &mut budget) {
            match parsed.map_err(|e| e.at_hook(&hook.path)) {
                Ok(mut o) => {
                    o.source.get_or_insert_with(|| hook.path.clone());
                    o.hook = Some(Box::new(origin.clone()));
                    objects.push(o);
                }
                Err(e) => broken.push(e),
            }
        }
    }
    (objects, broken)
}

impl DesiredError {
    /// The error named after the hook's template.
    fn at_hook(self, path: &str) -> DesiredError {
        let at = format!("hook {path}");
        match self {
            DesiredError::Yaml { source, .. } => DesiredError::Yaml { at, source },
            DesiredError::NotAnObject { field, .. } => DesiredError::NotAnObject { at, field },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(path: &str, manifest: &str) -> Hook {
        Hook {
            name: "h".into(),
            kind: "ConfigMap".into(),
            path: path.into(),
            manifest: manifest.into(),
            events: vec!["post-install".into()],
            ..Hook::default()
        }
    }

    #[test]
    fn hook_objects_carry_their_hook_and_template() {
        let good = hook("c/templates/h.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: h\ndata: {a: b}\n");
        let bad = hook("c/templates/bad.yaml", "kind: ConfigMap\n");
        let (objects, broken) = hook_objects(&[(good, 2), (bad, 2)], 2);
        assert_eq!(objects.len(), 1);
        assert_eq!(objects[0].source.as_deref(), Some("c/templates/h.yaml"));
        assert_eq!(objects[0].hook.as_ref().unwrap().ran_at, 2);
        assert!(objects[0].object.pointer("/metadata/labels").is_none(), "no release metadata on hooks");
        assert_eq!(broken[0].to_string(), "hook c/templates/bad.yaml: not a Kubernetes object (missing apiVersion)");
    }

    #[test]
    fn many_hooks_share_one_budget() {
        let doc = format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata: [{}]\n", "1,".repeat(20_000));
        let hooks: Vec<(Hook, u32)> = (0..60).map(|_| (hook("p", &doc), 1)).collect();
        let (objects, broken) = hook_objects(&hooks, 1);
        assert!(!broken.is_empty() && !objects.is_empty(), "{} {}", objects.len(), broken.len());
    }
}
