//! Watches as every watcher of the crate runs them: their timeout and page size, their Api in a
//! namespace or everywhere, and a backoff that the `Init` each list attempt begins with does not
//! reset (kube's does: a list that always fails was tried again every second).

use futures::{Stream, StreamExt};
use kube::api::{Api, ApiResource};
use kube::runtime::watcher::{self, Event};
use std::time::Duration;

/// The first and the longest wait before a failed watch is tried again.
pub(crate) const BACKOFF_MIN: Duration = Duration::from_millis(800);
pub(crate) const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Watches end after 290 s and start again from where they were (within the read timeout of
/// the watch client; bookmarks keep their place). Their initial LISTs come in pages of
/// `--chunk-size` (kube's watcher lists again when a continue token expires).
pub(crate) fn watch_config() -> watcher::Config {
    let mut config = watcher::Config::default().timeout(290);
    config.page_size = super::chunk_size();
    config
}

/// An Api of a namespaced kind in `namespace`, or in every namespace.
pub(crate) fn scoped<K>(client: &kube::Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// An Api of a kind known at run time (`resource`) in `namespace`, or in every namespace.
pub(crate) fn scoped_with<K>(client: &kube::Client, namespace: Option<&str>, resource: &ApiResource) -> Api<K>
where
    K: kube::Resource<Scope = kube::core::DynamicResourceScope, DynamicType = ApiResource>,
{
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, resource),
        None => Api::all_with(client.clone(), resource),
    }
}

/// Whether a watch failed because its kind is not served (404 on its list or watch).
pub(crate) fn not_served(e: &watcher::Error) -> bool {
    matches!(e, watcher::Error::InitialListFailed(kube::Error::Api(s)) | watcher::Error::WatchStartFailed(kube::Error::Api(s)) if s.code == 404)
}

/// `stream`, waiting after each error before asking again: from [`BACKOFF_MIN`], doubled up to
/// [`BACKOFF_MAX`], back to the least once an event other than `Init` arrives; after a kind not
/// served, `not_served_again` when given.
pub(crate) fn backed_off<K, S>(
    stream: S,
    not_served_again: Option<Duration>,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send
where
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send,
    K: Send,
{
    let start = (Box::pin(stream), BACKOFF_MIN, None::<Duration>);
    futures::stream::unfold(start, move |(mut stream, mut wait, pause)| async move {
        if let Some(pause) = pause {
            tokio::time::sleep(pause).await;
        }
        let item = stream.next().await?;
        let pause = match &item {
            Ok(Event::Init) => None,
            Ok(_) => {
                wait = BACKOFF_MIN;
                None
            }
            Err(e) => match not_served_again {
                Some(again) if not_served(e) => Some(again),
                _ => {
                    let pause = wait;
                    wait = (wait * 2).min(BACKOFF_MAX);
                    Some(pause)
                }
            },
        };
        Some((item, (stream, wait, pause)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::time::Instant;

    fn failed(code: u16) -> watcher::Error {
        let status = kube::core::Status::failure("no", "NotFound").with_code(code);
        watcher::Error::InitialListFailed(kube::Error::Api(Box::new(status)))
    }

    /// The moments (since the start) at which each item of `items` came out.
    async fn moments(items: Vec<Result<Event<()>, watcher::Error>>, again: Option<Duration>) -> Vec<u64> {
        let start = Instant::now();
        let stream = backed_off(futures::stream::iter(items), again);
        stream.map(|_| start.elapsed().as_millis() as u64).collect().await
    }

    #[tokio::test(start_paused = true)]
    async fn a_list_that_keeps_failing_waits_longer_each_time_and_an_event_resets_the_wait() {
        use Event::*;
        let items = vec![Ok(Init), Err(failed(500)), Ok(Init), Err(failed(500)), Ok(Init), Err(failed(500))];
        assert_eq!(moments(items, None).await, vec![0, 0, 800, 800, 2400, 2400]);
        let items = vec![Err(failed(500)), Err(failed(500)), Ok(InitDone), Err(failed(500)), Ok(Init)];
        assert_eq!(moments(items, None).await, vec![0, 800, 2400, 2400, 3200]);
        let waits: Vec<u64> = moments((0..9).map(|_| Err(failed(500))).collect(), None).await;
        assert_eq!(waits.windows(2).map(|w| w[1] - w[0]).max(), Some(30_000), "{waits:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_kind_not_served_is_asked_for_again_after_its_own_wait() {
        let items = || vec![Err(failed(404)), Ok(Event::Init), Err(failed(500))];
        assert_eq!(moments(items(), Some(Duration::from_secs(300))).await, vec![0, 300_000, 300_000]);
        assert_eq!(moments(items(), None).await, vec![0, 800, 800]);
    }
}
