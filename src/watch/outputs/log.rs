//! Structured logs on stderr for `watch`: one line per decision, as JSON or as `key=value` text.

use serde_json::{Map, Value};
use std::io::Write;

/// Where and how decisions are written.
#[derive(Clone, Debug, Default)]
pub(crate) struct Log {
    pub(crate) json: bool,
    /// The fleet member a watcher's lines are about (`cluster=` on each of them).
    pub(crate) cluster: Option<std::sync::Arc<str>>,
}

impl Log {
    pub(crate) fn info(&self, msg: &str, fields: &[(&str, &(dyn ToString + Sync))]) {
        self.write("info", msg, fields);
    }

    pub(crate) fn warn(&self, msg: &str, fields: &[(&str, &(dyn ToString + Sync))]) {
        self.write("warn", msg, fields);
    }

    pub(crate) fn error(&self, msg: &str, fields: &[(&str, &(dyn ToString + Sync))]) {
        self.write("error", msg, fields);
    }

    /// The same log, its lines about `cluster`.
    pub(crate) fn about(&self, cluster: &str) -> Log {
        Log { json: self.json, cluster: Some(cluster.into()) }
    }

    fn write(&self, level: &str, msg: &str, fields: &[(&str, &(dyn ToString + Sync))]) {
        let time = k8s_openapi::jiff::Timestamp::now().to_string();
        let line = match &self.cluster {
            Some(cluster) => {
                let mut all: Vec<(&str, &(dyn ToString + Sync))> = vec![("cluster", cluster)];
                all.extend_from_slice(fields);
                line(self.json, &time, level, msg, &all)
            }
            None => line(self.json, &time, level, msg, fields),
        };
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}

/// One log line, control characters escaped (values come from the cluster).
fn line(json: bool, time: &str, level: &str, msg: &str, fields: &[(&str, &(dyn ToString + Sync))]) -> String {
    crate::report::controls::escaped(&unescaped(json, time, level, msg, fields), false).into_owned()
}

fn unescaped(json: bool, time: &str, level: &str, msg: &str, fields: &[(&str, &(dyn ToString + Sync))]) -> String {
    if json {
        let mut map = Map::new();
        map.insert("time".into(), time.into());
        map.insert("level".into(), level.into());
        map.insert("msg".into(), msg.into());
        for (k, v) in fields {
            map.insert((*k).into(), Value::String(v.to_string()));
        }
        return Value::Object(map).to_string();
    }
    let mut out = format!("{time} {level:<5} {msg}");
    for (k, v) in fields {
        let v = v.to_string();
        // Quoted (and so escaped) when it could read as more than one field or line.
        if v.is_empty() || v.contains([' ', '"', '=']) || v.chars().any(char::is_control) {
            out.push_str(&format!(" {k}={v:?}"));
        } else {
            out.push_str(&format!(" {k}={v}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_text_lines() {
        let fields: [(&str, &(dyn ToString + Sync)); 2] = [("release", &"ns/web"), ("paths", &"/a /b")];
        let j: Value = serde_json::from_str(&line(true, "T", "info", "drift detected", &fields)).unwrap();
        assert_eq!(j["msg"], "drift detected");
        assert_eq!(j["release"], "ns/web");
        assert_eq!(
            line(false, "T", "info", "drift detected", &fields),
            "T info  drift detected release=ns/web paths=\"/a /b\""
        );
    }

    /// A value from the cluster cannot put a control sequence in a log line, in either format.
    #[test]
    fn control_characters_are_escaped() {
        let fields: [(&str, &(dyn ToString + Sync)); 1] = [("path", &"x\u{1b}]0;t\u{7}\u{9b}2J")];
        for json in [true, false] {
            let written = line(json, "T", "info", "m", &fields);
            assert!(!written.chars().any(|c| c.is_control()), "{written:?}");
        }
        let j: Value = serde_json::from_str(&line(true, "T", "info", "m", &fields)).unwrap();
        assert_eq!(j["path"], "x\u{1b}]0;t\u{7}\u{9b}2J", "JSON keeps the value");
        // A newline in a value cannot start a forged line of its own.
        let forged: [(&str, &(dyn ToString + Sync)); 1] = [("status", &"deployed\nT info  repair result=applied")];
        for json in [true, false] {
            assert_eq!(line(json, "T", "info", "m", &forged).lines().count(), 1);
        }
    }
}
