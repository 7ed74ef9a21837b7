//! The one colour helper: tones for verdicts and diff lines, applied only when colour is on
//! (resolved once by the caller: `--color` > `NO_COLOR` > `CLICOLOR_FORCE` > terminal).

use crate::model::DriftKind;
use owo_colors::OwoColorize;

/// What a piece of text means, and so its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tone {
    /// In sync, applied: green.
    Good,
    /// Drift: yellow.
    Warn,
    /// Missing, refused: red.
    Bad,
    /// Errors, failures: bold red.
    Alarm,
    /// Added outside Helm, planned: cyan.
    Note,
    /// Ignored, excluded: dimmed.
    Dim,
    /// Unknown kinds: magenta.
    Odd,
    /// Names and headers: bold.
    Strong,
}

/// `text` in `tone` when `on`, else as is.
pub(crate) fn paint(on: bool, tone: Tone, text: &str) -> String {
    if !on {
        return text.to_string();
    }
    match tone {
        Tone::Good => text.green().to_string(),
        Tone::Warn => text.yellow().to_string(),
        Tone::Bad => text.red().to_string(),
        Tone::Alarm => text.red().bold().to_string(),
        Tone::Note => text.cyan().to_string(),
        Tone::Dim => text.dimmed().to_string(),
        Tone::Odd => text.magenta().to_string(),
        Tone::Strong => text.bold().to_string(),
    }
}

/// The tone of an object verdict.
pub(crate) fn verdict(kind: DriftKind) -> Tone {
    match kind {
        DriftKind::InSync => Tone::Good,
        DriftKind::Missing => Tone::Bad,
        DriftKind::Changed | DriftKind::FieldsAdded | DriftKind::TakenOver => Tone::Warn,
        DriftKind::Unknown => Tone::Odd,
        DriftKind::Excluded | DriftKind::Expected | DriftKind::Accepted => Tone::Dim,
        DriftKind::Error => Tone::Alarm,
    }
}

/// One line of a unified diff: headers bold, additions green, removals red, hunks cyan.
pub(crate) fn diff_line(on: bool, line: &str) -> String {
    let tone = if line.starts_with("+++") || line.starts_with("---") {
        Tone::Strong
    } else if line.starts_with('+') {
        Tone::Good
    } else if line.starts_with('-') {
        Tone::Bad
    } else if line.starts_with("@@") {
        Tone::Note
    } else {
        return line.to_string();
    };
    paint(on, tone, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_when_on() {
        assert_eq!(paint(false, Tone::Alarm, "x"), "x");
        assert!(paint(true, Tone::Alarm, "x").contains('\x1b'));
        assert_eq!(diff_line(false, "+ a"), "+ a");
        assert!(diff_line(true, "--- recorded").contains('\x1b'));
        assert_eq!(diff_line(true, "  context"), "  context");
    }
}
