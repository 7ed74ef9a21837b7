//! `guard`: writes, shows and removes the admission guard (a ValidatingAdmissionPolicy and its
//! binding) for the selected releases: the kinds they contain, in their namespace (or every
//! namespace), in a mode. Nothing half written: a binding that cannot be written takes its
//! policy back with it.

use super::runtime::runtime;
use super::settings::settings;
use crate::cli::{Global, GuardAction, GuardArgs};
use crate::engine::{Selection, Session, scan};
use crate::guard::{GuardInfo, GuardMode, GuardSpec, MANAGER};
use crate::live::admission::Unwritten;
use crate::model::{ExitStatus, Outcome, Progress};
use crate::report::Terminal;
use crate::settings::Settings;
use anyhow::{Context, Result, bail};

/// `guard`, resolved: what to do, and for `install` what to write.
pub(crate) struct GuardSettings {
    settings: Settings,
    action: GuardCommand,
    /// What the config file's rules and expected changes said about their managers.
    notes: Vec<String>,
}

enum GuardCommand {
    Install { request: GuardRequest, dry_run: bool },
    Status,
    Remove { all_namespaces: bool },
}

impl GuardSettings {
    pub(crate) fn resolve(g: &Global, a: GuardArgs) -> Result<GuardSettings> {
        let settings = settings(g)?;
        let (action, notes) = match a.action {
            GuardAction::Install => {
                let selection = a.select.selection("guard", None)?;
                let mode = GuardMode::parse(&a.mode).expect("clap checks the mode");
                let config = crate::policy::config::from_flag(a.config.as_deref())?;
                let (mut managers, notes) = crate::guard::config_managers(&config.rules, &config.expected);
                managers.extend(a.allow_manager);
                let request = GuardRequest {
                    selection,
                    mode,
                    users: a.allow_user,
                    groups: a.allow_group,
                    managers,
                    every_kind: a.every_kind,
                    service_accounts: a.judge_service_accounts,
                };
                (GuardCommand::Install { request, dry_run: a.dry_run }, notes)
            }
            GuardAction::Status => (GuardCommand::Status, Vec::new()),
            GuardAction::Remove => (GuardCommand::Remove { all_namespaces: a.select.all_namespaces }, Vec::new()),
        };
        Ok(GuardSettings { settings, action, notes })
    }
}

/// Writes, shows or removes the guard, and says what it did.
pub(crate) fn execute(s: GuardSettings, printer: &mut Terminal) -> Result<ExitStatus> {
    for note in &s.notes {
        printer.warning(note);
    }
    let settings = &s.settings;
    match s.action {
        GuardCommand::Install { request, dry_run } => {
            match runtime()?.block_on(install(settings, &request, dry_run))? {
                Installed::Written(info) => printer.guard(&[info], "guard written"),
                Installed::Planned(spec) => printer.text(&crate::guard::documents(&spec)),
            }
        }
        GuardCommand::Status => {
            let infos = runtime()?.block_on(status(settings))?;
            printer.guard(&infos, "guards");
        }
        GuardCommand::Remove { all_namespaces } => match runtime()?.block_on(remove(settings, all_namespaces))? {
            Some(name) => printer.text(&format!("removed {name} (its policy and binding)\n")),
            None => printer.text("no guard to remove here\n"),
        },
    }
    Ok(ExitStatus::InSync)
}

/// What `guard install` asks for.
#[derive(Clone, Debug)]
struct GuardRequest {
    pub(crate) selection: Selection,
    pub(crate) mode: GuardMode,
    pub(crate) users: Vec<String>,
    pub(crate) groups: Vec<String>,
    /// Field managers besides Helm's and `kubectl rollout restart`'s.
    pub(crate) managers: Vec<String>,
    /// Every kind (and later ones), not only those the releases contain now.
    pub(crate) every_kind: bool,
    /// Judge service accounts outside kube-system as people.
    pub(crate) service_accounts: bool,
}

/// Whether the API server serves ValidatingAdmissionPolicy (GA in Kubernetes 1.30).
fn served(session: &Session) -> Result<()> {
    let found = session.discovery().groups().any(|g| {
        g.name() == "admissionregistration.k8s.io"
            && g.recommended_resources()
                .iter()
                .any(|(r, _)| r.plural == "validatingadmissionpolicies" && r.version == "v1")
    });
    if !found {
        bail!(
            "the API server at {} does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (Kubernetes 1.30 or later): nothing was written",
            session.cluster().server
        );
    }
    Ok(())
}

