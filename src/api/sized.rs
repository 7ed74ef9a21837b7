//! LISTs in pages sized by bytes, as a response arrives: a page asks for as many items as fit
//! [`PAGE_BYTES`] at the average size read so far, its response is read as it arrives and, past
//! [`PAGE_MAX`], dropped and asked again with a quarter of the items. Whoever may write the items
//! (a Secret of 1 MiB, a ConfigMap with 1 MiB of annotations) cannot make a page large.

use kube::api::ListParams;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// The response size a page aims at.
pub(crate) const PAGE_BYTES: usize = 4 * 1024 * 1024;
/// The most bytes of one page's response held at once: past it the response is dropped as it
/// is read and the page asked again with a quarter of the objects, so that a page costs no more
/// whatever the sizes of the objects before it (tiny ones, then large ones).
pub(crate) const PAGE_MAX: usize = 8 * 1024 * 1024;
/// Objects asked for in a listing's first page, before their size is known (an object may be
/// up to about 1.5 MiB, etcd's limit).
const FIRST_PAGE: u32 = 16;

/// How many objects the next page asks for: as many as fit [`PAGE_BYTES`] at the average size of
/// those read so far, at least one, at most the configured page size.
pub(crate) fn next_page(read_bytes: usize, read_objects: usize, most: u32) -> u32 {
    if read_objects == 0 {
        return FIRST_PAGE.min(most);
    }
    let average = (read_bytes / read_objects).max(1);
    u32::try_from(PAGE_BYTES / average).unwrap_or(u32::MAX).clamp(1, most)
}

/// What the pages of one LIST have read so far, to size the next ([`next_page`]), and the most a
/// page may ask for since one overflowed [`PAGE_MAX`] (doubled back after each page that fits).
pub(crate) struct PageSizes {
    read_bytes: AtomicUsize,
    read_objects: AtomicUsize,
    ceiling: AtomicU32,
}

impl PageSizes {
    pub(crate) fn new() -> PageSizes {
        PageSizes {
            read_bytes: AtomicUsize::new(0),
            read_objects: AtomicUsize::new(0),
            ceiling: AtomicU32::new(u32::MAX),
        }
    }

    /// One page's response text: `lp` sent with its limit sized by bytes within `most` (the
    /// configured page size; `None`: unpaginated, one request as asked), each request retried.
    pub(crate) async fn page(
        &self,
        client: &kube::Client,
        lp: &mut ListParams,
        most: Option<u32>,
        request: impl Fn(&ListParams) -> Result<http::Request<Vec<u8>>, kube::core::request::Error>,
    ) -> Result<String, kube::Error> {
        loop {
            lp.limit = most.map(|most| {
                let n =
                    next_page(self.read_bytes.load(Ordering::Relaxed), self.read_objects.load(Ordering::Relaxed), most);
                n.min(self.ceiling.load(Ordering::Relaxed))
            });
            let text = crate::api::retry(|| async {
                let req = request(lp).map_err(kube::Error::BuildRequest)?;
                page_text(client, req, lp.limit.map(|_| PAGE_MAX)).await
            })
            .await?;
            match (text, lp.limit) {
                (Some(text), _) => {
                    let _ =
                        self.ceiling.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| Some(c.saturating_mul(2)));
                    return Ok(text);
                }
                (None, Some(n)) if n > 1 => self.ceiling.store((n / 4).max(1), Ordering::Relaxed),
                (None, _) => {
                    return Err(kube::Error::ReadEvents(std::io::Error::other(format!(
                        "one object's response is over {} MiB",
                        PAGE_MAX >> 20
                    ))));
                }
            }
        }
    }

    /// Takes in a page read: its bytes and how many items it held.
    pub(crate) fn read(&self, bytes: usize, items: usize) {
        self.read_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.read_objects.fetch_add(items, Ordering::Relaxed);
    }
}

/// One page's response text, read as it arrives: `None` once it is over `most` bytes (what was
/// read is dropped, and the rest of the response with the connection). `None` for `most`: the
/// whole response, as asked.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn page_text(
    client: &kube::Client,
    req: http::Request<Vec<u8>>,
    most: Option<usize>,
) -> Result<Option<String>, kube::Error> {
    use futures::AsyncReadExt;
    let stream = client.request_stream(req).await?;
    let mut bytes = Vec::new();
    let limit = most.map_or(u64::MAX, |m| m as u64 + 1);
    stream.take(limit).read_to_end(&mut bytes).await.map_err(kube::Error::ReadEvents)?;
    if most.is_some_and(|m| bytes.len() > m) {
        return Ok(None);
    }
    String::from_utf8(bytes).map(Some).map_err(kube::Error::FromUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_sized_by_bytes() {
        assert_eq!(next_page(0, 0, 500), FIRST_PAGE, "unknown sizes: a small first page");
        assert_eq!(next_page(0, 0, 5), 5, "never past the configured size");
        assert_eq!(next_page(16 * 2048, 16, 500), 500, "small objects: the configured size");
        assert_eq!(next_page(16 * 900 * 1024, 16, 500), 4, "900 KB objects: four to a page");
        assert_eq!(next_page(16 * 8 * 1024 * 1024, 16, 500), 1, "at least one");
    }
}
