//! Which failed requests may succeed when tried again, and trying them again with backoff.

/// Attempts of a read that fails for a transient reason.
const ATTEMPTS: u32 = 6;

/// Whether a failed request may succeed if tried again: the connection failed or was cut (an
/// API server restarting), a timeout, or the server said it is busy or failing (429, 5xx).
/// Certificate errors are not transient.
pub(crate) fn transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => matches!(s.code, 429 | 500 | 502 | 503 | 504),
        kube::Error::HyperError(_) | kube::Error::Service(_) => {
            let text = format!("{e:?}").to_ascii_lowercase();
            !text.contains("certificate") && !text.contains("invalidcert")
        }
        _ => false,
    }
}

/// Runs an idempotent request, retrying transient failures with backoff (250 ms doubling, about
/// 8 s in all: long enough to ride out an API server restart).
pub(crate) async fn retry<T, F, Fut>(mut request: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, kube::Error>>,
{
    let mut delay = std::time::Duration::from_millis(250);
    let mut attempt = 1;
    loop {
        match request().await {
            Err(e) if attempt < ATTEMPTS && transient(&e) => {
                tokio::time::sleep(delay).await;
                delay *= 2;
                attempt += 1;
            }
            result => return result,
        }
    }
}
