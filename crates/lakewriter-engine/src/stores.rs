//! The object stores of the scheduler and the executors: a bucket's store made on first use from
//! the project's `[storage]` options, as the CLI makes it ([`Location::object_store`]: the same
//! `AWS_*` variables, options and request policy), and the local filesystem.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::object_store::ObjectStoreRegistry;
use lakewriter_storage::Location;
use object_store::ObjectStore;
use url::Url;

/// Stores by their URL (`s3://bucket`, `file://`), each made once.
#[derive(Debug)]
pub struct Stores {
    /// The project's `[storage]` options, resolved.
    options: HashMap<String, String>,
    made: Mutex<HashMap<String, Arc<dyn ObjectStore>>>,
}

impl Stores {
    #[must_use]
    pub fn new(options: HashMap<String, String>) -> Self {
        Self { options, made: Mutex::default() }
    }
}

/// The key a store of `url` is kept under: its scheme and bucket.
fn key(url: &Url) -> String {
    format!("{}://{}", url.scheme(), url.authority())
}

impl ObjectStoreRegistry for Stores {
    fn register_store(&self, url: &Url, store: Arc<dyn ObjectStore>) -> Option<Arc<dyn ObjectStore>> {
        self.made.lock().ok()?.insert(key(url), store)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        let key = key(url);
        let mut made = self.made.lock().map_err(|_| DataFusionError::Internal("a store lock poisoned".to_owned()))?;
        if let Some(store) = made.get(&key) {
            return Ok(Arc::clone(store));
        }
        let err = |e: lakewriter_storage::Error| DataFusionError::External(Box::new(e));
        let env = |name: &str| std::env::var(name).ok();
        let location = Location::new(url.clone(), self.options.clone(), env).map_err(err)?;
        let store = location.object_store().map_err(err)?;
        made.insert(key, Arc::clone(&store));
        Ok(store)
    }
}
