//! Text as URLs carry it.

/// `%XX` sequences as the bytes they stand for (an invalid one kept as written; the result read
/// as UTF-8, lossily).
pub(crate) fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = text.get(i + 1..i + 3).filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()));
        let hex = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_are_decoded_and_what_is_not_one_is_kept() {
        assert_eq!(super::percent_decoded("my%20tool%2Bx"), "my tool+x");
        assert_eq!(super::percent_decoded("a%+1b%zz%4"), "a%+1b%zz%4");
        assert_eq!(super::percent_decoded("%C3%A9"), "é");
    }
}
