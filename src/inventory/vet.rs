//! What a kubeconfig read from an inventory may hold: inline credentials and certificates only,
//! for a server reached over verified TLS at an address that is not the watcher's own
//! neighbourhood (link-local metadata services, the management cluster's in-cluster names).

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
        if cluster.insecure_skip_tls_verify == Some(true) {
            return refuse(
                "skips TLS verification (insecure-skip-tls-verify: its credentials would go to whoever answers)",
            );
        }
        if let Some(why) = cluster.server.as_deref().and_then(unsafe_server) {
            return refuse(why);
        }
    }
    Ok(kubeconfig)
}

/// Why a member's `server:` is not dialled with its credentials, if it is not: only `https://`,
/// never a link-local address (a cloud's metadata service) nor an in-cluster service name (the
/// management cluster's own API server and services, reached from the watcher's pod).
fn unsafe_server(server: &str) -> Option<&'static str> {
    let Some(rest) = server.strip_prefix("https://") else {
        return Some("sends its credentials in clear or to no TLS server (server is not https://)");
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let link_local = match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => (ip.segments()[0] & 0xffc0) == 0xfe80,
        Err(_) => false,
    };
    if link_local {
        return Some("points at a link-local address (a cloud's metadata service)");
    }
    let in_cluster = host == "kubernetes"
        || host.starts_with("kubernetes.default")
        || host.ends_with(".svc")
        || host.ends_with(".svc.cluster.local")
        || host.ends_with(".cluster.local");
    in_cluster.then_some("points at an in-cluster name (the management cluster's own services)")
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
            ("    token: abc\n", "    insecure-skip-tls-verify: true\n", "skips TLS verification"),
        ] {
            let e = vetted(kubeconfig(user, cluster), "Secret a/b-kubeconfig").unwrap_err().to_string();
            assert!(e.starts_with("Secret a/b-kubeconfig: the kubeconfig ") && e.contains(said), "{e}");
        }
    }

    #[test]
    fn a_members_server_is_https_and_not_the_watchers_neighbourhood() {
        for ok in
            ["https://127.0.0.1:6443", "https://api.eu.example.com", "https://[2001:db8::1]:6443/", "https://10.0.0.1"]
        {
            assert_eq!(unsafe_server(ok), None, "{ok}");
        }
        for (bad, said) in [
            ("http://api.example.com", "not https"),
            ("api.example.com:6443", "not https"),
            ("https://169.254.169.254/latest/meta-data", "link-local"),
            ("https://[fe80::1]:443", "link-local"),
            ("https://kubernetes.default.svc", "in-cluster"),
            ("https://kubernetes.default.svc.cluster.local:443", "in-cluster"),
            ("https://vault.vault.svc:8200", "in-cluster"),
            ("https://user@KUBERNETES:443", "in-cluster"),
        ] {
            assert!(unsafe_server(bad).is_some_and(|w| w.contains(said)), "{bad}: {:?}", unsafe_server(bad));
        }
    }
}
