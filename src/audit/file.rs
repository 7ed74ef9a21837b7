//! An audit log backend's file (`--audit-log-path`: one JSON event per line) read as a stream:
//! only the writes to the objects asked about are kept, each line bounded, so a log of any
//! size costs the memory of what matches.

use super::{Target, Window, event};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};

/// What reading a log found besides the kept writes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct LogRead {
    /// Lines that are not audit events (the first one's number and why).
    pub(crate) refused: usize,
    pub(crate) first_refusal: Option<(usize, String)>,
    pub(crate) lines: usize,
}

/// Reads the events of `source` for the `targets` into `window`.
pub(crate) fn read(
    source: impl Read,
    targets: &HashSet<Target>,
    window: &mut Window,
    now: jiff::Timestamp,
) -> std::io::Result<LogRead> {
    let mut reader = BufReader::with_capacity(64 * 1024, source);
    let names: HashSet<&str> = targets.iter().map(|t| t.name.as_str()).collect();
    let collections: HashSet<Target> = targets.iter().map(Target::collection).collect();
    let mut out = LogRead::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let (n, whole) = bounded_line(&mut reader, &mut line)?;
        if n == 0 {
            return Ok(out);
        }
        out.lines += 1;
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() || !worth_parsing(&text, &names) {
            continue;
        }
        let parsed = if whole { event::parse_line(text.trim_end()) } else { Err(event::Rejected::TooLarge) };
        match parsed {
            Ok(Some(w)) if targets.contains(&w.target) || collections.contains(&w.target) => window.keep(w, now),
            Ok(_) => {}
            Err(e) => {
                out.refused += 1;
                out.first_refusal.get_or_insert((out.lines, e.to_string()));
            }
        }
    }
}

/// Whether a line may be a write to one of the targets: the log backend writes compact JSON, so
/// a read says `"verb":"get"` (or list, watch) and a write names its object first in its
/// `objectRef` (a flat object); what this cannot rule out is parsed. One lookup a line, however
/// many objects are asked about.
fn worth_parsing(line: &str, names: &HashSet<&str>) -> bool {
    const READS: [&str; 3] = ["\"verb\":\"get\"", "\"verb\":\"list\"", "\"verb\":\"watch\""];
    if READS.iter().any(|r| line.contains(r)) {
        return false;
    }
    if line.contains("\"verb\":\"deletecollection\"") {
        return true;
    }
    let Some(at) = line.find("\"objectRef\":{") else { return !line.contains("\"objectRef\"") };
    let rest = &line[at..];
    let Some(start) = rest.find("\"name\":\"") else { return false };
    let name = &rest[start + 8..];
    name.find('"').is_none_or(|end| names.contains(&name[..end]))
}

/// Reads one line, keeping at most [`event::MAX_EVENT_BYTES`] of it: the bytes consumed and
/// whether the line was kept whole.
fn bounded_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<(usize, bool)> {
    let mut consumed = 0;
    let mut whole = true;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((consumed, whole));
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let room = (event::MAX_EVENT_BYTES + 1).saturating_sub(line.len());
        if chunk.len() > room {
            whole = false;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let n = chunk.len();
        consumed += n;
        reader.consume(n);
        if done {
            return Ok((consumed, whole));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::WindowLimits;

    const PATCH: &str = r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"a1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/configmaps/c?fieldManager=kubectl-edit","verb":"patch","user":{"username":"alice"},"userAgent":"kubectl/v1.36.3","objectRef":{"resource":"configmaps","namespace":"ns","name":"c","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-02T14:51:00.1Z","stageTimestamp":"2026-12-02T14:51:00.2Z"}"#;

    fn target(name: &str) -> Target {
        Target { group: "".into(), plural: "configmaps".into(), namespace: Some("ns".into()), name: name.into() }
    }

    #[test]
    fn only_writes_to_the_targets_are_kept_and_a_huge_line_is_refused_not_read() {
        let huge = format!("{{\"objectRef\":{{\"name\":\"c\"}},\"x\":\"{}\"}}", "y".repeat(event::MAX_EVENT_BYTES));
        let other = PATCH.replace("\"name\":\"c\"", "\"name\":\"other\"");
        let log = format!("{PATCH}\n{huge}\nnot json at c\n{other}\n{}\n", PATCH.replace("\"patch\"", "\"get\""));
        assert!(worth_parsing(PATCH, &["c"].into()) && !worth_parsing(&other, &["c"].into()));
        let mut window = Window::new(WindowLimits::default());
        let targets: HashSet<Target> = [target("c")].into();
        let read = read(log.as_bytes(), &targets, &mut window, "2026-12-02T15:00:00Z".parse().unwrap()).unwrap();
        assert_eq!(window.writes(&target("c")).count(), 1);
        assert_eq!(window.writes(&target("other")).count(), 0, "not asked about: not kept");
        assert_eq!((read.lines, read.refused), (5, 2));
        assert_eq!(read.first_refusal.map(|(l, _)| l), Some(2));
    }
}
