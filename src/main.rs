//! The `helm-drift` binary: everything happens in [`helm_drift::commands`]; the exit code is set here.

fn main() -> std::process::ExitCode {
    helm_drift::commands::main()
}
