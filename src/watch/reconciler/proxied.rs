//! A fleet member's releases installed by CAAPH: they heal as their HelmReleaseProxy says, and
//! a revision deployed that CAAPH did not record is reported on the proxy, never trusted.

use super::Watcher;
use crate::release::ReleaseIndex;
use crate::watch::keys::ReleaseKey;
use crate::watch::outputs::drift_events;

impl Watcher<'_> {
    /// A release CAAPH installed heals as its HelmReleaseProxy (or HelmChartProxy) says, in the
    /// management cluster: whatever the workload cluster's records are labelled.
    pub(super) fn proxied_opt_ins(&mut self) {
        let (Some(healing), Some(proxies)) = (&mut self.healing, &self.outputs.proxies) else { return };
        for (key, proxy) in proxies.all() {
            healing.opts(key.clone(), proxy.repair);
            healing.interval(key, proxy.interval);
        }
    }

    /// A release judged at the revision CAAPH recorded while another is deployed: said once
    /// (log, and an Event on its HelmReleaseProxy). Its drift is judged against CAAPH's
    /// revision, and it is not healed (a repair heals only the deployed revision it judged).
    pub(super) async fn unrecorded_revision(&self, index: &ReleaseIndex, judged: u32) {
        let Some(proxies) = &self.outputs.proxies else { return };
        let key = ReleaseKey::new(&index.namespace, &index.name);
        let Some(deployed) = index.deployed().map(|r| r.revision) else { return };
        if proxies.of(&key).and_then(|p| p.revision).is_none_or(|r| r == deployed)
            || !proxies.first_mismatch(&key, deployed)
        {
            return;
        }
        self.outputs.metrics.rejected("record", 1);
        let message = format!(
            "release {key} is at revision {deployed} on its cluster, CAAPH recorded revision {judged}: judged against {judged}, not healed"
        );
        self.outputs.log.warn(
            "a revision CAAPH did not record is deployed",
            &[("release", &key), ("deployed", &deployed), ("recorded", &judged)],
        );
        if self.outputs.leading("record an Event").await
            && let Some(Err(e)) =
                proxies.record(&key, drift_events::UNRECORDED, &format!("{deployed:016}"), &message).await
        {
            self.outputs
                .log
                .warn("cannot record the Event on the HelmReleaseProxy", &[("release", &key), ("error", &e)]);
        }
    }
}
