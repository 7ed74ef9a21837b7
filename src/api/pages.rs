//! LISTs in pages (`limit`/`continue`), as kubectl's `--chunk-size` and client-go's pager do: the
//! API server answers a page at a time and the process holds one page of response, not a whole
//! kind. The pages of one list are one consistent snapshot (the continue token carries the
//! resource version the list started at). When a token expires before the list is done (410
//! Gone: etcd compacted that version), the list starts again in one unpaginated request, as
//! client-go's pager does, so the result is still one snapshot and nothing is counted twice.

use std::sync::atomic::{AtomicU32, Ordering};

/// Objects per page unless `--chunk-size` says otherwise (kubectl's default).
pub(crate) const DEFAULT_CHUNK_SIZE: u32 = 500;

static CHUNK_SIZE: AtomicU32 = AtomicU32::new(DEFAULT_CHUNK_SIZE);

/// Sets the page size of every LIST this process sends; 0 lists each kind in one response. Called
/// once, by `commands::main` from `--chunk-size` (and by tests).
pub(crate) fn set_chunk_size(objects: u32) {
    CHUNK_SIZE.store(objects, Ordering::Relaxed);
}

/// The page size of LISTs (`None`: unpaginated).
pub(crate) fn chunk_size() -> Option<u32> {
    Some(CHUNK_SIZE.load(Ordering::Relaxed)).filter(|n| *n > 0)
}

/// One page: its items (already taken from the response, which is dropped) and the token of the
/// next page, if any.
pub(crate) struct Page<T> {
    pub(crate) items: Vec<T>,
    pub(crate) next: Option<String>,
}

