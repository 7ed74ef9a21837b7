//! Running a command and reading its peak resident memory from the kernel (`getrusage` of its
//! parent): what a test asserts a memory bound with, without sampling and without a race. The
//! command is started by a small Python process, not by the test: a process keeps the peak of
//! the memory it had before `exec`, and a test's is large (and shared when spawned with vfork).

use std::process::{Command, Output};

const WRAPPER: &str = "import resource, subprocess, sys\n\
code = subprocess.run(sys.argv[2:]).returncode\n\
open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n\
sys.exit(code if code >= 0 else 128 - code)\n";

/// Runs `cmd` to its end: its output, and its peak resident set size in KiB.
pub fn peak_rss(cmd: &mut Command) -> std::io::Result<(Output, u64)> {
    let dir = tempfile::tempdir()?;
    let report = dir.path().join("maxrss");
    let mut wrapped = Command::new("python3");
    wrapped.arg("-c").arg(WRAPPER).arg(&report).arg(cmd.get_program()).args(cmd.get_args());
    if let Some(cwd) = cmd.get_current_dir() {
        wrapped.current_dir(cwd);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    let output = wrapped.output()?;
    let kib = std::fs::read_to_string(&report)?.trim().parse().map_err(std::io::Error::other)?;
    Ok((output, kib))
}
