//! Decodes a stored release: Helm's base64 text → gzip (only when the magic bytes say so) → JSON.
//! The size a record decodes to is known before it is decoded ([`Encoded::size`], from gzip's
//! own trailer), so the caller can reserve it from a budget first; a record that decompresses
//! past what it declares is refused at that point.

use super::record::Claimed;
use base64::Engine;
use std::io::Read;

const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];
/// The largest release JSON accepted after decompression (a gzip bomb is an error, not an
/// exhausted machine). Helm's own records are far smaller: a Secret holds at most 1 MiB.
pub(crate) const MAX_DECOMPRESSED: u64 = 16 * 1024 * 1024;

/// What was wrong with a stored record, layer by layer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DecodeError {
    #[error("the record is empty")]
    Empty,
    #[error("bad base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("bad gzip data: {0}")]
    Gzip(std::io::Error),
    #[error("the record decompresses to more than {} MiB", MAX_DECOMPRESSED / 1024 / 1024)]
    TooLarge,
    #[error("the record decompresses to more than the {0} bytes its gzip trailer declares")]
    Undeclared(usize),
    #[error("bad release JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Decodes Helm's encoded release text (the value of a Secret's or ConfigMap's `release` key,
/// after Kubernetes' own base64 layer is removed).
pub(crate) fn decode(encoded: &[u8]) -> Result<Claimed, DecodeError> {
    Encoded::new(encoded)?.decode()
}

/// A record's bytes with Helm's base64 layer removed, not yet decompressed.
pub(crate) struct Encoded {
    raw: Vec<u8>,
}

impl Encoded {
    pub(crate) fn new(encoded: &[u8]) -> Result<Encoded, DecodeError> {
        let text: Vec<u8> = encoded.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
        if text.is_empty() {
            return Err(DecodeError::Empty);
        }
        Ok(Encoded { raw: base64::engine::general_purpose::STANDARD.decode(&text)? })
    }

    fn gzipped(&self) -> bool {
        self.raw.starts_with(&GZIP_MAGIC)
    }

    /// The bytes of JSON it decodes to, as declared (gzip's ISIZE trailer) and enforced by
    /// [`Encoded::decode`]; over [`MAX_DECOMPRESSED`] is an error before anything is inflated.
    pub(crate) fn size(&self) -> Result<usize, DecodeError> {
        let size = match self.raw.len() {
            n if self.gzipped() && n >= 18 => {
                u32::from_le_bytes(self.raw[n - 4..].try_into().expect("four bytes")) as usize
            }
            n => n,
        };
        if size as u64 <= MAX_DECOMPRESSED {
            return Ok(size);
        }
        if !self.gzipped() {
            return Err(DecodeError::TooLarge);
        }
        // Past the cap, or not a trailer at all (a cut stream): inflated into nothing, to tell
        // a bomb from broken data without holding either.
        let mut counted = std::io::Read::take(flate2::read::GzDecoder::new(&self.raw[..]), MAX_DECOMPRESSED + 1);
        match std::io::copy(&mut counted, &mut std::io::sink()) {
            Err(e) => Err(DecodeError::Gzip(e)),
            Ok(n) if n > MAX_DECOMPRESSED => Err(DecodeError::TooLarge),
            Ok(n) => Err(DecodeError::Undeclared(n as usize)),
        }
    }

    /// The record's JSON as it claims itself.
    pub(crate) fn decode(self) -> Result<Claimed, DecodeError> {
        let size = self.size()?;
        let json = if self.gzipped() { inflate(&self.raw, size)? } else { self.raw };
        Ok(serde_json::from_slice(&json)?)
    }
}

