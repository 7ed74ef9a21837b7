//! Decodes a stored release: Helm's base64 text → gzip (only when the magic bytes say so) → JSON.

use super::Release;
use base64::Engine;
use std::io::Read;

const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];
/// The largest release JSON accepted after decompression (a gzip bomb is an error, not an
/// exhausted machine). Helm's own records are far smaller: a Secret holds at most 1 MiB.
pub const MAX_DECOMPRESSED: u64 = 16 * 1024 * 1024;

/// What was wrong with a stored record, layer by layer.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("the record is empty")]
    Empty,
    #[error("bad base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("bad gzip data: {0}")]
    Gzip(std::io::Error),
    #[error("the record decompresses to more than {} MiB", MAX_DECOMPRESSED / 1024 / 1024)]
    TooLarge,
    #[error("bad release JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Decodes Helm's encoded release text (the value of a Secret's or ConfigMap's `release` key,
/// after Kubernetes' own base64 layer is removed).
pub fn decode(encoded: &[u8]) -> Result<Release, DecodeError> {
    let text: Vec<u8> = encoded.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
    if text.is_empty() {
        return Err(DecodeError::Empty);
    }
    let raw = base64::engine::general_purpose::STANDARD.decode(&text)?;
    let json = if raw.starts_with(&GZIP_MAGIC) { inflate(&raw)? } else { raw };
    Ok(serde_json::from_slice(&json)?)
}

/// Gunzips at most [`MAX_DECOMPRESSED`] bytes, growing the buffer to that cap and never past it
/// (doubling would hold twice the cap for a record that decompresses just over it).
fn inflate(raw: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let cap = MAX_DECOMPRESSED as usize;
    let mut decoder = flate2::read::GzDecoder::new(raw);
    let mut out: Vec<u8> = Vec::with_capacity(raw.len().saturating_mul(4).min(cap));
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = decoder.read(&mut chunk).map_err(DecodeError::Gzip)?;
        if n == 0 {
            return Ok(out);
        }
        if out.len() + n > cap {
            return Err(DecodeError::TooLarge);
        }
        if out.capacity() - out.len() < n {
            let grown = (out.capacity() * 2).max(out.len() + n).min(cap);
            out.reserve_exact(grown - out.len());
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;

    pub(crate) fn encode(json: &str) -> String {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(json.as_bytes()).unwrap();
        base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap())
    }

    const HELM3: &str = r#"{"name":"web","namespace":"apps","version":3,"info":{"first_deployed":"2026-01-01T00:00:00Z","last_deployed":"2026-01-01T00:00:00Z","deleted":"","description":"Upgrade complete","status":"deployed"},"chart":{"metadata":{"name":"web","version":"1.0.0"},"templates":[]},"config":{"replicas":2},"manifest":"---\n# Source: web/templates/cm.yaml\nkind: ConfigMap\n","hooks":[]}"#;

    #[test]
    fn decodes_gzipped_helm3_record() {
        let r = decode(encode(HELM3).as_bytes()).unwrap();
        assert_eq!((r.name.as_str(), r.namespace.as_str(), r.version), ("web", "apps", 3));
        assert_eq!(r.info.status, "deployed");
        assert!(r.manifest.contains("ConfigMap"));
        assert_eq!(r.apply_method, None);
    }

    #[test]
    fn decodes_plain_json_and_helm4_fields() {
        let json = r#"{"name":"a","namespace":"b","version":1,"info":{"status":"deployed"},"manifest":"","apply_method":"ssa","chart":{"metadata":{"name":"a"},"schemamodtime":"2026-01-01T00:00:00Z"}}"#;
        let text = base64::engine::general_purpose::STANDARD.encode(json);
        let r = decode(text.as_bytes()).unwrap();
        assert_eq!(r.apply_method.as_deref(), Some("ssa"));
    }

    #[test]
    fn gzip_bombs_are_refused() {
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        let zeros = vec![b' '; 1024 * 1024];
        for _ in 0..(MAX_DECOMPRESSED / 1024 / 1024 + 1) {
            gz.write_all(&zeros).unwrap();
        }
        let text = base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap());
        assert!(text.len() < 1024 * 1024, "a small record");
        assert!(matches!(decode(text.as_bytes()), Err(DecodeError::TooLarge)));
    }

    #[test]
    fn every_corrupt_layer_is_an_error() {
        assert!(matches!(decode(b""), Err(DecodeError::Empty)));
        assert!(matches!(decode(b"@@not base64@@"), Err(DecodeError::Base64(_))));
        let full = encode(HELM3);
        let raw = base64::engine::general_purpose::STANDARD.decode(&full).unwrap();
        let truncated = base64::engine::general_purpose::STANDARD.encode(&raw[..raw.len() / 2]);
        assert!(matches!(decode(truncated.as_bytes()), Err(DecodeError::Gzip(_))));
        assert!(matches!(decode(encode("{not json").as_bytes()), Err(DecodeError::Json(_))));
        let missing = encode(r#"{"namespace":"b","version":1}"#);
        let err = decode(missing.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("missing field `name`"), "{err}");
    }
}
