//! The one trust decision: whether who acts (a person, the watcher) may read, judge, create or
//! change an object on a release record's word, and on whose rights. Pure: every command and
//! the watcher ask it (the judge before and after reading, repair and self-healing before each
//! write), and it is tested as a table.

use super::origin::helm_owner;
use super::trust::{Acting, Home};
use super::{ObjectId, Refusal};
use serde_json::Value;

/// What is to be done to one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deed {
    /// Read it to compare it (decided before anything is read).
    Read,
    /// Judge it as read and publish the verdict.
    Judge,
    /// Create it again (it is missing).
    Create,
    /// Change it in place (patch, replace, take fields back).
    Change,
}

/// Whose rights a write goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Rights {
    /// The actor's own (a person's credentials, the watcher's ServiceAccount): only for a
    /// record of a namespace the operator trusts.
    Own,
    /// A ServiceAccount (namespace, name) of the record's namespace, impersonated: the API
    /// server then decides what the record's namespace may do.
    ServiceAccount(String, String),
    /// None: the record is not trusted and names no identity of its namespace to write as.
    Nobody,
}

impl Rights {
    /// On whose rights, in words (after "writes with").
    pub(crate) fn words(&self, acting: Acting) -> String {
        match (self, acting) {
            (Rights::Own, Acting::Person) => "your own rights (the record's namespace is trusted)".into(),
            (Rights::Own, Acting::Watcher) => "the watcher's own rights (the record's namespace is trusted)".into(),
            (Rights::ServiceAccount(ns, sa), _) => format!("the rights of ServiceAccount {ns}/{sa} (impersonated)"),
            (Rights::Nobody, _) => "nobody's rights: nothing is written".into(),
        }
    }
}

/// Everything the decision looks at: the record, the operator's trust, the identity, the object.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Question<'a> {
    pub(crate) acting: Acting,
    /// Where the record is stored, its release and the HelmRelease that vouches for it.
    pub(crate) home: Home<'a>,
    /// The operator trusts the records of `home.stored` as their own.
    pub(crate) trusted: bool,
    pub(crate) object: &'a ObjectId,
    /// Where the object lives (`None`: cluster-scoped).
    pub(crate) namespace: Option<&'a str>,
    /// The object as read (`None`: absent, or not read yet).
    pub(crate) live: Option<&'a Value>,
    /// Helm gives the object its ownership metadata (not a hook), so the object can carry
    /// evidence of its release where it lives.
    pub(crate) owned: bool,
}

impl Question<'_> {
    /// Whether the record's word reaches where the object lives without trust: its own
    /// namespace, or an object carrying the origin labels of the HelmRelease that installs it.
    fn in_reach(&self) -> bool {
        self.namespace == Some(self.home.stored) || self.live.is_some_and(|l| self.home.flux_claimed(self.namespace, l))
    }
}

