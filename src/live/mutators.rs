//! What admission may add to an object, as cluster administrators configured it and a reader can
//! read: the mutating webhooks and mutating admission policies (their rules and selectors), the
//! default IngressClass and StorageClass, and a namespace's labels (what a namespace selector
//! matches). Read once per run, each kind in pages sized by bytes and cut at once to what the
//! judge needs; a kind the reader may not list is named, never guessed.

use crate::api::ApiError;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::GroupVersionKind;
use kube::discovery::ApiResource;
use serde_json::{Map, Value};

/// The most objects of one kind kept (a cluster with more webhooks than this is named as such).
const MOST: usize = 256;

/// One mutating webhook or policy: where it says it applies.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mutator {
    /// `mutating webhook NAME (configuration CONFIG)` or `mutating admission policy NAME`.
    pub(crate) name: String,
    /// Its rules (`apiGroups`, `apiVersions`, `resources`, `operations`, `scope`), as written.
    pub(crate) rules: Vec<Value>,
    pub(crate) namespace_selector: Option<Value>,
    pub(crate) object_selector: Option<Value>,
    /// It has match conditions (CEL) a reader does not evaluate: it may or may not apply.
    pub(crate) conditional: bool,
}

/// What the reader could read of admission's configuration.
#[derive(Clone, Debug, Default)]
pub(crate) struct Admission {
    pub(crate) mutators: Vec<Mutator>,
    /// The IngressClasses and StorageClasses marked default (their names).
    pub(crate) default_ingress_classes: Vec<String>,
    pub(crate) default_storage_classes: Vec<String>,
    /// What could not be read (a kind the reader may not list, more objects than kept): what
    /// admission would add there is not excused.
    pub(crate) unread: Vec<String>,
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// Reads admission's configuration (none of it when the cluster serves none).
pub(crate) async fn admission(client: &kube::Client) -> Admission {
    let mut out = Admission::default();
    let webhooks =
        resource("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations");
    match listed(client, &webhooks, webhook_mutators).await {
        Ok(found) => out.mutators.extend(found.into_iter().flatten()),
        Err(why) => out.unread.push(format!("mutating webhooks ({why})")),
    }
    for version in ["v1", "v1beta1", "v1alpha1"] {
        let bindings = resource(
            "admissionregistration.k8s.io",
            version,
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
        );
        let bound = |o: DynamicObject| o.data.pointer("/spec/policyName").and_then(Value::as_str).map(String::from);
        let Ok(bound) = listed(client, &bindings, bound).await else { continue };
        let policies =
            resource("admissionregistration.k8s.io", version, "MutatingAdmissionPolicy", "mutatingadmissionpolicies");
        match listed(client, &policies, |o| policy_mutator(o, &bound)).await {
            Ok(found) => out.mutators.extend(found.into_iter().flatten()),
            Err(why) => out.unread.push(format!("mutating admission policies ({why})")),
        }
        break;
    }
    let ingress = resource("networking.k8s.io", "v1", "IngressClass", "ingressclasses");
    match listed(client, &ingress, |o| default_class(o, &["ingressclass.kubernetes.io/is-default-class"])).await {
        Ok(names) => out.default_ingress_classes = names.into_iter().flatten().collect(),
        Err(why) => out.unread.push(format!("IngressClasses ({why})")),
    }
    let storage = resource("storage.k8s.io", "v1", "StorageClass", "storageclasses");
    let marks = ["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"];
    match listed(client, &storage, |o| default_class(o, &marks)).await {
        Ok(names) => out.default_storage_classes = names.into_iter().flatten().collect(),
        Err(why) => out.unread.push(format!("StorageClasses ({why})")),
    }
    out
}

/// Why a kind of admission's configuration was not read.
#[derive(Debug, thiserror::Error)]
enum Unlisted {
    #[error("more than {MOST}")]
    TooMany,
    #[error(transparent)]
    Api(#[from] ApiError),
}

/// What `keep` takes of each object of a cluster-scoped kind, at most [`MOST`] of them; none
/// when the kind is not served; why not, when it cannot be read (or holds more than kept).
async fn listed<T>(
    client: &kube::Client,
    resource: &ApiResource,
    mut keep: impl FnMut(DynamicObject) -> T,
) -> Result<Vec<T>, Unlisted> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), resource);
    let mut seen = 0;
    let kept = crate::api::list_kept(client, &api, &ListParams::default(), |o| {
        seen += 1;
        (seen <= MOST).then(|| keep(o))
    })
    .await;
    match kept {
        Ok(_) if seen > MOST => Err(Unlisted::TooMany),
        Ok(kept) => Ok(kept),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Vec::new()),
        Err(e) => Err(ApiError::from_kube(&e, "list", &resource.plural).into()),
    }
}

/// The webhooks of one MutatingWebhookConfiguration.
fn webhook_mutators(o: DynamicObject) -> Vec<Mutator> {
    let config = o.metadata.name.unwrap_or_default();
    let hooks = o.data.get("webhooks").and_then(Value::as_array).cloned().unwrap_or_default();
    hooks
        .into_iter()
        .map(|h| Mutator {
            name: format!(
                "mutating webhook {} (configuration {config})",
                h.get("name").and_then(Value::as_str).unwrap_or_default()
            ),
            rules: h.get("rules").and_then(Value::as_array).cloned().unwrap_or_default(),
            namespace_selector: h.get("namespaceSelector").cloned(),
            object_selector: h.get("objectSelector").cloned(),
            conditional: h.get("matchConditions").and_then(Value::as_array).is_some_and(|c| !c.is_empty()),
        })
        .collect()
}

/// A MutatingAdmissionPolicy that a binding of `bound` applies.
fn policy_mutator(o: DynamicObject, bound: &[Option<String>]) -> Option<Mutator> {
    let name = o.metadata.name.unwrap_or_default();
    if !bound.iter().flatten().any(|b| *b == name) {
        return None;
    }
    let constraints = o.data.pointer("/spec/matchConstraints");
    let field = |k: &str| constraints.and_then(|c| c.get(k)).cloned();
    Some(Mutator {
        name: format!("mutating admission policy {name}"),
        rules: field("resourceRules").and_then(|r| r.as_array().cloned()).unwrap_or_default(),
        namespace_selector: field("namespaceSelector"),
        object_selector: field("objectSelector"),
        // Its CEL conditions and its bindings' own match resources are not evaluated here.
        conditional: true,
    })
}

/// The class's name when one of `marks` says it is the default.
fn default_class(o: DynamicObject, marks: &[&str]) -> Option<String> {
    let annotations = o.metadata.annotations.unwrap_or_default();
    marks.iter().any(|m| annotations.get(*m).is_some_and(|v| v == "true")).then_some(o.metadata.name).flatten()
}

/// The labels of namespace `name` (what a namespace selector matches); `None` when it cannot
/// be read.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn namespace_labels(client: &kube::Client, name: &str) -> Option<Map<String, Value>> {
    let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let ns = crate::api::retry(|| api.get_metadata(name)).await.ok()?;
    let labels = ns.metadata.labels.unwrap_or_default();
    Some(labels.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
}
