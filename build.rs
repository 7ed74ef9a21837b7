//! Build facts for `helm drift version`: the commit (from `HELM_DRIFT_COMMIT`, else git) and the
//! build date (`SOURCE_DATE_EPOCH` for reproducible builds, else today), both UTC.

// git's output is the build's own fact, not input from the cluster: no door.
#![allow(clippy::disallowed_methods)]

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=HELM_DRIFT_COMMIT");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    // Rebuilt when the checkout moves to another commit (not on every build).
    for f in [".git/HEAD", ".git/packed-refs", ".cargo_vcs_info.json"] {
        if std::path::Path::new(f).exists() {
            println!("cargo:rerun-if-changed={f}");
        }
    }
    if let Some(head) =
        std::fs::read_to_string(".git/HEAD").ok().and_then(|h| h.strip_prefix("ref: ").map(|r| r.trim().to_string()))
    {
        let reference = format!(".git/{head}");
        if std::path::Path::new(&reference).exists() {
            println!("cargo:rerun-if-changed={reference}");
        }
    }
    let commit = std::env::var("HELM_DRIFT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| {
            let out = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().ok()?;
            out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        })
        .or_else(packaged_commit)
        .unwrap_or_else(|| "unknown".into());
    let seconds = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|s| s.parse::<i64>().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
    });
    println!("cargo:rustc-env=HELM_DRIFT_COMMIT={commit}");
    println!("cargo:rustc-env=HELM_DRIFT_BUILD_DATE={}", date(seconds));
}

/// The commit a crates.io package was made from (`cargo package` writes it beside Cargo.toml).
fn packaged_commit() -> Option<String> {
    let info = std::fs::read_to_string(".cargo_vcs_info.json").ok()?;
    let at = info.find("\"sha1\"")?;
    let rest = &info[at + 6..];
    let start = rest.find('"')? + 1;
    let sha: String = rest[start..].chars().take_while(char::is_ascii_hexdigit).take(12).collect();
    (!sha.is_empty()).then_some(sha)
}

/// `YYYY-MM-DD` of a Unix time (UTC), from the days since 1970 (Howard Hinnant's civil date).
fn date(seconds: i64) -> String {
    let z = seconds.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
