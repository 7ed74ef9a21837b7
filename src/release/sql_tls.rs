//! TLS for Helm's SQL driver, read from the connection string as libpq (and so Helm) reads it:
//! `sslmode` `disable`, `prefer` (the default: TLS when the server offers it, unverified),
//! `require` (TLS, unverified unless `sslrootcert` is given), `verify-ca` (the chain, from
//! `sslrootcert`) and `verify-full` (the chain and the host name). tokio-postgres knows only the
//! first three and no `sslrootcert`, so those are taken off the string here.

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error as TlsError, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;

/// Why a connection string's TLS settings cannot be used.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TlsSettingsError {
    #[error("sslmode {0:?} is not one of disable, allow, prefer, require, verify-ca, verify-full")]
    SslMode(String),
    #[error("{0}: client certificates are not supported by helm-drift's sql driver")]
    ClientCertificate(String),
    #[error("connection string: {0:?} has no value")]
    NoValue(String),
    #[error("connection string: unterminated quote in {0}")]
    UnterminatedQuote(String),
    #[error("sslmode verify-ca/verify-full needs sslrootcert (or ~/.postgresql/root.crt)")]
    NoRootCert,
    #[error("cannot read sslrootcert {path}: {why}")]
    ReadRootCert { path: String, why: String },
    #[error("sslrootcert {path}: {why}")]
    BadRootCert { path: String, why: String },
    #[error("sslrootcert {0} holds no certificate")]
    NoCertificate(String),
    #[error("{0}")]
    Tls(String),
}

/// How much TLS a connection string asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TlsMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// The TLS part of a connection string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tls {
    pub(crate) mode: TlsMode,
    pub(crate) root_cert: Option<PathBuf>,
}

/// The connection string for tokio-postgres (verify modes as `require`, `sslrootcert` taken
/// off) and its TLS settings.
pub(crate) fn split(conn: &str) -> Result<(String, Tls), TlsSettingsError> {
    let trimmed = conn.trim();
    let url = trimmed.starts_with("postgres://") || trimmed.starts_with("postgresql://");
    let pairs = if url { url_pairs(trimmed) } else { keyword_pairs(trimmed)? };
    let mut tls = Tls { mode: TlsMode::Prefer, root_cert: None };
    let mut kept = Vec::new();
    for (key, value) in pairs {
        match key.as_str() {
            "sslmode" => {
                tls.mode = match value.as_str() {
                    "disable" => TlsMode::Disable,
                    "allow" | "prefer" => TlsMode::Prefer,
                    "require" => TlsMode::Require,
                    "verify-ca" => TlsMode::VerifyCa,
                    "verify-full" => TlsMode::VerifyFull,
                    other => return Err(TlsSettingsError::SslMode(other.to_string())),
                };
            }
            "sslrootcert" => tls.root_cert = Some(PathBuf::from(value)),
            "sslcert" | "sslkey" | "sslpassword" => {
                return Err(TlsSettingsError::ClientCertificate(key));
            }
            _ => kept.push((key, value)),
        }
    }
    // libpq: `require` with a root certificate verifies the chain, like `verify-ca`.
    if tls.mode == TlsMode::Require && tls.root_cert.is_some() {
        tls.mode = TlsMode::VerifyCa;
    }
    let wire = match tls.mode {
        TlsMode::Disable => "disable",
        TlsMode::Prefer => "prefer",
        _ => "require",
    };
    kept.push(("sslmode".into(), wire.into()));
    let rebuilt = if url {
        let base = trimmed.split('?').next().unwrap_or(trimmed);
        let query: Vec<String> = kept.iter().map(|(k, v)| format!("{k}={}", percent_encode(v))).collect();
        format!("{base}?{}", query.join("&"))
    } else {
        kept.iter().map(|(k, v)| format!("{k}={}", quote(v))).collect::<Vec<_>>().join(" ")
    };
    Ok((rebuilt, tls))
}

/// The rustls configuration for `tls` (`None` for `disable`).
pub(crate) fn client_config(tls: &Tls) -> Result<Option<rustls::ClientConfig>, TlsSettingsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsSettingsError::Tls(e.to_string()))?;
    let chain = match tls.mode {
        TlsMode::Disable => return Ok(None),
        TlsMode::Prefer | TlsMode::Require => None,
        TlsMode::VerifyCa | TlsMode::VerifyFull => {
            let path = match &tls.root_cert {
                Some(p) => p.clone(),
                None => default_root_cert().ok_or(TlsSettingsError::NoRootCert)?,
            };
            let mut roots = rustls::RootCertStore::empty();
            let shown = path.display().to_string();
            let bad =
                |e: &dyn std::fmt::Display| TlsSettingsError::BadRootCert { path: shown.clone(), why: e.to_string() };
            let certs = CertificateDer::pem_file_iter(&path)
                .map_err(|e| TlsSettingsError::ReadRootCert { path: shown.clone(), why: e.to_string() })?;
            for cert in certs {
                roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
            }
            if roots.is_empty() {
                return Err(TlsSettingsError::NoCertificate(shown));
            }
            let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| bad(&e))?;
            Some(webpki)
        }
    };
    let verifier = Arc::new(Verifier { provider, chain, names: tls.mode == TlsMode::VerifyFull });
    Ok(Some(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth()))
}

