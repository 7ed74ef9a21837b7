//! Digests as text: lowercase hex of bytes, and of a SHA-256, whole or cut short for names.

use sha2::{Digest, Sha256};

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// The first `bytes` bytes (at most 32) of `text`'s SHA-256, in lowercase hex.
pub(crate) fn sha256_hex(text: &str, bytes: usize) -> String {
    let digest = Sha256::digest(text.as_bytes());
    hex(&digest[..bytes.min(digest.len())])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_shortened_digests() {
        assert_eq!(hex(&[0, 15, 255]), "000fff");
        assert_eq!(sha256_hex("abc", 4), "ba7816bf");
        assert_eq!(sha256_hex("abc", 99).len(), 64);
    }
}
