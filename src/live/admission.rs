//! The admission guard's objects in the cluster: ValidatingAdmissionPolicies and their bindings
//! (admissionregistration.k8s.io/v1), and the guards written, as their policies.

use crate::api::ApiError;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
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

/// Why a guard was not written: its policy, or its binding (and what became of the policy then:
/// taken away again, or why not).
pub(crate) enum Unwritten {
    Policy(ApiError),
    Binding { why: ApiError, policy_left: Option<ApiError> },
}

/// Writes guard `name` (server-side apply as `manager`, forced): its policy, then its binding;
/// when the binding cannot be written the policy is taken away again.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn write(
    client: &kube::Client,
    (name, manager): (&str, &str),
    policy: &serde_json::Value,
    binding: &serde_json::Value,
) -> Result<(), Unwritten> {
    let params = PatchParams::apply(manager).force();
    let written = policies(client).patch(name, &params, &Patch::Apply(policy)).await;
    written.map_err(|e| Unwritten::Policy(ApiError::from_kube(&e, "patch", "validatingadmissionpolicies")))?;
    let Err(e) = bindings(client).patch(name, &params, &Patch::Apply(binding)).await else { return Ok(()) };
    let why = ApiError::from_kube(&e, "patch", "validatingadmissionpolicybindings");
    let policy_left = match policies(client).delete(name, &DeleteParams::default()).await {
        Ok(_) => None,
        Err(d) => Some(ApiError::from_kube(&d, "delete", "validatingadmissionpolicies")),
    };
    Err(Unwritten::Binding { why, policy_left })
}

/// Removes guard `name`: its binding first, then its policy; whether there was one.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn remove(client: &kube::Client, name: &str) -> Result<bool, ApiError> {
    let mut found = false;
    for (api, plural) in
        [(bindings(client), "validatingadmissionpolicybindings"), (policies(client), "validatingadmissionpolicies")]
    {
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => found = true,
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(ApiError::from_kube(&e, "delete", plural)),
        }
    }
    Ok(found)
}
