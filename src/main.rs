//! The `helm-drift` binary: everything happens in [`helm_drift::cli`]; the exit code is set here.

fn main() -> std::process::ExitCode {
    helm_drift::cli::main()
}
