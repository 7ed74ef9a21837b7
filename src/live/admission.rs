//! The admission guard's objects in the cluster: ValidatingAdmissionPolicies and their bindings
//! (admissionregistration.k8s.io/v1), and the guards written, as their policies.

use crate::api::ApiError;
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;

pub(crate) fn policies(client: &kube::Client) -> Api<DynamicObject> {
    admission(client, "ValidatingAdmissionPolicy", "validatingadmissionpolicies")
}

pub(crate) fn bindings(client: &kube::Client) -> Api<DynamicObject> {
    admission(client, "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings")
}

fn admission(client: &kube::Client, kind: &str, plural: &str) -> Api<DynamicObject> {
    let r = ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    };
    Api::all_with(client.clone(), &r)
}

/// The policies carrying `label=true` (the guards written, by `helm drift guard` or the chart),
/// as JSON.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn guards(client: &kube::Client, label: &str) -> Result<Vec<serde_json::Value>, ApiError> {
    let list = policies(client)
        .list(&ListParams::default().labels(&format!("{label}=true")))
        .await
        .map_err(|e| ApiError::from_kube(&e, "list", "validatingadmissionpolicies"))?;
    Ok(list.items.iter().filter_map(|p| serde_json::to_value(p).ok()).collect())
}
