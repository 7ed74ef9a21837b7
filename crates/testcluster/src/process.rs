//! Child processes of the control plane: spawned with a parent-death signal, logged to files,
//! stopped together.

use anyhow::{Context, Result, bail};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How a child was started, to start it again.
#[derive(Clone)]
struct Spec {
    bin: std::path::PathBuf,
    args: Vec<String>,
    dir: std::path::PathBuf,
    user: Option<(u32, u32)>,
}

#[derive(Default)]
pub struct Children {
    procs: Mutex<Vec<(String, Child)>>,
    logs: Vec<(String, std::path::PathBuf)>,
    specs: Mutex<Vec<(String, Spec)>>,
}

impl Children {
    /// Starts `bin args`, logging to `<dir>/<name>.log`; the child gets SIGKILL if its parent
    /// thread dies.
    pub fn spawn(&mut self, name: &str, bin: &Path, args: &[String], dir: &Path) -> Result<()> {
        self.spawn_as(name, bin, args, dir, None)
    }

    /// Like [`Children::spawn`], switching to `user` (uid, gid) first when given.
    pub fn spawn_as(
        &mut self,
        name: &str,
        bin: &Path,
        args: &[String],
        dir: &Path,
        user: Option<(u32, u32)>,
    ) -> Result<()> {
        let log_path = dir.join(format!("{name}.log"));
        let child = start(name, bin, args, &log_path, user)?;
        self.procs.lock().unwrap().push((name.to_string(), child));
        self.logs.push((name.to_string(), log_path));
        let spec = Spec { bin: bin.to_path_buf(), args: args.to_vec(), dir: dir.to_path_buf(), user };
        self.specs.lock().unwrap().push((name.to_string(), spec));
        Ok(())
    }

    /// Kills one process and starts it again with the same arguments (its log is appended).
    pub fn restart(&self, name: &str) -> Result<()> {
        let spec = self.specs.lock().unwrap().iter().find(|(n, _)| n == name).map(|(_, s)| s.clone());
        let Some(spec) = spec else { bail!("no process {name}") };
        let mut procs = self.procs.lock().unwrap();
        let Some(slot) = procs.iter_mut().find(|(n, _)| n == name) else { bail!("no process {name}") };
        slot.1.kill().ok();
        slot.1.wait().ok();
        let log_path = spec.dir.join(format!("{name}.log"));
        slot.1 = start(name, &spec.bin, &spec.args, &log_path, spec.user)?;
        Ok(())
    }

    /// Sends a signal to one process (e.g. SIGSTOP / SIGCONT to make it hang and resume).
    pub fn signal(&self, name: &str, signal: libc::c_int) -> Result<()> {
        let procs = self.procs.lock().unwrap();
        let Some((_, child)) = procs.iter().find(|(n, _)| n == name) else { bail!("no process {name}") };
        // SAFETY: signalling our own child process.
        if unsafe { libc::kill(child.id() as libc::pid_t, signal) } != 0 {
            bail!("cannot signal {name}: {}", std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Fails with the tail of its log when a process has exited.
    pub fn check_alive(&mut self) -> Result<()> {
        let mut procs = self.procs.lock().unwrap();
        for (name, child) in procs.iter_mut() {
            if let Some(status) = child.try_wait()? {
                let tail = self.log_tail(name);
                bail!("{name} exited ({status}); last lines of its log:\n{tail}");
            }
        }
        Ok(())
    }

    fn log_tail(&self, name: &str) -> String {
        let Some((_, path)) = self.logs.iter().find(|(n, _)| n == name) else {
            return String::new();
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<_> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Blocks until one process ends; reports which one.
    pub fn wait_any(&mut self) -> Result<()> {
        loop {
            self.check_alive()?;
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// SIGTERM to all (newest first), a few seconds' grace, then SIGKILL; reaps every child.
    pub fn stop(&self) {
        let Ok(mut procs) = self.procs.lock() else { return };
        for (_, child) in procs.iter().rev() {
            // SAFETY: sending a signal to our own child process.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        for (_, child) in procs.iter_mut().rev() {
            while Instant::now() < deadline {
                if matches!(child.try_wait(), Ok(Some(_)) | Err(_)) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            child.kill().ok();
            child.wait().ok();
        }
        procs.clear();
    }
}

/// Starts one process, logging to `log_path` (appending); it gets SIGKILL if its parent thread
/// dies.
fn start(name: &str, bin: &Path, args: &[String], log_path: &Path, user: Option<(u32, u32)>) -> Result<Child> {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(log_path)?;
    let mut cmd = Command::new(bin);
    cmd.args(args).stdin(Stdio::null()).stdout(log.try_clone()?).stderr(log);
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid);
    }
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent. It runs after the
    // uid switch, which would otherwise clear the parent-death signal.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    cmd.spawn().with_context(|| format!("starting {name} ({})", bin.display()))
}

/// Ports handed to the control plane's components come from here: below the kernel's ephemeral
/// range (32768 and up on Linux), so that no `bind(127.0.0.1:0)` of a test, made while a
/// component is still starting, can be given the same port.
const PORTS: std::ops::Range<u16> = 20_000..32_000;

/// A currently free TCP port on 127.0.0.1, outside the ephemeral range; each call of this
/// process gets another one (a start that is still binding keeps its port).
pub fn free_port() -> Result<u16> {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let span = PORTS.end - PORTS.start;
    // Spread concurrent suites (one per process) over the range.
    // Processes started together have consecutive ids: spread by a prime, so that their ports
    // (a few each, taken one after the other) do not overlap.
    let offset = (u64::from(std::process::id()) * 7919 % u64::from(span)) as u16 + 1;
    let _ = NEXT.compare_exchange(0, offset, Ordering::SeqCst, Ordering::SeqCst);
    for _ in 0..span {
        let port = PORTS.start + NEXT.fetch_add(1, Ordering::SeqCst) % span;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    bail!("finding a free port: every port of {PORTS:?} is taken")
}
