//! A private PostgreSQL server (Debian's package) on a free loopback port, for tests of Helm's
//! SQL storage driver. As root it runs as the `postgres` user, which PostgreSQL requires.

use crate::process::{self, Children};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Postgres {
    children: Children,
    port: u16,
    dir: PathBuf,
    bin: PathBuf,
}

impl Postgres {
    /// Creates a cluster in `dir`, starts it and creates database `helm`.
    pub fn start(dir: &Path) -> Result<Postgres> {
        let bin = bindir()?;
        std::fs::create_dir_all(dir)?;
        let user = if unsafe { libc::geteuid() } == 0 { Some(postgres_user()?) } else { None };
        let data = dir.join("data");
        let sockets = dir.join("sockets");
        std::fs::create_dir_all(&sockets)?;
        if let Some((uid, gid)) = user {
            for d in [dir, &sockets] {
                std::os::unix::fs::chown(d, Some(uid), Some(gid))?;
            }
        }
        let mut init = Command::new(bin.join("initdb"));
        init.args(["-D", path(&data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
        if let Some((uid, gid)) = user {
            use std::os::unix::process::CommandExt;
            init.uid(uid).gid(gid);
        }
        let out = init.output().context("running initdb")?;
        if !out.status.success() {
            bail!("initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        let port = process::free_port()?;
        let mut children = Children::default();
        children.spawn_as(
            "postgres",
            &bin.join("postgres"),
            &[
                "-D".into(),
                path(&data).into(),
                "-p".into(),
                port.to_string(),
                "-h".into(),
                "127.0.0.1".into(),
                "-k".into(),
                path(&sockets).into(),
                "-F".into(),
            ],
            dir,
            user,
        )?;
        let mut pg = Postgres { children, port, dir: dir.to_path_buf(), bin };
        pg.wait_ready(Duration::from_secs(60))?;
        pg.psql("postgres", "CREATE DATABASE helm")?;
        Ok(pg)
    }

    fn wait_ready(&mut self, limit: Duration) -> Result<()> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            self.children.check_alive()?;
            if self.psql("postgres", "SELECT 1").is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        bail!("PostgreSQL on port {} not ready after {limit:?}", self.port)
    }

    /// Runs one SQL statement with psql, returning its unaligned output.
    pub fn psql(&self, db: &str, sql: &str) -> Result<String> {
        let psql = if self.bin.join("psql").exists() { self.bin.join("psql") } else { PathBuf::from("psql") };
        let out = Command::new(psql)
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-d", db, "-tAc", sql])
            .output()
            .context("running psql")?;
        if !out.status.success() {
            bail!("psql {sql:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The connection string Helm's sql driver takes (`HELM_DRIVER_SQL_CONNECTION_STRING`).
    pub fn connection_string(&self) -> String {
        format!("host=127.0.0.1 port={} user=postgres dbname=helm sslmode=disable", self.port)
    }

    pub fn stop(&self) {
        self.children.stop();
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The directory of `initdb` and `postgres`: `pg_config --bindir`, else Debian's layout.
fn bindir() -> Result<PathBuf> {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").is_file() {
            return Ok(dir);
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").is_file())
        .collect();
    found.sort();
    found.pop().ok_or_else(|| {
        anyhow::anyhow!("PostgreSQL server not found: scripts/test.sh installs it (apt-get install postgresql)")
    })
}

/// uid and gid of the `postgres` user.
fn postgres_user() -> Result<(u32, u32)> {
    let name = std::ffi::CString::new("postgres").unwrap();
    // SAFETY: getpwnam returns a pointer into static storage or null; read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        bail!("no `postgres` user: install Debian's postgresql package (scripts/test.sh does)");
    }
    // SAFETY: checked non-null above.
    Ok(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}