/// Gunzips at most `cap` bytes (what the trailer says, at most [`MAX_DECOMPRESSED`]),
/// growing the buffer to that cap and never past it.
fn inflate(raw: &[u8], cap: usize) -> Result<Vec<u8>, DecodeError> {
    let mut decoder = flate2::read::GzDecoder::new(raw);
    let mut out: Vec<u8> = Vec::with_capacity(raw.len().saturating_mul(4).min(cap));
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = decoder.read(&mut chunk).map_err(DecodeError::Gzip)?;
        if n == 0 {
            return Ok(out);
        }
        if out.len() + n > cap {
            return Err(DecodeError::Undeclared(cap));
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
    use crate::release::record::Stored;
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
        let r = decode(encode(HELM3).as_bytes()).unwrap()._bind(stored("web", 3, "deployed")).unwrap();
        assert_eq!((r.name(), r.namespace(), r.revision()), ("web", "apps", 3));
        assert_eq!(r.status(), "deployed");
        assert!(r.manifest.contains("ConfigMap"));
        assert_eq!(r.apply_method, None);
        assert_eq!(r.user_values().unwrap(), serde_json::json!({"replicas": 2}));
        assert_eq!(Encoded::new(encode(HELM3).as_bytes()).unwrap().size().unwrap(), HELM3.len());
    }

    impl Claimed {
        fn _bind(self, s: Stored<'_>) -> Result<crate::release::Release, crate::release::record::Mismatch> {
            self.bind(s, crate::release::budget::Reserved::none(), None)
        }
    }

    fn stored(name: &str, revision: u32, status: &'static str) -> Stored<'static> {
        let object = Box::leak(format!("sh.helm.release.v1.{name}.v{revision}").into_boxed_str());
        let name = Box::leak(name.to_string().into_boxed_str());
        Stored { namespace: "apps", object, name, revision, status, written: None }
    }

    #[test]
    fn a_record_speaks_only_for_its_storage_object() {
        let claimed = || decode(encode(HELM3).as_bytes()).unwrap();
        let wrong = |s: Stored<'static>| claimed()._bind(s).unwrap_err();
        let e = wrong(Stored { namespace: "tenant", ..stored("web", 3, "deployed") });
        assert!(
            e.to_string().starts_with(
                "the record says namespace \"apps\", but its storage object says \"tenant\" (a record stored apart"
            ),
            "{e}"
        );
        assert_eq!(wrong(stored("web", 7, "deployed")).field, "revision");
        assert_eq!(wrong(stored("web", 3, "superseded")).field, "status");
        assert_eq!(wrong(stored("db", 3, "deployed")).field, "name");
        let misnamed = Stored { object: "sh.helm.release.v1.web.v4", ..stored("web", 3, "deployed") };
        assert_eq!(wrong(misnamed).field, "storage name");
    }

    #[test]
    fn a_record_that_inflates_past_its_declared_size_is_refused() {
        let mut raw = base64::engine::general_purpose::STANDARD.decode(encode(HELM3)).unwrap();
        let n = raw.len();
        raw[n - 4..].copy_from_slice(&10u32.to_le_bytes());
        let text = base64::engine::general_purpose::STANDARD.encode(&raw);
        assert!(matches!(decode(text.as_bytes()), Err(DecodeError::Undeclared(10))));
        raw[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        let text = base64::engine::general_purpose::STANDARD.encode(&raw);
        let lying = Encoded::new(text.as_bytes()).unwrap().size();
        assert!(matches!(lying, Err(DecodeError::Gzip(_) | DecodeError::Undeclared(_))), "{lying:?}");
    }

    #[test]
    fn decodes_plain_json_and_helm4_fields() {
        let json = r#"{"name":"a","namespace":"b","version":1,"info":{"status":"deployed"},"manifest":"","apply_method":"ssa","chart":{"metadata":{"name":"a"},"schemamodtime":"2026-01-01T00:00:00Z"}}"#;
        let text = base64::engine::general_purpose::STANDARD.encode(json);
        let r =
            decode(text.as_bytes()).unwrap()._bind(Stored { namespace: "b", ..stored("a", 1, "deployed") }).unwrap();
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
        // A cut stream ends in bytes that are not its trailer: refused by size or by gzip.
        let cut = decode(truncated.as_bytes());
        assert!(
            matches!(cut, Err(DecodeError::Gzip(_) | DecodeError::TooLarge | DecodeError::Undeclared(_))),
            "{cut:?}"
        );
        assert!(matches!(decode(encode("{not json").as_bytes()), Err(DecodeError::Json(_))));
        let missing = encode(r#"{"namespace":"b","version":1}"#);
        let err = decode(missing.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("missing field `name`"), "{err}");
    }
}
