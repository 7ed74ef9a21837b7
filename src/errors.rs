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

    /// The literal parts of every `#[error("...")]` message of the code (its placeholders cut
    /// out), with the file it is in.
    fn messages() -> Vec<(String, Vec<String>)> {
        let mut out = Vec::new();
        for source in crate::layering::sources() {
            for (at, _) in source.code.match_indices("#[error(") {
                let rest = source.code[at + "#[error(".len()..].trim_start();
                let Some(text) = rest.strip_prefix('"') else { continue };
                let mut message = String::new();
                let mut chars = text.chars();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => message.extend(chars.next()),
                        '"' => break,
                        c => message.push(c),
                    }
                }
                let parts = message
                    .split(['{', '}'])
                    .step_by(2)
                    .map(|p| p.trim_matches([' ', ':', ';', ',', '(', ')']).to_string())
                    .collect();
                out.push((source.file.display().to_string(), parts));
            }
        }
        out
    }

    /// Every message of helm-drift's own is named on the troubleshooting page: a piece of it
    /// (12 characters or more) is on the page, or a quoted piece of the page (10 or more, `...`
    /// standing for what varies) is in it. A message of only placeholders carries another's.
    #[test]
    fn every_message_has_a_troubleshooting_entry() {
        let page = include_str!("../docs/src/troubleshooting.md");
        let flat = page.split_whitespace().collect::<Vec<_>>().join(" ");
        let quoted: Vec<&str> = page
            .split('`')
            .skip(1)
            .step_by(2)
            .flat_map(|q| q.split("..."))
            .map(str::trim)
            .filter(|s| s.len() >= 10)
            .collect();
        let all = messages();
        assert!(all.len() > 100, "the messages are read: {}", all.len());
        let missing = all.into_iter().filter_map(|(file, parts)| {
            let long: Vec<&String> = parts.iter().filter(|p| p.len() >= 12).collect();
            let named = long.is_empty()
                || long.iter().any(|p| flat.contains(p.as_str()))
                || quoted.iter().any(|q| parts.iter().any(|p| p.contains(q)));
            (!named).then(|| format!("{file}: {}", parts.join(" ... ")))
        });
        crate::layering::none(missing, "messages without an entry in docs/src/troubleshooting.md");
    }
}
