//! Durations as people write them in flags and annotations: `500ms`, `30s`, `2m`, `1h`.

/// A duration as written that is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DurationError {
    #[error("{0:?} is not a duration (like 500ms, 30s, 2m)")]
    NotANumber(String),
    #[error("{text:?}: unknown unit {unit:?} (ms, s, m, h)")]
    Unit { text: String, unit: String },
    #[error("{0:?}: must be more than zero")]
    NotPositive(String),
}

/// `500ms`, `30s`, `2m`, `1h` (a plain number is seconds).
pub(crate) fn parse_duration(text: &str) -> Result<std::time::Duration, DurationError> {
    let t = text.trim();
    let (number, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len()));
    let n: f64 = number.parse().map_err(|_| DurationError::NotANumber(text.into()))?;
    let seconds = match unit {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(DurationError::Unit { text: text.into(), unit: unit.into() }),
    };
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(DurationError::NotPositive(text.into()));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(std::time::Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(std::time::Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(std::time::Duration::from_secs(3)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("5 weeks").is_err());
    }
}
