//! A mutating admission webhook served by the test itself on loopback HTTPS (its own CA, a
//! certificate for 127.0.0.1): the API server calls it at `url`, and `answer` answers each
//! AdmissionReview's request with JSON patch operations (none: allowed as is). It may take its
//! time: the API server waits for it (up to the configuration's `timeoutSeconds`).

use anyhow::{Context, Result};
use base64::Engine;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

/// A running webhook server (it serves until the process ends).
pub struct Webhook {
    /// `https://127.0.0.1:PORT/mutate`.
    pub url: String,
    /// The CA that signed its certificate, base64 of the PEM (a webhook's `caBundle`).
    pub ca_bundle: String,
}

/// What a webhook does with one AdmissionReview's `request`: the JSON patch operations to apply.
type Answer = Arc<dyn Fn(&Value) -> Vec<Value> + Send + Sync>;

/// Starts a webhook whose `answer(request)` returns the JSON patch operations to apply.
pub fn start(answer: impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static) -> Result<Webhook> {
    let answer: Answer = Arc::new(answer);
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key)?;
    let ca_pem = ca_cert.pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.subject_alt_names = vec![SanType::IpAddress(std::net::IpAddr::from([127, 0, 0, 1]))];
    let cert = params.signed_by(&key, &issuer)?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()))
        .context("webhook TLS configuration")?;
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("https://{}/mutate", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (config, answer) = (config.clone(), answer.clone());
            std::thread::spawn(move || {
                let Ok(conn) = rustls::ServerConnection::new(config) else { return };
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let _ = serve(&mut tls, &answer);
            });
        }
    });
    Ok(Webhook { url, ca_bundle: base64::engine::general_purpose::STANDARD.encode(ca_pem) })
}

/// One HTTP request: an AdmissionReview in, its response out.
fn serve(stream: &mut (impl Read + Write), answer: &Answer) -> Result<()> {
    let mut reader = BufReader::new(&mut *stream);
    let mut length = 0usize;
    let mut line = String::new();
    reader.read_line(&mut line)?;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let review: Value = serde_json::from_slice(&body)?;
    let ops = answer(&review["request"]);
    let mut response = json!({"uid": review["request"]["uid"], "allowed": true});
    if !ops.is_empty() {
        response["patchType"] = json!("JSONPatch");
        response["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(Value::Array(ops).to_string()));
    }
    let out = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}).to_string();
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{out}",
        out.len()
    )?;
    stream.flush()?;
    Ok(())
}
