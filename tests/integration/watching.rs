//! Harness for `helm drift watch`: the watcher as a child process (metrics on a free loopback
//! port, JSON logs collected), an HTTP client for its endpoints, a loopback notification
//! receiver, and the Events it records.

use crate::support::{Env, eventually};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running `helm-drift watch`; stopped (SIGTERM) when dropped.
pub struct Watching {
    child: Option<Child>,
    logs: Arc<Mutex<Vec<String>>>,
    pub address: String,
}

impl Watching {
    /// Starts `helm-drift watch ARGS` in the env's namespace and waits until it serves metrics.
    pub fn start(env: &Env, args: &[&str]) -> Watching {
        Watching::start_with(env, args, &[])
    }

    pub fn start_with(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Watching {
        let mut all = vec!["watch", "--metrics-address", "127.0.0.1:0", "--log-format", "json"];
        all.extend_from_slice(args);
        let mut run = env.drift(&all);
        for (k, v) in vars {
            run = run.env(k, v);
        }
        let mut cmd = run.into_command();
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start helm-drift watch");
        let stderr = child.stderr.take().unwrap();
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let mut w = Watching { child: Some(child), logs, address: String::new() };
        eventually("the watcher to serve metrics", Duration::from_secs(30), || {
            let found = w.log_lines().iter().find_map(|l| l["address"].as_str().map(str::to_string));
            if let Some(a) = found {
                w.address = a;
            }
            !w.address.is_empty() || w.exited()
        });
        assert!(!w.exited(), "the watcher exited at start:\n{}", w.logs_text());
        w
    }

    fn exited(&mut self) -> bool {
        self.child.as_mut().is_some_and(|c| c.try_wait().ok().flatten().is_some())
    }

    /// Every log line, parsed (each must be JSON).
    pub fn log_lines(&self) -> Vec<Value> {
        let lines = self.logs.lock().unwrap().clone();
        lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {l}")))
            .collect()
    }

    pub fn logs_text(&self) -> String {
        self.logs.lock().unwrap().join("\n")
    }

    /// `GET path` on the watcher's address: status and body.
    pub fn get(&self, path: &str) -> (u16, String) {
        http_get(&self.address, path)
    }

    pub fn metrics(&self) -> String {
        self.get("/metrics").1
    }

    /// The value of a sample (`name{labels}` exactly as exposed), if present.
    pub fn sample(&self, series: &str) -> Option<f64> {
        let text = self.metrics();
        text.lines().find_map(|l| l.strip_prefix(series).and_then(|v| v.strip_prefix(' ')).map(|v| v.parse().unwrap()))
    }

    /// Waits until the first full check is done.
    pub fn ready(self) -> Watching {
        eventually("the watcher to be ready", Duration::from_secs(60), || self.get("/readyz").0 == 200);
        self
    }

    /// Waits until `series` has `value`.
    pub fn wait_for(&self, series: &str, value: f64) {
        let mut last = None;
        eventually(&format!("{series} = {value}"), Duration::from_secs(30), || {
            last = self.sample(series);
            last == Some(value)
        });
    }

    /// The series of one release's drift gauge.
    pub fn drifted(ns: &str, release: &str) -> String {
        format!("helm_drift_release_drifted{{namespace=\"{ns}\",release=\"{release}\"}}")
    }

    /// How many releases were compared so far (the check duration histogram's count).
    pub fn checks(&self) -> f64 {
        self.sample("helm_drift_check_duration_seconds_count").unwrap_or(0.0)
    }

    /// Stops the watcher with SIGTERM and asserts it exits 0 within 30 seconds (it is killed
    /// after that, and the test fails).
    pub fn stop(mut self) {
        let pid = self.child.as_ref().unwrap().id().to_string();
        let _ = std::process::Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !self.exited() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut child = self.child.take().unwrap();
        let status = match child.try_wait().unwrap() {
            Some(status) => status,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the watcher did not stop within 30 s of SIGTERM:\n{}", self.logs_text());
            }
        };
        assert_eq!(status.code(), Some(0), "the watcher's exit on SIGTERM:\n{}", self.logs_text());
    }

    /// Kills the watcher (no clean shutdown).
    pub fn kill(mut self) {
        let mut child = self.child.take().unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A plain HTTP/1.1 GET on loopback.
pub fn http_get(address: &str, path: &str) -> (u16, String) {
    let Ok(mut s) = std::net::TcpStream::connect(address) else { return (0, String::new()) };
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// A loopback HTTP receiver for `--notify`: keeps every POST body.
pub struct Receiver {
    pub url: String,
    bodies: Arc<Mutex<Vec<String>>>,
}

impl Receiver {
    pub fn start() -> Receiver {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let sink = bodies.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).map(|n| n == 0).unwrap_or(true) || h == "\r\n" {
                        break;
                    }
                    if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_ok() {
                    sink.lock().unwrap().push(String::from_utf8_lossy(&body).into_owned());
                }
                let mut stream = stream;
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            }
        });
        Receiver { url, bodies }
    }

    pub fn bodies(&self) -> Vec<String> {
        self.bodies.lock().unwrap().clone()
    }

    /// The notifications received, parsed.
    pub fn received(&self) -> Vec<Value> {
        self.bodies().iter().map(|b| serde_json::from_str(b).unwrap()).collect()
    }

    /// How many notifications of this event were received.
    pub fn count(&self, event: &str) -> usize {
        self.received().iter().filter(|n| n["event"] == event).count()
    }
}

/// Events with this reason in the env's namespace.
pub fn events(env: &Env, reason: &str) -> Vec<Value> {
    let out = env.kubectl(&["get", "events", "--field-selector", &format!("reason={reason}"), "-o", "json"]).success();
    let list: Value = serde_json::from_str(&out.stdout()).unwrap();
    list["items"].as_array().cloned().unwrap_or_default()
}
