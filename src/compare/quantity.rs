//! Kubernetes resource quantities (`500m`, `0.5`, `1Gi`, `1024Mi`, `1e3`) compared by value.

/// An exact quantity: `mantissa * 10^exp10 * 2^exp2`.
#[derive(Debug, Clone, Copy)]
struct Quantity {
    mantissa: i128,
    exp10: i32,
    exp2: i32,
}

/// Parses a quantity string; `None` when it is not one.
fn parse(s: &str) -> Option<Quantity> {
    let s = s.trim();
    let (number, suffix) = split_suffix(s)?;
    let (exp10_suffix, exp2) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        _ => return None,
    };
    let (mantissa, exp10) = parse_decimal(number)?;
    Some(Quantity { mantissa, exp10: exp10 + exp10_suffix, exp2 })
}

/// Splits `1.5e3` / `500m` / `1Gi` into number and suffix (an exponent is part of the number).
fn split_suffix(s: &str) -> Option<(&str, &str)> {
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '+'
                || c == '-'
                || ((c == 'e' || c == 'E')
                    && s[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+')))
        })
        .map_or(s.len(), |(i, _)| i);
    if end == 0 {
        return None;
    }
    Some((&s[..end], &s[end..]))
}

/// `[-+]digits[.digits][(e|E)[-+]digits]` → (mantissa, power of ten).
fn parse_decimal(s: &str) -> Option<(i128, i32)> {
    let (base, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (neg, base) = match base.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, base.strip_prefix('+').unwrap_or(base)),
    };
    let (int, frac) = base.split_once('.').unwrap_or((base, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) || int.len() + frac.len() > 30 {
        return None;
    }
    let digits: i128 = format!("{int}{frac}").parse().ok()?;
    let frac_len = i32::try_from(frac.len()).ok()?;
    Some((if neg { -digits } else { digits }, exp.checked_sub(frac_len)?))
}

/// Reduces to `numerator / 10^k` with `k >= 0` when possible, for exact comparison.
fn scaled(q: Quantity) -> Option<(i128, i32)> {
    let mut m = q.mantissa.checked_mul(1i128.checked_shl(u32::try_from(q.exp2).ok()?)?)?;
    let mut e = q.exp10;
    while e > 0 {
        m = m.checked_mul(10)?;
        e -= 1;
    }
    // Strip trailing zeros so equal values share one form.
    while e < 0 && m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    Some((m, e))
}

/// Whether two quantity strings denote the same amount (`0.5` = `500m`, `1Gi` = `1024Mi`).
pub(crate) fn equal(a: &str, b: &str) -> bool {
    match (parse(a).and_then(scaled), parse(b).and_then(scaled)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_amounts_in_different_forms() {
        for (a, b) in [
            ("0.5", "500m"),
            ("1Gi", "1024Mi"),
            ("1000m", "1"),
            ("1e3", "1k"),
            ("1.5", "1500m"),
            ("0.1", "100m"),
            ("1Ki", "1024"),
            ("100M", "100000k"),
            (".5", "0.5"),
            ("-1", "-1000m"),
        ] {
            assert!(equal(a, b), "{a} = {b}");
        }
    }

    #[test]
    fn different_amounts_and_non_quantities() {
        for (a, b) in
            [("1", "2"), ("1Gi", "1G"), ("500m", "0.6"), ("1x", "1x"), ("", ""), ("abc", "abc"), ("1..2", "1..2")]
        {
            assert!(!equal(a, b), "{a} != {b}");
        }
    }
}