/// The guard the request asks for: the kinds of the selected releases (read from the cluster),
/// or every kind once the named releases are found.
async fn plan(session: &Session, settings: &Settings, request: &GuardRequest) -> Result<GuardSpec> {
    let (resources, scaled) = if request.every_kind {
        let scope = (!request.selection.all_namespaces).then_some(session.namespace());
        let (_, missing) = crate::engine::select(session.storage(), &request.selection, scope).await?;
        if let Some(name) = missing.first() {
            bail!("cannot guard release {name:?}: no such release");
        }
        (Vec::new(), Vec::new())
    } else {
        kinds_of(session, settings, &request.selection).await?
    };
    let mut managers: Vec<String> = Vec::new();
    for m in crate::guard::DEFAULT_MANAGERS.iter().map(|m| m.to_string()).chain(request.managers.iter().cloned()) {
        if !managers.contains(&m) {
            managers.push(m);
        }
    }
    Ok(GuardSpec {
        namespace: (!request.selection.all_namespaces).then(|| session.namespace().to_string()),
        releases: request.selection.releases.clone(),
        resources,
        mode: request.mode,
        managers,
        users: request.users.clone(),
        groups: request.groups.clone(),
        service_accounts: request.service_accounts,
        scaled,
    })
}

/// `(group, resource)` of every kind the selected releases contain, and `namespace/name` of
/// their objects with a scale.
async fn kinds_of(
    session: &Session,
    settings: &Settings,
    selection: &Selection,
) -> Result<(Vec<(String, String)>, Vec<String>)> {
    let run = scan(session, settings, selection, &Progress::none()).await?;
    let mut resources: Vec<(String, String)> = Vec::new();
    let mut scaled: Vec<String> = Vec::new();
    for outcome in &run.outcomes {
        let r = match outcome {
            Outcome::Checked(r) => r,
            Outcome::Failed(e) => bail!("cannot guard release {:?}: {}", e.release, e.message),
        };
        for o in &r.objects {
            let at = crate::live::locate(
                session.discovery(),
                &o.id.api_version,
                &o.id.kind,
                o.id.namespace.as_deref(),
                &r.namespace,
            );
            if let Some(at) = at {
                if crate::guard::scalable(&at.resource.group, &at.resource.plural) {
                    let ns = o.id.namespace.as_deref().unwrap_or(&r.namespace);
                    scaled.push(format!("{ns}/{}", o.id.name));
                }
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
    scaled.sort();
    scaled.dedup();
    Ok((resources, scaled))
}

/// What `guard install` did.
enum Installed {
    /// The guard written, as its policy says.
    Written(GuardInfo),
    /// `--dry-run`: the guard it would write.
    Planned(Box<GuardSpec>),
}

/// Writes the guard the request asks for (`dry_run`: only says what it would write).
async fn install(settings: &Settings, request: &GuardRequest, dry_run: bool) -> Result<Installed> {
    let session = Session::open(settings).await?;
    if !dry_run {
        served(&session)?;
    }
    let spec = plan(&session, settings, request).await?;
    if dry_run {
        return Ok(Installed::Planned(Box::new(spec)));
    }
    let name = spec.name();
    let policy = spec.policy();
    match crate::live::admission::write(session.client(), (&name, MANAGER), &policy, &spec.binding()).await {
        Ok(()) => {}
        Err(Unwritten::Policy(e)) => {
            return Err(anyhow::Error::from(e).context(format!("cannot write ValidatingAdmissionPolicy {name}")));
        }
        Err(Unwritten::Binding { why, policy_left }) => {
            // Say what became of the policy: taken back, or left (and how to remove it).
            let policy = match policy_left {
                None => "its policy was removed again".to_string(),
                Some(d) => {
                    format!("its policy could not be removed again ({d}): helm drift guard remove takes it away")
                }
            };
            return Err(anyhow::Error::from(why)
                .context(format!("cannot write ValidatingAdmissionPolicyBinding {name} ({policy})")));
        }
    }
    Ok(Installed::Written(GuardInfo::of(&policy)))
}

/// Every guard written, as its policy says.
async fn status(settings: &Settings) -> Result<Vec<GuardInfo>> {
    let session = Session::open(settings).await?;
    served(&session)?;
    let list = crate::live::admission::guards(session.client(), crate::guard::LABEL)
        .await
        .context("cannot list the guards (ValidatingAdmissionPolicies)")?;
    Ok(GuardInfo::all(&list))
}

/// Removes the guard of the namespace (or of every namespace): binding first, then policy.
/// Returns the name removed, `None` when there was none.
async fn remove(settings: &Settings, all_namespaces: bool) -> Result<Option<String>> {
    let session = Session::open(settings).await?;
    served(&session)?;
    let name = crate::guard::name((!all_namespaces).then_some(session.namespace()));
    let found = crate::live::admission::remove(session.client(), &name)
        .await
        .map_err(|e| anyhow::Error::from(e).context(format!("cannot remove {name}")))?;
    Ok(found.then_some(name))
}
