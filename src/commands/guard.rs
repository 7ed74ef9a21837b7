//! `guard`: writes, shows and removes the admission guard (a ValidatingAdmissionPolicy and its
//! binding) for the selected releases: the kinds they contain, in their namespace (or every
//! namespace), in a mode. Nothing half written: a binding that cannot be written takes its
//! policy back with it.

use crate::api::ApiError;
use crate::engine::{Selection, Session, scan};
use crate::guard::{GuardInfo, GuardSpec, LABEL, MANAGER, Mode};
use crate::live::admission::{bindings, policies};
use crate::model::{Outcome, Progress};
use crate::settings::Settings;
use anyhow::{Context, Result, bail};
use kube::api::{DeleteParams, Patch, PatchParams};

/// What `guard install` asks for.
#[derive(Clone, Debug)]
pub struct GuardRequest {
    pub selection: Selection,
    pub mode: Mode,
    pub users: Vec<String>,
    pub groups: Vec<String>,
    /// Field managers besides Helm's and `kubectl rollout restart`'s.
    pub managers: Vec<String>,
}

/// Whether the API server serves ValidatingAdmissionPolicy (GA in Kubernetes 1.30).
fn served(session: &Session) -> Result<()> {
    let found = session.discovery.groups().any(|g| {
        g.name() == "admissionregistration.k8s.io"
            && g.recommended_resources()
                .iter()
                .any(|(r, _)| r.plural == "validatingadmissionpolicies" && r.version == "v1")
    });
    if !found {
        bail!(
            "the API server at {} does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (Kubernetes 1.30 or later): nothing was written",
            session.cluster.server
        );
    }
    Ok(())
}

/// Writes the guard for the selected releases; says what it covers.
pub async fn install(settings: &Settings, request: &GuardRequest) -> Result<GuardInfo> {
    let session = Session::open(settings).await?;
    served(&session)?;
    let run = scan(&session, settings, &request.selection, &Progress::none()).await?;
    let mut resources: Vec<(String, String)> = Vec::new();
    for outcome in &run.outcomes {
        let r = match outcome {
            Outcome::Checked(r) => r,
            Outcome::Failed(e) => bail!("cannot guard release {:?}: {}", e.release, e.message),
        };
        for o in &r.objects {
            let at = crate::live::locate(
                &session.discovery,
                &o.id.api_version,
                &o.id.kind,
                o.id.namespace.as_deref(),
                &r.namespace,
            );
            if let Some(at) = at {
                let key = (at.resource.group.clone(), at.resource.plural.clone());
                if !resources.contains(&key) {
                    resources.push(key);
                }
            }
        }
    }
    if resources.is_empty() {
        bail!("no release selected has an object to guard");
    }
    resources.sort();
    let mut managers: Vec<String> = crate::guard::DEFAULT_MANAGERS.iter().map(|m| m.to_string()).collect();
    managers.extend(request.managers.iter().cloned());
    let spec = GuardSpec {
        namespace: (!request.selection.all_namespaces).then(|| session.namespace.clone()),
        releases: request.selection.releases.clone(),
        resources,
        mode: request.mode,
        managers,
        users: request.users.clone(),
        groups: request.groups.clone(),
    };
    let client = &session.cluster.client;
    let params = PatchParams::apply(MANAGER).force();
    let name = spec.name();
    let policy = spec.policy();
    policies(client)
        .patch(&name, &params, &Patch::Apply(&policy))
        .await
        .map_err(|e| ApiError::from_kube(&e, "patch", "validatingadmissionpolicies"))
        .with_context(|| format!("cannot write ValidatingAdmissionPolicy {name}"))?;
    if let Err(e) = bindings(client).patch(&name, &params, &Patch::Apply(&spec.binding())).await {
        let _ = policies(client).delete(&name, &DeleteParams::default()).await;
        return Err(anyhow::Error::from(ApiError::from_kube(&e, "patch", "validatingadmissionpolicybindings"))
            .context(format!("cannot write ValidatingAdmissionPolicyBinding {name} (its policy was removed again)")));
    }
    Ok(GuardInfo::of(&policy))
}

/// Every guard written, as its policy says.
pub async fn status(settings: &Settings) -> Result<Vec<GuardInfo>> {
    let session = Session::open(settings).await?;
    served(&session)?;
    let list = crate::live::admission::guards(&session.cluster.client, LABEL)
        .await
        .context("cannot list the guards (ValidatingAdmissionPolicies)")?;
    Ok(list.iter().map(GuardInfo::of).collect())
}

/// Removes the guard of the namespace (or of every namespace): binding first, then policy.
/// Returns the name removed, `None` when there was none.
pub async fn remove(settings: &Settings, all_namespaces: bool) -> Result<Option<String>> {
    let session = Session::open(settings).await?;
    served(&session)?;
    let name = crate::guard::name((!all_namespaces).then_some(session.namespace.as_str()));
    let client = &session.cluster.client;
    let mut found = false;
    for api in [bindings(client), policies(client)] {
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => found = true,
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => {
                return Err(anyhow::Error::from(ApiError::from_kube(&e, "delete", "validatingadmissionpolicies"))
                    .context(format!("cannot remove {name}")));
            }
        }
    }
    Ok(found.then_some(name))
}
