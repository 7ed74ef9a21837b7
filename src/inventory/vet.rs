//! What a kubeconfig read from an inventory may hold: inline credentials and certificates only.

use super::unreachable::{Unreachable, Why};
use kube::config::Kubeconfig;

/// A kubeconfig from an inventory, refused when it would run a command or read a local file.
pub(crate) fn vetted(kubeconfig: Kubeconfig, at: &str) -> Result<Kubeconfig, Unreachable> {
    let refuse = |what: &'static str| Err(Unreachable::new(at, Why::Does(what)));
    for user in kubeconfig.auth_infos.iter().filter_map(|u| u.auth_info.as_ref()) {
        if user.exec.is_some() {
            return refuse("runs a command (exec)");
        }
        if user.auth_provider.is_some() {
            return refuse("uses an auth provider (which runs or reads outside the kubeconfig)");
        }
        if user.token_file.is_some() || user.client_certificate.is_some() || user.client_key.is_some() {
            return refuse("reads a local file (tokenFile, client-certificate or client-key)");
        }
    }
    for cluster in kubeconfig.clusters.iter().filter_map(|c| c.cluster.as_ref()) {
        if cluster.certificate_authority.is_some() {
            return refuse("reads a local file (certificate-authority)");
        }
        if cluster.proxy_url.is_some() {
            return refuse("sends its requests through a proxy (proxy-url)");
        }
    }
    Ok(kubeconfig)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(user: &str, cluster: &str) -> Kubeconfig {
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n{cluster}users:\n- name: u\n  user:\n{user}contexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
        );
        Kubeconfig::from_yaml(&text).unwrap()
    }

    #[test]
    fn only_inline_credentials_are_taken_from_an_inventory() {
        let inline = kubeconfig("    token: abc\n", "    certificate-authority-data: Zm9v\n");
        assert!(vetted(inline, "Secret a/b").is_ok());
        for (user, cluster, said) in [
            ("    exec: {apiVersion: client.authentication.k8s.io/v1, command: touch}\n", "", "runs a command"),
            ("    auth-provider: {name: gcp}\n", "", "auth provider"),
            ("    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n", "", "reads a local file"),
            ("    client-certificate: /etc/cert\n    client-key: /etc/key\n", "", "reads a local file"),
            ("    token: abc\n", "    certificate-authority: /etc/ca\n", "certificate-authority"),
            ("    token: abc\n", "    proxy-url: http://127.0.0.1:3128\n", "proxy"),
        ] {
            let e = vetted(kubeconfig(user, cluster), "Secret a/b-kubeconfig").unwrap_err().to_string();
            assert!(e.starts_with("Secret a/b-kubeconfig: the kubeconfig ") && e.contains(said), "{e}");
        }
    }
}