/// libpq's default root certificate, when it exists.
fn default_root_cert() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("HOME")?).join(".postgresql/root.crt");
    path.is_file().then_some(path)
}

/// The server's certificate as the mode asks: not at all (`prefer`, `require`: encrypted, the
/// server not authenticated, as libpq does), the chain (`verify-ca`), the chain and the name
/// (`verify-full`). Handshake signatures are always checked.
#[derive(Debug)]
struct Verifier {
    provider: Arc<rustls::crypto::CryptoProvider>,
    chain: Option<Arc<WebPkiServerVerifier>>,
    names: bool,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let Some(chain) = &self.chain else { return Ok(ServerCertVerified::assertion()) };
        match chain.verify_server_cert(end, intermediates, name, ocsp, now) {
            Err(TlsError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.names => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// `key=value` pairs of libpq's keyword form (values may be single-quoted, `\` escapes).
fn keyword_pairs(text: &str) -> Result<Vec<(String, String)>, TlsSettingsError> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.next() != Some('=') {
            return Err(TlsSettingsError::NoValue(key));
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => return Err(TlsSettingsError::UnterminatedQuote(key)),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        out.push((key, value));
    }
}

/// The query parameters of a URL connection string (percent-decoded).
fn url_pairs(url: &str) -> Vec<(String, String)> {
    let Some((_, query)) = url.split_once('?') else { return Vec::new() };
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (crate::model::percent_decoded(k), crate::model::percent_decoded(v))
        })
        .collect()
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A keyword value, quoted when it needs to be.
fn quote(value: &str) -> String {
    if !value.is_empty() && !value.contains([' ', '\'', '\\', '\t', '\n']) {
        return value.to_string();
    }
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_modes_and_root_certificates_are_taken_off_the_keyword_form() {
        let (wire, tls) =
            split("host=db port=5432 user=helm password='a b\\'c' sslmode=verify-full sslrootcert=/ca.pem").unwrap();
        assert_eq!(wire, "host=db port=5432 user=helm password='a b\\'c' sslmode=require");
        assert_eq!(tls, Tls { mode: TlsMode::VerifyFull, root_cert: Some("/ca.pem".into()) });
        let (_, tls) = split("host=db sslmode=require sslrootcert=/ca.pem").unwrap();
        assert_eq!(tls.mode, TlsMode::VerifyCa, "libpq: require with a root certificate verifies the chain");
        let (wire, tls) = split("host=db").unwrap();
        assert_eq!((wire.as_str(), tls.mode), ("host=db sslmode=prefer", TlsMode::Prefer));
        assert!(split("host=db sslmode=sometimes").unwrap_err().to_string().contains("sslmode \"sometimes\""));
        assert!(split("host=db sslcert=/c.pem").unwrap_err().to_string().contains("client certificates"));
        assert!(split("host=db password='open").unwrap_err().to_string().contains("unterminated"));
    }

    #[test]
    fn url_form() {
        let (wire, tls) =
            split("postgres://u:p@db:5432/helm?sslmode=verify-ca&sslrootcert=%2Fetc%2Fca.pem&application_name=x")
                .unwrap();
        assert_eq!(wire, "postgres://u:p@db:5432/helm?application_name=x&sslmode=require");
        assert_eq!(tls, Tls { mode: TlsMode::VerifyCa, root_cert: Some("/etc/ca.pem".into()) });
        let (wire, tls) = split("postgresql://db/helm").unwrap();
        assert_eq!((wire.as_str(), tls.mode), ("postgresql://db/helm?sslmode=prefer", TlsMode::Prefer));
    }

    #[test]
    fn configs_per_mode() {
        let tls = |mode, root: Option<&str>| Tls { mode, root_cert: root.map(PathBuf::from) };
        assert!(client_config(&tls(TlsMode::Disable, None)).unwrap().is_none());
        assert!(client_config(&tls(TlsMode::Require, None)).unwrap().is_some());
        let missing = client_config(&tls(TlsMode::VerifyFull, Some("/nonexistent/ca.pem"))).unwrap_err().to_string();
        assert!(missing.contains("cannot read sslrootcert /nonexistent/ca.pem"), "{missing}");
    }
}
