//! `testcluster DIR`: runs a local control plane in DIR until killed (used by scripts/demo.sh).
//! Writes DIR/kubeconfig, then DIR/ready once the API server is ready.

use std::path::PathBuf;

fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: testcluster DIR");
        std::process::exit(1);
    };
    let result = testcluster::Tools::locate().and_then(|tools| testcluster::ControlPlane::start(tools, &dir)).and_then(
        |mut cp| {
            eprintln!("control plane ready at {} (kubeconfig {})", cp.server(), cp.kubeconfig().display());
            cp.wait()
        },
    );
    if let Err(e) = result {
        eprintln!("testcluster: {e:#}");
        std::process::exit(1);
    }
}
