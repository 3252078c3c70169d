//! How delta-rs reaches S3: through lakewriter's own object store.
//!
//! For the `s3://` and `s3a://` schemes, delta-rs builds its store with [`Location::object_store`]
//! — object_store's S3 client from the `AWS_*` environment, the root's `[storage]` options and its
//! request policy, exactly as lakewriter's own store — and commits through delta-rs's default log
//! store, whose commit is a put-if-absent (`PutMode::Create`: a `PUT` with `If-None-Match: *`).
//! This replaces delta-rs's `s3` feature (deltalake-aws and the AWS SDK), which adds nothing
//! lakewriter uses but the SDK's credential chain.

use std::sync::{Arc, Once};

use deltalake::logstore::{
    LogStore, LogStoreFactory, ObjectStoreFactory, ObjectStoreRef, StorageConfig, default_logstore, logstore_factories,
    object_store_factories,
};
use deltalake::{DeltaResult, DeltaTableError};
use lakewriter_storage::Location;
use object_store::path::Path;
use url::Url;

/// The factory of S3 stores and log stores registered with delta-rs.
struct S3;

impl ObjectStoreFactory for S3 {
    /// The bucket's store, and the table's path in it. The options are the root's
    /// ([`Location::options`]), already checked once; they are checked again here.
    fn parse_url_opts(&self, url: &Url, config: &StorageConfig) -> DeltaResult<(ObjectStoreRef, Path)> {
        let failed = |source: lakewriter_storage::Error| DeltaTableError::GenericError { source: Box::new(source) };
        let location = Location::new(url.clone(), config.raw.clone(), |key| std::env::var(key).ok()).map_err(failed)?;
        Ok((location.object_store().map_err(failed)?, Path::from_url_path(url.path())?))
    }
}

impl LogStoreFactory for S3 {
    fn with_options(
        &self,
        prefixed_store: ObjectStoreRef,
        root_store: ObjectStoreRef,
        location: &Url,
        options: &StorageConfig,
    ) -> DeltaResult<Arc<dyn LogStore>> {
        Ok(default_logstore(prefixed_store, root_store, location, options))
    }
}

/// Makes delta-rs handle `s3://` and `s3a://` URLs (once per process).
pub(crate) fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for scheme in ["s3://", "s3a://"] {
            let scheme = Url::parse(scheme).expect("a scheme parses as a URL");
            object_store_factories().insert(scheme.clone(), Arc::new(S3));
            logstore_factories().insert(scheme, Arc::new(S3));
        }
    });
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// delta-rs opens an S3 table through lakewriter's store and commits with a put-if-absent.
    #[test]
    fn an_s3_table_uses_lakewriter_s_store_and_the_default_log_store() {
        register();
        let location = Location::new(Url::parse("s3://bucket/lake/t/").unwrap(), HashMap::new(), |_| None).unwrap();
        let table = crate::table::unloaded(&location).expect("delta-rs builds the table's log store");
        let log_store = table.log_store();
        assert_eq!(log_store.name(), "DefaultLogStore");
        assert_eq!(log_store.root_url().as_str(), "s3://bucket/lake/t/");
        assert!(log_store.root_object_store(None).to_string().starts_with("AmazonS3(bucket)"));
    }
}
