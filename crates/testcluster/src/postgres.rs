//! A private PostgreSQL server (Debian's package) on a free loopback port, for tests of Helm's
//! SQL storage driver. As root it runs as the `postgres` user, which PostgreSQL requires. It
//! also speaks TLS, with a certificate for 127.0.0.1 and localhost from a CA of its own
//! ([`Postgres::ca_file`]).

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

/// A CA and the server certificate it signed (PEM files in `dir`); returns the CA's path.
fn tls_files(dir: &Path, owner: Option<(u32, u32)>) -> Result<PathBuf> {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_pem = ca.self_signed(&ca_key)?.pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
    params.subject_alt_names.push(SanType::IpAddress(std::net::IpAddr::from([127, 0, 0, 1])));
    let cert = params.signed_by(&key, &issuer)?;
    let write = |name: &str, text: &str, mode: u32| -> Result<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let at = dir.join(name);
        std::fs::write(&at, text)?;
        std::fs::set_permissions(&at, std::fs::Permissions::from_mode(mode))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&at, Some(uid), Some(gid))?;
        }
        Ok(at)
    };
    write("server.crt", &cert.pem(), 0o644)?;
    write("server.key", &key.serialize_pem(), 0o600)?;
    write("ca.crt", &ca_pem, 0o644)
}

impl Postgres {
    /// Creates a cluster in `dir` and starts it (each test makes its own database).
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
        tls_files(dir, user)?;
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
                "-c".into(),
                "ssl=on".into(),
                "-c".into(),
                format!("ssl_cert_file={}", path(&dir.join("server.crt"))),
                "-c".into(),
                format!("ssl_key_file={}", path(&dir.join("server.key"))),
            ],
            dir,
            user,
        )?;
        let mut pg = Postgres { children, port, dir: dir.to_path_buf(), bin };
        pg.wait_ready(Duration::from_secs(60))?;
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

    /// A new empty database for one test: Helm's sql driver creates its tables on first use,
    /// and two first uses of one database at once collide. Returns the address of it without
    /// `sslmode` (see [`Postgres::address`]).
    pub fn database(&self, name: &str) -> Result<String> {
        self.psql("postgres", &format!("CREATE DATABASE {name}"))?;
        Ok(self.address(name))
    }

    /// The connection string Helm's sql driver takes (`HELM_DRIVER_SQL_CONNECTION_STRING`) for
    /// a new database of that name, without TLS.
    pub fn connection_string(&self, database: &str) -> Result<String> {
        Ok(format!("{} sslmode=disable", self.database(database)?))
    }

    /// The CA that signed the server's certificate (PEM), for `sslrootcert`.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.crt")
    }

    /// The address of a database, without `sslmode` (add one).
    pub fn address(&self, database: &str) -> String {
        format!("host=127.0.0.1 port={} user=postgres dbname={database}", self.port)
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
