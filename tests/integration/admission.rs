//! Admission webhooks the tests serve themselves on loopback ([`testcluster::webhook`]),
//! registered for one test's namespace only (a label on it selects them) and removed when the
//! test ends, however it ends.

use crate::support::{Env, eventually};
use std::time::Duration;
use testcluster::webhook::Webhook;

/// A webhook configuration registered by [`Env::admit_through`]; deleted when dropped.
pub struct Registered<'a> {
    env: &'a Env,
    kind: &'static str,
    name: String,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.env.kubectl(&["delete", self.kind, &self.name, "--ignore-not-found"]).output();
    }
}

/// Which admission step calls the webhook.
#[derive(Clone, Copy)]
pub enum Step {
    Mutating,
    Validating,
}

impl Env {
    /// Has `hook` called (`step`) on every create and update of `resource` (`group/version`,
    /// "" for the core group) in this test's namespace. `ready` is a harmless request that
    /// proves the hook is called once it returns true: the API server takes a moment to see a
    /// new configuration.
    pub fn admit_through(
        &self,
        hook: &Webhook,
        step: Step,
        (group, version, resource): (&str, &str, &str),
        mut ready: impl FnMut() -> bool,
    ) -> Registered<'_> {
        let label = format!("helm-drift-test/admission={}", self.ns);
        self.kubectl(&["label", "namespace", &self.ns, &label, "--overwrite"]).success();
        let (kind, object) = match step {
            Step::Mutating => ("mutatingwebhookconfiguration", "MutatingWebhookConfiguration"),
            Step::Validating => ("validatingwebhookconfiguration", "ValidatingWebhookConfiguration"),
        };
        let name = format!("{}-admission", self.ns);
        let config = format!(
            "apiVersion: admissionregistration.k8s.io/v1\nkind: {object}\nmetadata:\n  name: {name}\nwebhooks:\n  - name: test.helm-drift.io\n    admissionReviewVersions: [v1]\n    sideEffects: None\n    failurePolicy: Fail\n    timeoutSeconds: 30\n    clientConfig:\n      url: {}\n      caBundle: {}\n    namespaceSelector:\n      matchLabels: {{helm-drift-test/admission: {}}}\n    rules:\n      - apiGroups: [\"{group}\"]\n        apiVersions: [{version}]\n        operations: [CREATE, UPDATE]\n        resources: [{resource}]\n",
            hook.url, hook.ca_bundle, self.ns
        );
        let file = self.home().join(format!("{kind}.yaml"));
        std::fs::write(&file, config).unwrap();
        let registered = Registered { env: self, kind, name };
        self.kubectl(&["apply", "-f", file.to_str().unwrap()]).success();
        eventually("the webhook to take effect", Duration::from_secs(30), &mut ready);
        registered
    }
}
