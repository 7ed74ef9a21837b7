//! Who sent an audit batch: a bearer token from `--audit-tokens` (each line `TOKEN [CLUSTER]`),
//! or a client certificate signed by `--audit-client-ca` (the cluster is its Common Name).
//! Tokens are kept as their SHA-256 digests and looked up by digest, so the time a lookup takes
//! says nothing about a token's bytes.

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;

/// The tokens that authenticate senders, by digest, with the cluster each names.
#[derive(Default)]
pub(crate) struct Tokens(HashMap<[u8; 32], String>);

impl Tokens {
    /// Reads `TOKEN [CLUSTER]` lines (`#` comments and blank lines skipped).
    pub(crate) fn read(path: &Path) -> Result<Tokens> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read --audit-tokens {}", path.display()))?;
        let tokens = Tokens::parse(&text).with_context(|| format!("--audit-tokens {}", path.display()))?;
        if tokens.0.is_empty() {
            bail!("--audit-tokens {} holds no token", path.display());
        }
        Ok(tokens)
    }

    fn parse(text: &str) -> Result<Tokens> {
        let mut out = HashMap::new();
        for (n, line) in text.lines().enumerate().map(|(n, l)| (n + 1, l.trim())) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let token = words.next().unwrap_or_default();
            let cluster = words.next().unwrap_or_default();
            if words.next().is_some() {
                bail!("line {n}: a token and at most one cluster name");
            }
            if token.len() < 16 {
                bail!("line {n}: a token of at least 16 characters");
            }
            if out.insert(digest(token), cluster.to_string()).is_some() {
                bail!("line {n}: the same token twice");
            }
        }
        Ok(Tokens(out))
    }

    /// The cluster a bearer token authenticates.
    pub(crate) fn cluster(&self, token: &str) -> Option<&str> {
        self.0.get(&digest(token)).map(String::as_str)
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The Common Name of a certificate (DER), the cluster its holder speaks for.
pub(crate) fn common_name(der: &[u8]) -> Option<String> {
    use x509_cert::der::Decode;
    let cert = x509_cert::Certificate::from_der(der).ok()?;
    let cn = x509_cert::der::asn1::ObjectIdentifier::new_unwrap("2.5.4.3");
    let rdns = cert.tbs_certificate.subject.0.iter().flat_map(|rdn| rdn.0.iter());
    let name = rdns.filter(|atv| atv.oid == cn).find_map(|atv| String::from_utf8(atv.value.value().to_vec()).ok())?;
    Some(name).filter(|n| n.len() <= 253)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_cluster_and_a_bad_file_is_refused() {
        let t = Tokens::parse("# comment\n0123456789abcdef0123 prod-eu\n\nfedcba98765432100000\n").unwrap();
        assert_eq!(t.cluster("0123456789abcdef0123"), Some("prod-eu"));
        assert_eq!(t.cluster("fedcba98765432100000"), Some(""));
        assert_eq!(t.cluster("0123456789abcdef012"), None);
        assert!(Tokens::parse("short\n").is_err());
        assert!(Tokens::parse("0123456789abcdef0123 a b\n").is_err());
        assert!(Tokens::parse("0123456789abcdef0123 a\n0123456789abcdef0123 b\n").is_err());
    }
}