/// Whether `deed` may be done on `q`'s object as `rights` (writes only), or why not.
///
/// - **Read**: a person reads what their rights let them; the watcher reads, for an untrusted
///   record, only the record's namespace and its release's.
/// - **Judge**: outside the record's namespace, an untrusted record is judged only on evidence
///   written where the object lives (Helm's annotations naming the release, a HelmRelease's
///   origin labels). For the watcher, whose words the record's namespace reads, an object that
///   is absent is outside the claim too, so nothing it publishes says whether it exists.
/// - **Create / Change**: with the actor's own rights only for a trusted record; else only as a
///   ServiceAccount of the record's namespace, and outside it only what carries the vouching
///   HelmRelease's origin labels (never created there). A change touches only what Helm's
///   ownership annotations give to the release, as Helm's own adoption rule (a person who trusts
///   the record may also put back an object that names no release: re-created by hand, a hook).
// The refusal is the answer itself, made once per object and read at once: boxing it buys nothing.
#[allow(clippy::result_large_err)]
pub(crate) fn decide(q: &Question<'_>, deed: Deed, rights: &Rights) -> Result<(), Refusal> {
    let home = q.home;
    match deed {
        Deed::Read => {
            let confined = q.acting == Acting::Watcher && !q.trusted;
            let speaks = q.namespace == Some(home.stored) || q.namespace == Some(home.release);
            if confined && !speaks {
                return Err(Refusal::NotCompared { release_ns: home.stored.to_string() });
            }
            Ok(())
        }
        Deed::Judge => {
            decide(q, Deed::Read, rights)?;
            if q.trusted || q.namespace == Some(home.stored) {
                return Ok(());
            }
            let evidence = match (q.acting, q.live) {
                (Acting::Person, None) => true,
                (Acting::Person, Some(live)) => !q.owned || home.claimed(q.namespace, live),
                (Acting::Watcher, Some(live)) => q.owned && home.claimed(q.namespace, live),
                (Acting::Watcher, None) => false,
            };
            match evidence {
                true => Ok(()),
                false => Err(Refusal::OutsideClaim {
                    stored: home.stored.to_string(),
                    release: home.name.to_string(),
                    namespace: q.namespace.map(String::from),
                    helm_release: home.helm_release.map(String::from),
                }),
            }
        }
        Deed::Create | Deed::Change => {
            match rights {
                Rights::Nobody => {
                    return Err(Refusal::Untrusted { namespace: home.stored.to_string(), acting: q.acting });
                }
                Rights::Own if !q.trusted => {
                    return Err(Refusal::Untrusted { namespace: home.stored.to_string(), acting: q.acting });
                }
                _ => {}
            }
            if !q.trusted && !q.in_reach() {
                return Err(Refusal::OutsideNamespace {
                    object: q.object.clone(),
                    namespace: q.namespace.map(String::from),
                    release_ns: home.stored.to_string(),
                });
            }
            if deed == Deed::Create && q.live.is_none() {
                return Ok(()); // missing: created again as the release holds it
            }
            let holder = q.live.and_then(helm_owner);
            if holder == Some((home.release, home.name)) {
                return Ok(());
            }
            // A person who trusts the record puts back, with their own rights, an object that
            // names no release (re-created by hand, a hook Helm never annotates), as they asked.
            if holder.is_none() && q.acting == Acting::Person && q.trusted && *rights == Rights::Own {
                return Ok(());
            }
            Err(Refusal::NotOwned {
                release: (home.release.to_string(), home.name.to_string()),
                holder: holder.map(|(s, n)| (s.to_string(), n.to_string())),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FLUX_NAME_LABEL, FLUX_NAMESPACE_LABEL, RELEASE_NAME_ANNOTATION, RELEASE_NAMESPACE_ANNOTATION};
    use serde_json::json;

    fn helm(ns: &str, release: &str) -> Value {
        json!({"metadata": {"annotations": {RELEASE_NAME_ANNOTATION: release, RELEASE_NAMESPACE_ANNOTATION: ns}}})
    }

    fn flux(ns: &str, release: &str, hr_ns: &str, hr: &str) -> Value {
        let mut v = helm(ns, release);
        v["metadata"]["labels"] = json!({FLUX_NAME_LABEL: hr, FLUX_NAMESPACE_LABEL: hr_ns});
        v
    }

    /// One row: who acts, trusted, the object's namespace, what is live, the deed, the rights,
    /// and the first words of the refusal (`""`: allowed).
    type Row = (Acting, bool, Option<&'static str>, Option<Value>, Deed, Rights, &'static str);

    fn sa(ns: &str) -> Rights {
        Rights::ServiceAccount(ns.into(), "deployer".into())
    }

    fn run(home: Home<'_>, rows: Vec<Row>) {
        for (i, (acting, trusted, namespace, live, deed, rights, want)) in rows.into_iter().enumerate() {
            let object = ObjectId::new("v1", "ConfigMap", namespace, "c");
            let q = Question { acting, home, trusted, object: &object, namespace, live: live.as_ref(), owned: true };
            let got = decide(&q, deed, &rights).err().map(|r| r.to_string()).unwrap_or_default();
            let ok = if want.is_empty() { got.is_empty() } else { got.starts_with(want) };
            assert!(
                ok,
                "row {i}: {acting:?} trusted={trusted} {namespace:?} {deed:?} {rights:?}: got {got:?}, want {want:?}"
            );
        }
    }

    #[test]
    fn a_record_stored_with_its_release() {
        use Acting::{Person, Watcher};
        use Deed::*;
        let home = Home::new("t", "t", "base");
        let ours = || Some(helm("t", "base"));
        let theirs = || Some(helm("t", "other"));
        let nothing = || Some(json!({"metadata": {}}));
        run(
            home,
            vec![
                // Reading: a person reads anywhere; the watcher only its namespaces unless trusted.
                (Person, false, Some("kube-system"), None, Read, Rights::Nobody, ""),
                (Person, false, None, None, Read, Rights::Nobody, ""),
                (Watcher, false, Some("kube-system"), None, Read, Rights::Nobody, "not compared"),
                (Watcher, false, None, None, Read, Rights::Nobody, "not compared"),
                (Watcher, true, None, None, Read, Rights::Own, ""),
                (Watcher, false, Some("t"), None, Read, Rights::Nobody, ""),
                // Judging in its own namespace: always, present or not.
                (Watcher, false, Some("t"), None, Judge, Rights::Nobody, ""),
                (Person, false, Some("t"), nothing(), Judge, Rights::Nobody, ""),
                // Elsewhere: only on the object's own word; absent, the person is told (it is
                // theirs to read), the watcher says nothing of whether it exists.
                (Person, false, None, ours(), Judge, Rights::Nobody, ""),
                (Person, false, None, nothing(), Judge, Rights::Nobody, "outside the claim"),
                (Person, false, None, None, Judge, Rights::Nobody, ""),
                (Person, true, None, nothing(), Judge, Rights::Own, ""),
                // Writing: own rights only when trusted; a ServiceAccount of the namespace inside it.
                (Person, false, Some("t"), ours(), Change, Rights::Own, "namespace t is not trusted"),
                (Person, false, Some("t"), None, Create, Rights::Own, "namespace t is not trusted"),
                (Person, false, Some("t"), None, Create, Rights::Nobody, "namespace t is not trusted"),
                (Watcher, false, Some("t"), ours(), Change, Rights::Nobody, "namespace t is not trusted"),
                (Person, true, Some("t"), ours(), Change, Rights::Own, ""),
                (Person, true, Some("t"), None, Create, Rights::Own, ""),
                (Person, true, None, None, Create, Rights::Own, ""),
                (Person, false, Some("t"), None, Create, sa("t"), ""),
                (Watcher, false, Some("t"), ours(), Change, sa("t"), ""),
                (Watcher, false, None, None, Create, sa("t"), "outside the record's namespace"),
                (Person, false, Some("kube-system"), ours(), Change, sa("t"), "outside the record's namespace"),
                // Whoever writes, only what Helm's annotations give to the release is changed.
                (Person, true, Some("t"), theirs(), Change, Rights::Own, "not owned by release t/base"),
                (Person, true, Some("t"), nothing(), Change, Rights::Own, ""),
                (Watcher, true, Some("t"), nothing(), Change, Rights::Own, "not owned by release t/base"),
                (Person, false, Some("t"), nothing(), Change, sa("t"), "not owned by release t/base"),
                (Watcher, false, Some("t"), theirs(), Change, sa("t"), "not owned by release t/base"),
                // An object that came back is not created over, unless a trusting person asks.
                (Watcher, true, Some("t"), nothing(), Create, Rights::Own, "not owned by release t/base"),
                (Person, true, Some("t"), theirs(), Create, Rights::Own, "not owned by release t/base"),
            ],
        );
    }

    #[test]
    fn a_record_stored_apart_by_a_helmrelease() {
        use Acting::{Person, Watcher};
        use Deed::*;
        let home = Home { helm_release: Some("g"), ..Home::new("s", "v", "v-g") };
        let labelled = || Some(flux("v", "v-g", "s", "g"));
        let other_hr = || Some(flux("v", "v-g", "s", "h"));
        let tenant_hr = || Some(flux("v", "v-g", "v", "g"));
        let victims = || Some(helm("v", "v-g"));
        run(
            home,
            vec![
                (Watcher, false, Some("v"), None, Read, Rights::Nobody, ""),
                (Watcher, false, Some("w"), None, Read, Rights::Nobody, "not compared"),
                (Watcher, false, Some("v"), labelled(), Judge, Rights::Nobody, ""),
                (Watcher, false, Some("v"), other_hr(), Judge, Rights::Nobody, "outside the claim"),
                (Watcher, false, Some("v"), tenant_hr(), Judge, Rights::Nobody, "outside the claim"),
                (Watcher, false, Some("v"), victims(), Judge, Rights::Nobody, "outside the claim"),
                // Absent: the watcher's words are the same as for an object it may not judge.
                (Watcher, false, Some("v"), None, Judge, Rights::Nobody, "outside the claim"),
                (Watcher, true, Some("v"), None, Judge, Rights::Own, ""),
                // Labelled objects in the target only, as the HelmRelease's account; never created.
                (Watcher, false, Some("v"), labelled(), Change, sa("s"), ""),
                (Person, false, Some("v"), labelled(), Change, sa("s"), ""),
                (Person, false, Some("v"), labelled(), Change, Rights::Own, "namespace s is not trusted"),
                (Person, false, Some("v"), victims(), Change, sa("s"), "outside the record's namespace"),
                (Person, false, Some("v"), None, Create, sa("s"), "outside the record's namespace"),
                (Person, true, Some("v"), None, Create, Rights::Own, ""),
                // Labels in a third namespace or on a cluster-scoped object are no evidence:
                // they are not where the HelmRelease installs.
                (Person, false, Some("w"), labelled(), Judge, Rights::Nobody, "outside the claim"),
                (Person, false, None, labelled(), Judge, Rights::Nobody, "outside the claim"),
                (Watcher, false, None, labelled(), Change, sa("s"), "outside the record's namespace"),
                (Person, false, Some("w"), labelled(), Change, sa("s"), "outside the record's namespace"),
            ],
        );
    }

    #[test]
    fn a_hook_outside_its_namespace_carries_no_evidence() {
        let home = Home::new("t", "t", "base");
        let crd = ObjectId::new("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "x");
        let live = json!({"metadata": {}});
        for (acting, live, want) in [
            (Acting::Person, Some(&live), true),
            (Acting::Person, None, true),
            (Acting::Watcher, Some(&live), false),
            (Acting::Watcher, None, false),
        ] {
            let q = Question { acting, home, trusted: false, object: &crd, namespace: None, live, owned: false };
            let allowed = q.acting == Acting::Person || decide(&q, Deed::Read, &Rights::Nobody).is_ok();
            assert_eq!(allowed && decide(&q, Deed::Judge, &Rights::Nobody).is_ok(), want, "{acting:?} {live:?}");
        }
    }
}
