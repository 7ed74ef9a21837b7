//! What a helper the run starts (helm, kustomize) prints, read within a budget: its output up to
//! a size (the helper is stopped past it, never read without bound), its words up to another,
//! and, where asked, within a time.

use anyhow::{Context, Result, bail};
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// How much of a helper's output is read, and for how long.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CaptureLimits {
    pub(crate) stdout: usize,
    pub(crate) stderr: usize,
    pub(crate) time: Option<Duration>,
}

/// What a helper printed, and whether it succeeded.
pub(crate) struct Captured {
    pub(crate) ok: bool,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `cmd` (named `program` in errors) and reads what it prints within `limits`: past its
/// output's budget or its time it is stopped and this is an error; what it says past its words'
/// budget is read and dropped, so it never waits on a full pipe.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn capture(cmd: std::process::Command, program: &str, limits: CaptureLimits) -> Result<Captured> {
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true).stdin(std::process::Stdio::null());
    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let shown = cmd.as_std().get_program().to_string_lossy().into_owned();
    let mut child = cmd.spawn().with_context(|| format!("cannot run {shown}"))?;
    let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        bail!("{shown} started without its output");
    };
    // Its words are read beside its output, so that it never waits on a full pipe.
    let words = tokio::spawn(async move {
        let mut err = Vec::new();
        (&mut stderr).take(limits.stderr as u64).read_to_end(&mut err).await?;
        tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await?;
        Ok::<_, std::io::Error>(err)
    });
    let read = async {
        let mut out = Vec::new();
        stdout.take(limits.stdout as u64 + 1).read_to_end(&mut out).await?;
        if out.len() > limits.stdout {
            return Ok(None);
        }
        let err = words.await.map_err(std::io::Error::other)??;
        Ok::<_, std::io::Error>(Some((child.wait().await?, out, err)))
    };
    let done = match limits.time {
        Some(t) => tokio::time::timeout(t, read)
            .await
            .map_err(|_| anyhow::anyhow!("{program} took longer than {}s", t.as_secs()))??,
        None => read.await?,
    };
    let Some((status, stdout, stderr)) = done else {
        bail!("{program} printed more than {} MiB", limits.stdout >> 20);
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok(Captured { ok: status.success(), stdout: text(&stdout), stderr: text(&stderr) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> std::process::Command {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    #[tokio::test]
    async fn a_helper_is_read_within_its_budget() {
        let limits = CaptureLimits { stdout: 1 << 20, stderr: 16, time: Some(Duration::from_secs(20)) };
        let ok = capture(sh("echo out; echo 'Error: no' >&2; exit 3"), "t", limits).await.unwrap();
        assert_eq!((ok.ok, ok.stdout.as_str(), ok.stderr.as_str()), (false, "out\n", "Error: no\n"));
        // Words past their budget are dropped, never waited on.
        let loud = capture(sh("head -c 3000000 /dev/zero >&2; echo done"), "t", limits).await.unwrap();
        assert_eq!((loud.stdout.as_str(), loud.stderr.len()), ("done\n", 16));
        // Output past its budget stops the helper (it would print forever).
        let e = capture(sh("yes"), "t", limits).await.err().unwrap().to_string();
        assert_eq!(e, "t printed more than 1 MiB");
        let slow = CaptureLimits { time: Some(Duration::from_millis(200)), ..limits };
        let e = capture(sh("sleep 30"), "t", slow).await.err().unwrap().to_string();
        assert!(e.contains("took longer"), "{e}");
    }
}