/// Every item of a LIST. `fetch(limit, continue)` sends one request and returns its page; it is
/// called with the configured page size and each continue token in turn, and with
/// `(None, None)` when a token expired and the list starts again unpaginated.
pub(crate) async fn all_pages<T, F, Fut>(mut fetch: F) -> Result<Vec<T>, kube::Error>
where
    F: FnMut(Option<u32>, Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<Page<T>, kube::Error>>,
{
    let limit = chunk_size();
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    loop {
        match fetch(limit, token.clone()).await {
            Ok(page) => {
                items.extend(page.items);
                match page.next.filter(|t| !t.is_empty()) {
                    Some(next) => token = Some(next),
                    None => return Ok(items),
                }
            }
            Err(kube::Error::Api(s)) if s.code == 410 && token.is_some() => {
                drop(items);
                return fetch(None, None).await.map(|page| page.items);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Every item of a typed LIST, in pages: `list(params)` sends one request.
async fn paged<T, F, Fut>(lp: &kube::api::ListParams, list: F) -> Result<Vec<T>, kube::Error>
where
    T: Clone,
    F: Fn(kube::api::ListParams) -> Fut,
    Fut: std::future::Future<Output = Result<kube::core::ObjectList<T>, kube::Error>>,
{
    all_pages(|limit, token| {
        let mut lp = lp.clone();
        lp.limit = limit;
        lp.continue_token = token;
        let page = list(lp);
        async move {
            let list = page.await?;
            Ok(Page { next: list.metadata.continue_.clone(), items: list.items })
        }
    })
    .await
}

/// What `keep` takes of every object of a LIST, in pages sized by bytes ([`super::PageSizes`]):
/// each page is read as it arrives, its objects parsed and handed to `keep` one by one, and
/// what `keep` leaves is dropped before the next page is asked. So whoever may create the
/// objects (HorizontalPodAutoscalers, Cluster API Clusters, proxies, cluster Secrets) costs
/// one page of response and what a release or a member needs of each, never the whole kind. A
/// continue token that expires restarts the listing once, still in pages.
pub(crate) async fn list_kept<K, T>(
    client: &kube::Client,
    api: &kube::Api<K>,
    lp: &kube::api::ListParams,
    keep: impl FnMut(K) -> Option<T>,
) -> Result<Vec<T>, kube::Error>
where
    K: kube::Resource + serde::de::DeserializeOwned,
{
    let request = kube::core::Request::new(api.resource_url());
    kept_pages(client, lp, |lp| request.list(lp), keep).await
}

/// What `keep` takes of every item of the LIST `request` builds a page of (`Request::list`,
/// `Request::list_metadata`), as [`list_kept`] reads them.
pub(crate) async fn kept_pages<K, T>(
    client: &kube::Client,
    lp: &kube::api::ListParams,
    request: impl Fn(&kube::api::ListParams) -> Result<http::Request<Vec<u8>>, kube::core::request::Error>,
    mut keep: impl FnMut(K) -> Option<T>,
) -> Result<Vec<T>, kube::Error>
where
    K: serde::de::DeserializeOwned,
{
    #[derive(serde::Deserialize)]
    struct Listed<K> {
        // An empty list may say `"items": null`.
        #[serde(default = "Option::default")]
        items: Option<Vec<K>>,
        #[serde(default)]
        metadata: kube::core::ListMeta,
    }
    let sizes = super::PageSizes::new();
    let (mut page, mut kept, mut restarted) = (lp.clone(), Vec::new(), false);
    loop {
        // `--chunk-size 0` asks for one response per kind, as kubectl's: so it is.
        let text = match sizes.page(client, &mut page, chunk_size(), &request).await {
            Ok(text) => text,
            // The continue token expired: listed again from the start, once, still in pages.
            Err(kube::Error::Api(s)) if s.code == 410 && page.continue_token.is_some() && !restarted => {
                (kept, page.continue_token, restarted) = (Vec::new(), None, true);
                continue;
            }
            Err(e) => return Err(e),
        };
        let list: Listed<K> = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
        let items = list.items.unwrap_or_default();
        sizes.read(text.len(), items.len());
        drop(text);
        kept.extend(items.into_iter().filter_map(&mut keep));
        match list.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => page.continue_token = Some(token),
            None => return Ok(kept),
        }
    }
}

/// The metadata of every object of a LIST, in pages, each request retried.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn list_all_metadata<K>(
    api: &kube::Api<K>,
    lp: &kube::api::ListParams,
) -> Result<Vec<kube::core::PartialObjectMeta<K>>, kube::Error>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    paged(lp, |lp| async move { super::retry(|| api.list_metadata(&lp)).await }).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn gone() -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("The provided continue parameter is too old", "Expired").with_code(410).boxed(),
        )
    }

    /// A LIST of `0..total` served `limit` at a time; the token is the next offset. Records the
    /// requests; `expire` makes the token of that offset answer 410.
    type Seen = Mutex<Vec<(Option<u32>, Option<String>)>>;

    fn server<'a>(
        total: u32,
        expire: Option<&'static str>,
        seen: &'a Seen,
    ) -> impl FnMut(Option<u32>, Option<String>) -> std::future::Ready<Result<Page<u32>, kube::Error>> + 'a {
        move |limit, token| {
            seen.lock().unwrap().push((limit, token.clone()));
            if token.is_some() && token.as_deref() == expire {
                return std::future::ready(Err(gone()));
            }
            let from: u32 = token.as_deref().map_or(0, |t| t.parse().unwrap());
            let to = limit.map_or(total, |l| (from + l).min(total));
            let next = (to < total).then(|| to.to_string());
            std::future::ready(Ok(Page { items: (from..to).collect(), next }))
        }
    }

    #[tokio::test]
    async fn pages_follow_continue_tokens_and_an_expired_token_lists_again_whole() {
        // One test for the process-wide page size, so that no other test sees it changed.
        set_chunk_size(4);
        let seen = Mutex::new(Vec::new());
        let items = all_pages(server(10, None, &seen)).await.unwrap();
        assert_eq!(items, (0..10).collect::<Vec<_>>());
        let requests = seen.lock().unwrap().clone();
        assert_eq!(requests, [(Some(4), None), (Some(4), Some("4".to_string())), (Some(4), Some("8".to_string()))]);

        // The token of the third page expired: the list starts again, whole, and nothing of the
        // first pages is kept twice.
        let seen = Mutex::new(Vec::new());
        let items = all_pages(server(10, Some("8"), &seen)).await.unwrap();
        assert_eq!(items, (0..10).collect::<Vec<_>>());
        assert_eq!(seen.lock().unwrap().last().unwrap(), &(None, None));

        // A 410 on the first request is an error like any other (there is no token to blame).
        let first = |_: Option<u32>, _: Option<String>| std::future::ready(Err::<Page<u32>, _>(gone()));
        assert!(matches!(all_pages(first).await, Err(kube::Error::Api(s)) if s.code == 410));

        // 0: one unpaginated request.
        set_chunk_size(0);
        let seen = Mutex::new(Vec::new());
        assert_eq!(all_pages(server(10, None, &seen)).await.unwrap().len(), 10);
        assert_eq!(seen.lock().unwrap().clone(), [(None, None)]);
        set_chunk_size(DEFAULT_CHUNK_SIZE);
    }
}
