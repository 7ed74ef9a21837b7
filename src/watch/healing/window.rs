//! Repair windows (`watch --repair-window`, `--repair-deny-window`), as Argo CD's sync windows:
//! self-healing only while an allow window is open (when any is given) and no deny window is;
//! a manual `helm drift repair` is never held. `Sat 02:00-04:00 Europe/Berlin`, `Mon-Fri
//! 22:00-06:00` (through midnight), `* 12:00:00-12:00:30 UTC`; a zone name (IANA, built in),
//! UTC when none; `@ SELECTOR` after it limits the window to the releases whose storage labels
//! match. Pure: every question takes the time it is asked at.

use jiff::civil::{Time, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

/// One window.
#[derive(Clone, Debug)]
pub(crate) struct RepairWindow {
    /// Monday first.
    days: [bool; 7],
    start: Time,
    end: Time,
    zone: TimeZone,
    pub(crate) stance: Stance,
    /// Only for the releases whose storage labels match.
    pub(crate) selector: Option<String>,
    /// As written, for messages.
    pub(crate) text: String,
}

/// Whether a window allows healing while it is open or denies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stance {
    /// `--repair-window`: healing only while one is open (when any is given).
    Allow,
    /// `--repair-deny-window`: no healing while one is open.
    Deny,
}

impl Stance {
    fn flag(self) -> &'static str {
        match self {
            Stance::Allow => "--repair-window",
            Stance::Deny => "--repair-deny-window",
        }
    }
}

/// A window as written that cannot be read, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} {text:?}: {why}", stance.flag())]
pub(crate) struct WindowError {
    stance: Stance,
    text: String,
    why: Unreadable,
}

/// What part of a window cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unreadable {
    #[error("expected DAYS HH:MM-HH:MM [ZONE] [@ SELECTOR], as `Sat 02:00-04:00 Europe/Berlin`")]
    Shape,
    #[error("{0:?} is not HH:MM-HH:MM")]
    Hours(String),
    #[error("{0:?} is not a time zone (IANA, like Europe/Berlin)")]
    Zone(String),
    #[error("{0:?} is not a time of day (HH:MM or HH:MM:SS)")]
    Time(String),
    #[error("{0:?} is not a day or a range of days (Mon, Sat-Sun, Mon-Fri, *)")]
    Days(String),
    #[error("the window starts and ends at the same time")]
    Empty,
}

const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

fn day(word: &str) -> Option<usize> {
    let w = word.to_ascii_lowercase();
    DAYS.iter().position(|d| w.starts_with(d) && d.len() <= w.len())
}

fn days(spec: &str) -> Result<[bool; 7], Unreadable> {
    let mut out = [false; 7];
    if spec == "*" {
        return Ok([true; 7]);
    }
    for part in spec.split(',') {
        let (from, to) = part.split_once('-').unwrap_or((part, part));
        let (Some(a), Some(b)) = (day(from), day(to)) else {
            return Err(Unreadable::Days(part.to_string()));
        };
        let mut d = a;
        loop {
            out[d] = true;
            if d == b {
                break;
            }
            d = (d + 1) % 7;
        }
    }
    Ok(out)
}

fn time(text: &str) -> Result<Time, Unreadable> {
    let mut parts = text.split(':').map(|p| p.parse::<i8>());
    let (h, m, s) = (parts.next(), parts.next(), parts.next().unwrap_or(Ok(0)));
    match (h, m, s, parts.next()) {
        (Some(Ok(h)), Some(Ok(m)), Ok(s), None) => Time::new(h, m, s, 0).map_err(|_| Unreadable::Time(text.into())),
        _ => Err(Unreadable::Time(text.into())),
    }
}

