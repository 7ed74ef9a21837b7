//! The drift rules of the Flux HelmRelease that installs a release, read from the cluster: the
//! HelmRelease of the record's own namespace whose spec names the release, its target and its
//! storage there (as helm-controller finds the release it manages). Its namespace's editors
//! write it, as they write the record: its rules speak for the objects judged for that record
//! and no other. A rule that cannot be read is named and left out (more is reported, never
//! less); `driftDetection.mode` changes nothing (helm-drift reports whatever Flux corrects).

use super::Session;
use crate::model::{DRIFT_BYTES, DriftSpec, Home};
use crate::policy::flux::{HelmReleaseRules, drift_rules};

/// The rules of the HelmRelease that installs the release at `home` (`trusted`: the operator
/// trusts its namespace), each problem in `notes`.
pub(super) async fn read(
    session: &Session,
    home: Home<'_>,
    trusted: bool,
    notes: &mut Vec<String>,
) -> HelmReleaseRules {
    let at = crate::live::locate(session.discovery(), "helm.toolkit.fluxcd.io/v2", "HelmRelease", None, home.stored);
    if at.is_none() {
        return HelmReleaseRules::default();
    }
    let found = session.live().flux_installer(session.client(), (home.stored, home.release, home.name)).await;
    let hr = match found {
        Ok(Some(hr)) => hr,
        Ok(None) => return HelmReleaseRules::default(),
        Err(e) => {
            notes.push(format!(
                "HelmReleases of namespace {} not read ({e}): the drift rules of a Flux HelmRelease that may install the release are not applied",
                home.stored
            ));
            return HelmReleaseRules::default();
        }
    };
    let at = format!("HelmRelease {}", hr.id());
    let mut rules =
        HelmReleaseRules { namespace: hr.namespace.clone(), name: hr.name.clone(), trusted, ..Default::default() };
    let drift = match &hr.drift {
        DriftSpec::Absent => return rules,
        DriftSpec::TooLarge(n) => {
            notes
                .push(format!("{at}: spec.driftDetection is {n} bytes, over {DRIFT_BYTES}: its rules are not applied"));
            return rules;
        }
        DriftSpec::Stated(drift) => drift,
    };
    let read = drift_rules(drift, &at);
    for rule in read.rules {
        match rule {
            Ok(rule) => rules.rules.push(rule),
            Err(e) => notes.push(format!("{e}: the rule is not applied")),
        }
    }
    notes.extend(read.left_out.into_iter().map(|w| format!("{at}: {w} is not supported and was left out")));
    if !rules.rules.is_empty() {
        let n = rules.rules.len();
        notes.push(format!(
            "{at} installs the release: {}",
            if n == 1 {
                "its drift rule (spec.driftDetection.ignore) applies".to_string()
            } else {
                format!("its {n} drift rules (spec.driftDetection.ignore) apply")
            }
        ));
    }
    rules
}
