//! How a person names objects of a release (`repair --only`, `accept --only`, and the watcher's
//! own repairs): `NAME`, `KIND/NAME` or `NAMESPACE/KIND/NAME` (the kind as kubectl users write it,
//! case-insensitive). A name that fits objects in more than one namespace (a chart that puts
//! ConfigMap `dup` in two) names none of them: the command refuses it, listing each by its full
//! name, before anything is written.

use super::ObjectId;

impl ObjectId {
    /// The name that selects this object alone: `NAMESPACE/KIND/NAME`, or `KIND/NAME` when it is
    /// cluster-scoped.
    pub(crate) fn selector(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}/{}", self.kind, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }

    /// Whether `selector` names this object.
    pub(crate) fn named_by(&self, selector: &str) -> bool {
        let parts: Vec<&str> = selector.split('/').collect();
        let kind = |k: &str| super::kinds::names_kind(k, &self.kind);
        match parts[..] {
            [name] => name == self.name,
            [k, name] => kind(k) && name == self.name,
            [ns, k, name] => ns == self.namespace.as_deref().unwrap_or_default() && kind(k) && name == self.name,
            _ => false,
        }
    }
}

/// A name given that fits objects in several namespaces.
#[derive(Debug, thiserror::Error)]
#[error(
    "--only {selector} names {} objects of release {release} in different namespaces ({}): name one as NAMESPACE/KIND/NAME; nothing was changed",
    objects.len(),
    objects.join(", ")
)]
pub(crate) struct Ambiguous {
    pub(crate) selector: String,
    pub(crate) release: String,
    pub(crate) objects: Vec<String>,
}

/// Refuses the first name of `only` that fits objects in more than one namespace.
pub(crate) fn one_namespace_each<'a>(
    ids: impl Iterator<Item = &'a ObjectId> + Clone,
    only: &[String],
    release: &str,
) -> Result<(), Ambiguous> {
    for selector in only {
        let named: Vec<&ObjectId> = ids.clone().filter(|id| id.named_by(selector)).collect();
        let first = named.first().map(|id| &id.namespace);
        if named.iter().any(|id| Some(&id.namespace) != first) {
            let mut objects: Vec<String> = named.iter().map(|id| id.selector()).collect();
            objects.sort();
            return Err(Ambiguous { selector: selector.clone(), release: release.to_string(), objects });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_in_two_namespaces_is_refused_and_a_full_one_selects_one() {
        let a = ObjectId::new("v1", "ConfigMap", Some("a"), "dup");
        let b = ObjectId::new("v1", "ConfigMap", Some("b"), "dup");
        let role = ObjectId::new("rbac.authorization.k8s.io/v1", "ClusterRole", None, "dup");
        let ids = [a.clone(), b.clone(), role.clone()];
        assert!(a.named_by("a/ConfigMap/dup") && !b.named_by("a/ConfigMap/dup") && a.named_by("a/cm/dup"));
        assert!(
            role.named_by("ClusterRole/dup")
                && role.named_by("/ClusterRole/dup")
                && !role.named_by("a/ClusterRole/dup")
        );
        assert!(!a.named_by("x/a/ConfigMap/dup"));
        assert_eq!((a.selector(), role.selector()), ("a/ConfigMap/dup".to_string(), "ClusterRole/dup".to_string()));
        let refused = one_namespace_each(ids.iter(), &["ConfigMap/dup".into()], "r").unwrap_err();
        assert_eq!(refused.objects, ["a/ConfigMap/dup", "b/ConfigMap/dup"]);
        assert!(
            refused.to_string().contains("--only ConfigMap/dup names 2 objects of release r in different namespaces")
        );
        assert!(one_namespace_each(ids.iter(), &["dup".into()], "r").is_err(), "a bare name across namespaces");
        assert!(one_namespace_each(ids.iter(), &["b/ConfigMap/dup".into(), "ClusterRole/dup".into()], "r").is_ok());
    }
}
