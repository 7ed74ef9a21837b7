//! `testcluster DIR [--audited]`: runs a local control plane in DIR until killed (used by
//! scripts/demo.sh). Writes DIR/kubeconfig, then DIR/ready once the API server is ready. With
//! `--audited` its API server also posts its audit to a webhook on loopback, whose port, token
//! and certificates are written to DIR/audit-sink.env.

use std::path::PathBuf;

fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: testcluster DIR");
        std::process::exit(1);
    };
    let audited = std::env::args().nth(2).as_deref() == Some("--audited");
    let start = |tools| match audited {
        true => testcluster::ControlPlane::start_audited(tools, &dir),
        false => testcluster::ControlPlane::start(tools, &dir),
    };
    let result = testcluster::Tools::locate_control_plane().and_then(start).and_then(|mut cp| {
        if let Some(sink) = cp.audit_sink() {
            let env = format!(
                "AUDIT_PORT={}\nAUDIT_TOKEN={}\nAUDIT_CERT={}\nAUDIT_KEY={}\nAUDIT_CA={}\n",
                sink.port,
                sink.token,
                sink.cert.display(),
                sink.key.display(),
                sink.ca.display()
            );
            std::fs::write(cp.dir().join("audit-sink.env"), env)?;
        }
        eprintln!("control plane ready at {} (kubeconfig {})", cp.server(), cp.kubeconfig().display());
        cp.wait()
    });
    if let Err(e) = result {
        eprintln!("testcluster: {e:#}");
        std::process::exit(1);
    }
}
