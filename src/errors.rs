//! How an error and its causes become one line, each cause said once (many error types print
//! their source themselves, and a chain would print it again).

/// `outer: cause: root cause`, leaving out a cause whose text the line already holds.
pub(crate) fn one_line(err: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        source = cause.source();
    }
    msg
}

/// [`one_line`] for an `anyhow` error (its context layers first).
pub(crate) fn chain(err: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if msg.is_empty() {
            msg = text;
        } else if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("bad base64: {0}")]
    struct Outer(#[source] base64::DecodeError);

    #[test]
    fn each_cause_once() {
        let inner = base64::DecodeError::InvalidByte(0, b'!');
        let e = anyhow::Error::new(Outer(inner)).context("Secret a/b").context("cannot read release \"b\"");
        let text = chain(&e);
        assert_eq!(text.matches("Invalid symbol 33").count(), 1, "{text}");
        assert!(text.starts_with("cannot read release \"b\": Secret a/b: bad base64: Invalid symbol 33"), "{text}");
        assert_eq!(
            one_line(&Outer(base64::DecodeError::InvalidByte(0, b'!'))),
            "bad base64: Invalid symbol 33, offset 0."
        );
    }
}