impl RepairWindow {
    /// `DAYS HH:MM-HH:MM [ZONE] [@ SELECTOR]`.
    pub(crate) fn parse(text: &str, stance: Stance) -> Result<RepairWindow, WindowError> {
        let bad = |why: Unreadable| WindowError { stance, text: text.to_string(), why };
        let (spec, selector) = match text.split_once('@') {
            Some((spec, selector)) => (spec, Some(selector.trim().to_string()).filter(|s| !s.is_empty())),
            None => (text, None),
        };
        let words: Vec<&str> = spec.split_whitespace().collect();
        let (days_spec, hours, zone) = match words.as_slice() {
            [d, h] => (*d, *h, None),
            [d, h, z] => (*d, *h, Some(*z)),
            _ => return Err(bad(Unreadable::Shape)),
        };
        let (from, to) = hours.split_once('-').ok_or_else(|| bad(Unreadable::Hours(hours.to_string())))?;
        let zone = match zone {
            None | Some("UTC") => TimeZone::UTC,
            Some(name) => TimeZone::get(name).map_err(|_| bad(Unreadable::Zone(name.to_string())))?,
        };
        let (start, end) = (time(from).map_err(bad)?, time(to).map_err(bad)?);
        if start == end {
            return Err(bad(Unreadable::Empty));
        }
        Ok(RepairWindow {
            days: days(days_spec).map_err(bad)?,
            start,
            end,
            zone,
            stance,
            selector,
            text: text.trim().to_string(),
        })
    }

    fn day_on(&self, weekday: Weekday) -> bool {
        self.days[weekday.to_monday_zero_offset() as usize]
    }

    /// Whether the window is open at `now`.
    pub(crate) fn is_open(&self, now: Timestamp) -> bool {
        let local = now.to_zoned(self.zone.clone());
        let (weekday, t) = (local.weekday(), local.time());
        if self.start < self.end {
            self.day_on(weekday) && self.start <= t && t < self.end
        } else {
            // Through midnight: opened today, or opened yesterday and not closed yet.
            (self.day_on(weekday) && t >= self.start) || (self.day_on(weekday.wrapping_sub(1)) && t < self.end)
        }
    }

    /// When the window opens next after `now` (now when it is open).
    pub(crate) fn next_open(&self, now: Timestamp) -> Option<Timestamp> {
        if self.is_open(now) {
            return Some(now);
        }
        let today = now.to_zoned(self.zone.clone()).date();
        (0..8).find_map(|k| {
            let date = today.checked_add(k.days()).ok()?;
            if !self.day_on(date.weekday()) {
                return None;
            }
            let at = date.to_datetime(self.start).to_zoned(self.zone.clone()).ok()?.timestamp();
            (at > now).then_some(at)
        })
    }

    /// When the window closes next after `now`, if it is open.
    fn closes(&self, now: Timestamp) -> Option<Timestamp> {
        if !self.is_open(now) {
            return None;
        }
        let local = now.to_zoned(self.zone.clone());
        let date = if local.time() < self.end { local.date() } else { local.date().checked_add(1.day()).ok()? };
        date.to_datetime(self.end).to_zoned(self.zone.clone()).ok().map(|z| z.timestamp())
    }
}

/// Whether a release may heal now.
#[derive(Debug, PartialEq)]
pub(crate) enum Gate {
    Open,
    /// Not now: why, and when to look again (none when no window ever opens).
    Wait {
        why: String,
        until: Option<Timestamp>,
    },
}

