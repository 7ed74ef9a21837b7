//! The control plane's PKI: a CA, the API server's serving certificate, an admin client
//! certificate in `system:masters`, and the service-account signing key.

use anyhow::Result;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
};
use std::path::{Path, PathBuf};

pub struct Pki {
    pub ca_cert: PathBuf,
    pub ca_key: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub admin_cert: PathBuf,
    pub admin_key: PathBuf,
    pub sa_key: PathBuf,
    pub sa_public: PathBuf,
}

impl Pki {
    /// Generates every key and certificate and writes them as PEM files under `dir`.
    pub fn write(dir: &Path) -> Result<Pki> {
        std::fs::create_dir_all(dir)?;
        let file = |name: &str, pem: String| -> Result<PathBuf> {
            let path = dir.join(name);
            std::fs::write(&path, pem)?;
            Ok(path)
        };

        let ca_key = KeyPair::generate()?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, "helm-drift-test-ca");
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let ca_cert = ca.self_signed(&ca_key)?;
        let ca_cert_path = file("ca.crt", ca_cert.pem())?;
        let ca_key_path = file("ca.key", ca_key.serialize_pem())?;
        let issuer = Issuer::new(ca, ca_key);

        let server_key = KeyPair::generate()?;
        let mut server = CertificateParams::new(vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "kubernetes".to_string(),
            "kubernetes.default.svc".to_string(),
        ])?;
        server.distinguished_name.push(DnType::CommonName, "kube-apiserver");
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_cert = server.signed_by(&server_key, &issuer)?;

        let admin_key = KeyPair::generate()?;
        let mut admin = CertificateParams::new(Vec::<String>::new())?;
        admin.distinguished_name.push(DnType::CommonName, "admin");
        admin.distinguished_name.push(DnType::OrganizationName, "system:masters");
        admin.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let admin_cert = admin.signed_by(&admin_key, &issuer)?;

        let client = |cn: &str, issuer: &Issuer<'_, KeyPair>, name: &str| -> Result<(PathBuf, PathBuf)> {
            let key = KeyPair::generate()?;
            let mut params = CertificateParams::new(Vec::<String>::new())?;
            params.distinguished_name.push(DnType::CommonName, cn);
            params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
            let cert = params.signed_by(&key, issuer)?;
            Ok((file(&format!("{name}.crt"), cert.pem())?, file(&format!("{name}.key"), key.serialize_pem())?))
        };
        let rogue_key = KeyPair::generate()?;
        let mut rogue = CertificateParams::new(Vec::<String>::new())?;
        rogue.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        rogue.distinguished_name.push(DnType::CommonName, "rogue-ca");
        rogue.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
        let rogue = Issuer::new(rogue, rogue_key);
        // Client certificates for an audit webhook's sender (`ControlPlane::start_audited`):
        // named `audited` and `intruder` by this CA, and `audited` by a CA nobody trusts.
        client("audited", &issuer, "audit-sender")?;
        client("intruder", &issuer, "audit-intruder")?;
        client("audited", &rogue, "audit-rogue")?;
        let sa_key = KeyPair::generate()?;
        Ok(Pki {
            ca_cert: ca_cert_path,
            ca_key: ca_key_path,
            server_cert: file("apiserver.crt", server_cert.pem())?,
            server_key: file("apiserver.key", server_key.serialize_pem())?,
            admin_cert: file("admin.crt", admin_cert.pem())?,
            admin_key: file("admin.key", admin_key.serialize_pem())?,
            sa_public: file("sa.pub", sa_key.public_key_pem())?,
            sa_key: file("sa.key", sa_key.serialize_pem())?,
        })
    }
}
