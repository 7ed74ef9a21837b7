//! A private OCI registry (the CNCF distribution registry that `scripts/tools.sh` builds) on a
//! free loopback port, plain HTTP, its storage in a directory of its own: for the tests that push
//! the Helm 4 plugin package and install it with `helm plugin install oci://...`.

use crate::Tools;
use crate::process::{self, Children};
use anyhow::{Result, bail};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub struct OciRegistry {
    children: Children,
    port: u16,
    dir: PathBuf,
}

impl OciRegistry {
    /// Starts the registry with its storage under `dir` and waits until `/v2/` answers.
    pub fn start(tools: &Tools, dir: &Path) -> Result<OciRegistry> {
        std::fs::create_dir_all(dir)?;
        let port = process::free_port()?;
        let config = dir.join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
                 http:\n  addr: 127.0.0.1:{port}\n",
                dir.join("data").display()
            ),
        )?;
        let mut children = Children::default();
        let args = ["serve".to_string(), config.display().to_string()];
        children.spawn("registry", &tools.path("registry"), &args, dir)?;
        let mut registry = OciRegistry { children, port, dir: dir.to_path_buf() };
        registry.wait_ready(Duration::from_secs(30))?;
        Ok(registry)
    }

    fn wait_ready(&mut self, limit: Duration) -> Result<()> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            self.children.check_alive()?;
            if self.get("/v2/").is_ok_and(|head| head.starts_with("HTTP/1.1 200")) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        bail!("the OCI registry on port {} did not answer /v2/ within {limit:?}", self.port)
    }

    /// The status line and headers of `GET path`.
    fn get(&self, path: &str) -> std::io::Result<String> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.host())?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer)?;
        Ok(answer)
    }

    /// `127.0.0.1:PORT`, the registry part of a reference.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn stop(&self) {
        self.children.stop();
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        self.stop();
    }
}
