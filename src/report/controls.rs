//! The last step before a terminal: control characters from what the cluster holds (a value, a
//! list item's key, a forged record's chart name, an error echoing them) are written escaped
//! (`\u001b`), so that whoever may edit an object cannot repaint, retitle or hide the output of
//! whoever checks it. Only newlines, tabs and, with colour on, the colour codes of our own palette
//! pass.

use std::borrow::Cow;

/// The SGR parameters our palette writes (owo-colors: bold, dimmed, reset, the five colours and
/// their reset). Conceal, blink, cursor moves and OSC titles are not among them.
const PALETTE: [&str; 9] = ["0", "1", "2", "22", "31", "32", "33", "35", "36"];
const COLOUR_RESET: &str = "39";

/// `text` with every control character escaped but `\n`, `\t` and (when `colour`) our palette.
pub(crate) fn escaped(text: &str, colour: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(len) = palette_code(rest).filter(|_| colour) {
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        if unsafe_char(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The length of the palette's SGR sequence `rest` starts with (`ESC [ n m`), if it does.
fn palette_code(rest: &str) -> Option<usize> {
    let body = rest.strip_prefix("\u{1b}[")?;
    let end = body.find('m')?;
    let code = &body[..end];
    (PALETTE.contains(&code) || code == COLOUR_RESET).then_some(2 + end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_the_palette_kept() {
        assert!(matches!(escaped("plain\n\ttext", false), Cow::Borrowed(_)));
        assert_eq!(escaped("a\u{1b}]0;t\u{7}b\r\u{9b}", false), "a\\u001b]0;t\\u0007b\\u000d\\u009b");
        let painted = crate::report::color::paint(true, crate::report::color::Tone::Alarm, "x");
        assert_eq!(escaped(&painted, true), painted, "our own colours pass");
        assert_eq!(escaped(&painted, false), painted.replace('\u{1b}', "\\u001b"), "no colour: nothing passes");
        assert_eq!(escaped("\u{1b}[8mhidden\u{1b}[2J", true), "\\u001b[8mhidden\\u001b[2J", "conceal, clear");
        assert_eq!(escaped("\u{1b}[31", true), "\\u001b[31", "unterminated");
    }
}
