//! Why a cluster of an inventory is not reached: each reason a type, its words here.

/// A cluster of an inventory that is not reached; `at` names the entry (`Secret ns/name`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.words())]
pub(crate) struct Unreachable {
    pub(crate) at: String,
    pub(crate) why: Why,
}

/// What is wrong with the entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Why {
    /// The Secret that holds its kubeconfig does not exist.
    NoSecret,
    /// The Secret could not be read (the API server's answer, in one line).
    Unread(String),
    /// The entry lacks a key (`value`, `server`).
    NoKey(&'static str),
    /// A key's value is not UTF-8 text (`None`: the kubeconfig).
    NotText(Option<String>),
    /// Argo CD's `config` is not JSON.
    NotJson(String),
    /// Not a kubeconfig, or not a usable cluster.
    NotKubeconfig(String),
    /// The kubeconfig would do what helm-drift does not do for one read from the cluster (run
    /// a command, read a local file, use a proxy).
    Does(&'static str),
    /// Argo CD's entry would do so (its own keys).
    EntryDoes(&'static str),
    /// The Argo CD entry holds no credential of its own.
    NoCredential,
}

impl Unreachable {
    pub(crate) fn new(at: &str, why: Why) -> Unreachable {
        Unreachable { at: at.to_string(), why }
    }

    fn words(&self) -> String {
        const ONLY_INLINE: &str = "which helm-drift does not do for a kubeconfig read from the cluster (only inline \
                                   credentials and certificates)";
        let at = &self.at;
        match &self.why {
            Why::NoSecret => format!("{at} not found: the cluster cannot be reached"),
            Why::Unread(e) => e.clone(),
            Why::NoKey(key) if *key == "server" => format!("{at} has no `server`"),
            Why::NoKey(key) => format!("{at} has no `{key}` key"),
            Why::NotText(None) => format!("{at}: the kubeconfig is not UTF-8 text"),
            Why::NotText(Some(key)) => format!("{at}: `{key}` is not UTF-8 text"),
            Why::NotJson(e) => format!("{at}: `config` is not JSON: {e}"),
            Why::NotKubeconfig(e) => format!("{at}: not a kubeconfig: {e}"),
            Why::Does(what) => format!("{at}: the kubeconfig {what}, {ONLY_INLINE}"),
            Why::EntryDoes(what) => format!(
                "{at}: the entry {what}, which helm-drift does not do for an entry read from the cluster (only inline \
                 credentials and certificates)"
            ),
            Why::NoCredential => format!(
                "{at}: the entry holds no credential of its own (bearerToken, username and password, or certData and \
                 keyData): helm-drift would reach it as itself, so it is not reached"
            ),
        }
    }
}
