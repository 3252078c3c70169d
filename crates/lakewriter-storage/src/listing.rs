//! An S3 store whose LIST requests are retried when their answer breaks off. object_store retries
//! a LIST that failed to be answered, but reads the answer's body outside its retry loop: a body
//! cut mid-way fails the listing at once. Here such a listing goes on, under the same
//! [`RequestPolicy`] (tries, pauses, retry budget): a LIST is asked again, and a listing of many
//! pages resumes after the last object it gave (S3 lists in key order), so no object is given
//! twice. Every other request goes to the store as it is.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use futures::stream::{BoxStream, StreamExt};
use object_store::client::HttpError;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

use crate::RequestPolicy;

/// `inner` with its LISTs retried under `policy`.
#[derive(Debug)]
pub(crate) struct RetriedLists {
    pub inner: Arc<dyn ObjectStore>,
    pub policy: RequestPolicy,
}

impl fmt::Display for RetriedLists {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

/// Whether `error` is an answer whose body broke off: the cause right below the store's error is
/// the HTTP error of reading it (a request that failed to be answered is a retry error there,
/// after object_store's own retries).
fn broke_off(error: &object_store::Error) -> bool {
    let object_store::Error::Generic { source, .. } = error else { return false };
    source.source().is_some_and(|cause| cause.downcast_ref::<HttpError>().is_some())
}

/// The tries of one listing: how many retries are left, and when the first try began.
struct Tries {
    policy: RequestPolicy,
    retries: usize,
    started: Instant,
}

impl Tries {
    fn new(policy: RequestPolicy) -> Self {
        Self { policy, retries: 0, started: Instant::now() }
    }

    /// After `error`: the pause before the next try, or `None` where there is none.
    fn next(&mut self, error: &object_store::Error) -> Option<std::time::Duration> {
        let policy = &self.policy;
        if !broke_off(error) || self.retries >= policy.max_retries || self.started.elapsed() > policy.retry_timeout {
            return None;
        }
        self.retries += 1;
        let exponent = i32::try_from(self.retries - 1).unwrap_or(i32::MAX);
        let pause = policy.init_backoff.mul_f64(2f64.powi(exponent)).min(policy.max_backoff);
        Some(pause)
    }
}

impl RetriedLists {
    /// The listing of `prefix` after `offset`, resumed after its last object where it breaks off.
    fn resumed(&self, prefix: Option<&Path>, offset: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        struct State {
            inner: Arc<dyn ObjectStore>,
            prefix: Option<Path>,
            after: Option<Path>,
            tries: Tries,
            listing: Option<BoxStream<'static, Result<ObjectMeta>>>,
        }
        let list = |inner: &Arc<dyn ObjectStore>, prefix: Option<&Path>, after: Option<&Path>| match after {
            Some(after) => inner.list_with_offset(prefix, after),
            None => inner.list(prefix),
        };
        let state = State {
            listing: Some(list(&self.inner, prefix, offset)),
            inner: Arc::clone(&self.inner),
            prefix: prefix.cloned(),
            after: offset.cloned(),
            tries: Tries::new(self.policy),
        };
        futures::stream::unfold(state, move |mut state| async move {
            loop {
                let listing = state.listing.as_mut()?;
                match listing.next().await? {
                    Ok(meta) => {
                        state.after = Some(meta.location.clone());
                        return Some((Ok(meta), state));
                    }
                    Err(error) => {
                        let Some(pause) = state.tries.next(&error) else {
                            state.listing = None;
                            return Some((Err(error), state));
                        };
                        tokio::time::sleep(pause).await;
                        state.listing = Some(list(&state.inner, state.prefix.as_ref(), state.after.as_ref()));
                    }
                }
            }
        })
        .boxed()
    }
}

#[async_trait]
impl ObjectStore for RetriedLists {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.resumed(prefix, None)
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, Result<ObjectMeta>> {
        self.resumed(prefix, Some(offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let mut tries = Tries::new(self.policy);
        loop {
            match self.inner.list_with_delimiter(prefix).await {
                Err(error) => match tries.next(&error) {
                    Some(pause) => tokio::time::sleep(pause).await,
                    None => return Err(error),
                },
                listed => return listed,
            }
        }
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}