/// The windows that apply to one release, decided at `now`.
pub(crate) fn gate(windows: &[&RepairWindow], now: Timestamp) -> Gate {
    if let Some(deny) = windows.iter().find(|w| w.stance == Stance::Deny && w.is_open(now)) {
        return Gate::Wait { why: format!("deny window {} is open", deny.text), until: deny.closes(now) };
    }
    let allow: Vec<&&RepairWindow> = windows.iter().filter(|w| w.stance == Stance::Allow).collect();
    if allow.is_empty() || allow.iter().any(|w| w.is_open(now)) {
        return Gate::Open;
    }
    let next = allow.iter().filter_map(|w| w.next_open(now).map(|at| (at, w))).min_by_key(|(at, _)| *at);
    match next {
        Some((at, w)) => Gate::Wait { why: format!("waiting for window {} (opens {at:.0})", w.text), until: Some(at) },
        None => Gate::Wait { why: "no repair window ever opens".into(), until: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn a_window_is_open_on_its_days_in_its_zone() {
        // Saturday 2026-12-05, 02:00 to 04:00 in Berlin (UTC+1 in winter).
        let w = RepairWindow::parse("Sat 02:00-04:00 Europe/Berlin", Stance::Allow).unwrap();
        assert!(!w.is_open(at("2026-12-05T00:59:59Z")));
        assert!(w.is_open(at("2026-12-05T01:00:00Z")));
        assert!(w.is_open(at("2026-12-05T02:59:59Z")));
        assert!(!w.is_open(at("2026-12-05T03:00:00Z")));
        assert!(!w.is_open(at("2026-12-06T01:30:00Z")), "Sunday");
        assert_eq!(w.next_open(at("2026-12-01T21:00:00Z")), Some(at("2026-12-05T01:00:00Z")));
        // In summer Berlin is UTC+2.
        assert!(w.is_open(at("2026-07-04T00:30:00Z")));
    }

    #[test]
    fn a_window_through_midnight_and_ranges_of_days() {
        let w = RepairWindow::parse("Mon-Fri 22:00-06:00", Stance::Allow).unwrap();
        assert!(w.is_open(at("2026-12-04T23:00:00Z")), "Friday night");
        assert!(w.is_open(at("2026-12-05T05:59:00Z")), "Saturday morning, opened Friday");
        assert!(!w.is_open(at("2026-12-05T23:00:00Z")), "Saturday night");
        assert!(!w.is_open(at("2026-12-07T05:00:00Z")), "Monday morning: Sunday opened none");
        assert_eq!(w.next_open(at("2026-12-05T12:00:00Z")), Some(at("2026-12-07T22:00:00Z")));
        let weekend = RepairWindow::parse("sat,sun 10:00:00-10:00:30 UTC @ team=a", Stance::Allow).unwrap();
        assert_eq!(weekend.selector.as_deref(), Some("team=a"));
        assert!(weekend.is_open(at("2026-12-06T10:00:29Z")));
        assert!(!weekend.is_open(at("2026-12-06T10:00:30Z")));
    }

    #[test]
    fn deny_wins_and_no_allow_window_means_always() {
        let allow = RepairWindow::parse("* 02:00-04:00", Stance::Allow).unwrap();
        let deny = RepairWindow::parse("Sat 00:00-23:59", Stance::Deny).unwrap();
        assert_eq!(gate(&[], at("2026-12-01T12:00:00Z")), Gate::Open);
        assert_eq!(gate(&[&deny], at("2026-12-01T12:00:00Z")), Gate::Open, "Tuesday: no deny open");
        assert_eq!(gate(&[&allow, &deny], at("2026-12-01T03:00:00Z")), Gate::Open);
        let Gate::Wait { why, until } = gate(&[&allow], at("2026-12-01T12:00:00Z")) else { panic!() };
        assert!(why.starts_with("waiting for window * 02:00-04:00 (opens 2026-12-02T02:00:00Z)"), "{why}");
        assert_eq!(until, Some(at("2026-12-02T02:00:00Z")));
        let Gate::Wait { why, until } = gate(&[&allow, &deny], at("2026-12-05T03:00:00Z")) else { panic!() };
        assert!(why.starts_with("deny window Sat 00:00-23:59 is open"), "{why}");
        assert_eq!(until, Some(at("2026-12-05T23:59:00Z")));
    }

    #[test]
    fn bad_windows_say_what_is_wrong() {
        for (text, said) in [
            ("Sat", "expected DAYS HH:MM-HH:MM"),
            ("Someday 02:00-04:00", "is not a day"),
            ("Sat 2-4", "is not a time of day"),
            ("Sat 25:00-04:00", "is not a time of day"),
            ("Sat 02:00-04:00 Mars/Olympus", "is not a time zone"),
            ("Sat 02:00-02:00", "starts and ends at the same time"),
        ] {
            let e = RepairWindow::parse(text, Stance::Allow).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--repair-window {text:?}: ")) && e.contains(said), "{e}");
        }
    }
}
