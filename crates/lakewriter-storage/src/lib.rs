//! lakewriter-storage: where a lakehouse lives.
//!
//! A [`Location`] is a root URL — `file:///…/` or `s3://bucket/prefix/` — with the storage
//! options that reach it. Options come from the `AWS_*` environment object_store reads
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL`,
//! `AWS_ALLOW_HTTP`, …) and from the project's `[storage]` table, whose values may be `${VAR}`
//! references so that no secret needs to be written in the file. Option values never appear in
//! `Debug` output or errors.
//!
//! Commits to S3 are safe for concurrent writers only through conditional put (`If-None-Match`);
//! [`Location::new`] refuses any configuration that would commit without it.
//!
//! [`Location::object_store`] is the one S3 store of lakewriter, delta-rs's included (lakewriter-delta
//! registers it with delta-rs): every request follows one [`RequestPolicy`] (retries with
//! backoff, a retry budget, timeouts).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use url::Url;

mod listing;
mod policy;

pub use policy::RequestPolicy;

/// Errors in storage configuration ([`Error::is_config`]), and an object store that failed to set
/// up.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("unsupported lakehouse root `{url}`: use a local folder or s3://bucket/prefix")]
    Scheme { url: String },

    #[error(
        "unknown storage option `{key}`: neither an S3 setting of object_store nor one of lakewriter's request policy"
    )]
    UnknownOption { key: String },

    #[error("storage option `{key}` refers to ${{{var}}}, which is not set in the environment")]
    MissingEnv { key: String, var: String },

    #[error(
        "storage option `{key}` holds a secret in the project file: write `{key} = \"${{{key}}}\"` and set it in the environment"
    )]
    SecretInFile { key: String },

    #[error(
        "unsafe commit configuration: {what}. Concurrent writers could overwrite each other's commits; lakewriter commits to S3 only with conditional put (If-None-Match)"
    )]
    Unsafe { what: String },

    #[error("storage option `{key}` must be {expected}")]
    Policy { key: String, expected: &'static str },

    #[error("cannot set up the object store for {url}")]
    Store { url: Url, source: Box<object_store::Error> },
}

impl Error {
    /// True for an error in the configuration (root, options, commit safety); false where the
    /// object store failed to set up.
    #[must_use]
    pub fn is_config(&self) -> bool {
        !matches!(self, Self::Store { .. })
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A lakehouse root and the options that reach it.
#[derive(Clone)]
pub struct Location {
    url: Url,
    options: HashMap<String, String>,
    policy: RequestPolicy,
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&String> = self.options.keys().collect();
        f.debug_struct("Location")
            .field("url", &self.url.as_str())
            .field("option_keys", &keys)
            .field("policy", &self.policy)
            .finish()
    }
}

fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_uppercase();
    ["SECRET", "TOKEN", "PASSWORD", "SESSION"].iter().any(|s| key.contains(s))
}

/// Whether `key` (any case) is a storage option: one of the request policy's, or one object_store's
/// S3 store parses (its client options included).
fn is_known_option(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    policy::KEYS.contains(&lower.as_str()) || lower.parse::<AmazonS3ConfigKey>().is_ok()
}

/// Expands `${VAR}` references in the values of a `[storage]` table. A literal value for a secret
/// (a key naming a secret, token, password or session) is refused.
pub fn resolve_options(
    table: &BTreeMap<String, String>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<HashMap<String, String>> {
    let mut out = HashMap::new();
    for (key, value) in table {
        if !is_known_option(key) {
            return Err(Error::UnknownOption { key: key.clone() });
        }
        let trimmed = value.trim();
        let resolved = if let Some(var) = trimmed.strip_prefix("${").and_then(|v| v.strip_suffix('}')) {
            env(var).ok_or_else(|| Error::MissingEnv { key: key.clone(), var: var.to_owned() })?
        } else if is_secret(key) {
            return Err(Error::SecretInFile { key: key.clone() });
        } else {
            value.clone()
        };
        out.insert(key.to_ascii_uppercase(), resolved);
    }
    Ok(out)
}

impl Location {
    /// A root with its explicit options (already resolved); the environment fills in the rest
    /// where the object store reads it. `env` is how the environment is read (for tests). The
    /// [`RequestPolicy`] settings among the options are taken out and checked; on S3 the whole
    /// policy goes back in, so that the options alone (handed through delta-rs) make the same store.
    pub fn new(url: Url, mut options: HashMap<String, String>, env: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let policy = RequestPolicy::take_from(&mut options)?;
        match url.scheme() {
            "file" => {}
            "s3" | "s3a" => {
                let is_conditional_put = |key: &String| {
                    key.to_ascii_lowercase()
                        .parse::<AmazonS3ConfigKey>()
                        .is_ok_and(|k| k == AmazonS3ConfigKey::ConditionalPut)
                };
                let setting = (options.iter().find(|(key, _)| is_conditional_put(key)))
                    .map(|(key, mode)| (key.clone(), mode.clone()))
                    .or_else(|| env("AWS_CONDITIONAL_PUT").map(|mode| ("AWS_CONDITIONAL_PUT".to_owned(), mode)));
                if let Some((key, mode)) = setting.filter(|(_, mode)| mode.trim().eq_ignore_ascii_case("disabled")) {
                    return Err(Error::Unsafe { what: format!("{key} = {mode}") });
                }
            }
            _ => return Err(Error::Scheme { url: url.to_string() }),
        }
        if url.scheme() != "file" {
            options.extend(policy.options());
        }
        Ok(Self { url, options, policy })
    }

    /// How requests to this root's store are retried and timed out (on S3).
    #[must_use]
    pub fn policy(&self) -> &RequestPolicy {
        &self.policy
    }

    #[must_use]
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The options to hand to delta-rs: with them, delta-rs builds this root's store through
    /// lakewriter-delta's S3 factory (which calls [`Location::object_store`]).
    #[must_use]
    pub fn options(&self) -> &HashMap<String, String> {
        &self.options
    }

    #[must_use]
    pub fn is_local(&self) -> bool {
        self.url.scheme() == "file"
    }

    /// The location of `relative` (a folder, with a trailing slash) below this root.
    pub fn join(&self, relative: &str) -> Result<Self> {
        let url = self.url.join(relative).map_err(|_| Error::Scheme { url: format!("{}{relative}", self.url) })?;
        Ok(Self { url, options: self.options.clone(), policy: self.policy })
    }

    /// The URL an object store is registered under: `s3://bucket` or `file:///`.
    #[must_use]
    pub fn store_url(&self) -> Url {
        let mut url = self.url.clone();
        url.set_path("/");
        url.set_query(None);
        url
    }

    /// An object store for the whole bucket (or the local filesystem): paths are from its root.
    pub fn object_store(&self) -> Result<Arc<dyn ObjectStore>> {
        if self.is_local() {
            return Ok(Arc::new(LocalFileSystem::new()));
        }
        // The options carry the policy's timeouts (object_store's client settings) too.
        let mut builder =
            AmazonS3Builder::from_env().with_url(self.store_url().as_str()).with_retry(self.policy.retry_config());
        for (key, value) in &self.options {
            if let Ok(key) = key.to_ascii_lowercase().parse() {
                builder = builder.with_config(key, value.clone());
            }
        }
        let store =
            builder.build().map_err(|source| Error::Store { url: self.store_url(), source: Box::new(source) })?;
        Ok(Arc::new(listing::RetriedLists { inner: Arc::new(store), policy: self.policy }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn options_expand_env_references_and_refuse_literal_secrets() {
        let table = BTreeMap::from([
            ("aws_region".to_owned(), "eu-west-1".to_owned()),
            ("AWS_SECRET_ACCESS_KEY".to_owned(), "${MY_SECRET}".to_owned()),
        ]);
        let env = |k: &str| (k == "MY_SECRET").then(|| "s3cr3t".to_owned());
        let options = resolve_options(&table, env).unwrap();
        assert_eq!(options["AWS_REGION"], "eu-west-1");
        assert_eq!(options["AWS_SECRET_ACCESS_KEY"], "s3cr3t");

        let err = resolve_options(&table, no_env).unwrap_err().to_string();
        assert_eq!(
            err,
            "storage option `AWS_SECRET_ACCESS_KEY` refers to ${MY_SECRET}, which is not set in the environment"
        );
        let unknown = BTreeMap::from([("colour".to_owned(), "red".to_owned())]);
        let err = resolve_options(&unknown, no_env).unwrap_err().to_string();
        assert!(err.starts_with("unknown storage option `colour`"), "{err}");
        let known =
            ["AWS_ENDPOINT_URL", "allow_http", "AWS_ALLOW_HTTP", "aws_conditional_put", "max_retries", "Timeout"];
        for key in
            known.into_iter().chain(["AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "virtual_hosted_style_request"])
        {
            assert!(is_known_option(key), "{key}");
        }
        // The AWS SDK's own settings have no effect on object_store: refused, not ignored.
        for unknown in
            ["AWS_PROFILE", "AWS_S3_ALLOW_UNSAFE_RENAME", "AWS_S3_LOCKING_PROVIDER", "AWS_EC2_METADATA_DISABLED"]
        {
            assert!(!is_known_option(unknown), "{unknown}");
        }
        let literal = BTreeMap::from([("aws_secret_access_key".to_owned(), "s3cr3t".to_owned())]);
        let err = resolve_options(&literal, no_env).unwrap_err().to_string();
        assert!(err.contains("holds a secret in the project file") && !err.contains("s3cr3t"), "{err}");
    }

    #[test]
    fn unsafe_commit_configurations_are_refused() {
        let url = Url::parse("s3://bucket/lake/").unwrap();
        assert!(Location::new(url.clone(), HashMap::new(), no_env).is_ok());
        let disabled = HashMap::from([("CONDITIONAL_PUT".to_owned(), " Disabled".to_owned())]);
        let err = Location::new(url.clone(), disabled, no_env).unwrap_err().to_string();
        assert!(err.starts_with("unsafe commit configuration: CONDITIONAL_PUT =  Disabled."), "{err}");
        let etag = HashMap::from([("AWS_CONDITIONAL_PUT".to_owned(), "etag".to_owned())]);
        assert!(Location::new(url.clone(), etag, no_env).is_ok());
        let env = |k: &str| (k == "AWS_CONDITIONAL_PUT").then(|| "disabled".to_owned());
        assert!(
            Location::new(url.clone(), HashMap::new(), env)
                .unwrap_err()
                .to_string()
                .contains("AWS_CONDITIONAL_PUT = disabled")
        );
        let err = Location::new(Url::parse("gs://b/x/").unwrap(), HashMap::new(), no_env).unwrap_err().to_string();
        assert!(err.starts_with("unsupported lakehouse root `gs://b/x/`"), "{err}");
        // Local roots need no options.
        assert!(Location::new(Url::parse("file:///tmp/lake/").unwrap(), HashMap::new(), env).is_ok());
    }

    #[test]
    fn an_s3_root_carries_its_request_policy_in_its_options() {
        let options = HashMap::from([("RETRY_TIMEOUT".to_owned(), "2s".to_owned())]);
        let s3 = Location::new(Url::parse("s3://bucket/lake/").unwrap(), options.clone(), no_env).unwrap();
        assert_eq!(s3.policy().retry_timeout, std::time::Duration::from_secs(2));
        let given: BTreeMap<&str, &str> = s3.options().iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let expected = [
            ("connect_timeout", "5000ms"),
            ("init_backoff", "250ms"),
            ("max_backoff", "4000ms"),
            ("max_retries", "4"),
            ("retry_timeout", "2000ms"),
            ("timeout", "30000ms"),
        ];
        assert_eq!(given, BTreeMap::from(expected));
        let local = Location::new(Url::parse("file:///tmp/lake/").unwrap(), options, no_env).unwrap();
        assert!(local.options().is_empty(), "a local root needs no request policy");
        let bad = HashMap::from([("max_retries".to_owned(), "many".to_owned())]);
        let err = Location::new(Url::parse("s3://bucket/lake/").unwrap(), bad, no_env).unwrap_err();
        assert!(err.is_config());
        assert_eq!(err.to_string(), "storage option `max_retries` must be a whole number of retries such as `4`");
    }

    #[test]
    fn debug_output_shows_no_option_values() {
        let options = HashMap::from([("AWS_SECRET_ACCESS_KEY".to_owned(), "s3cr3t".to_owned())]);
        let location = Location::new(Url::parse("s3://bucket/lake/").unwrap(), options, no_env).unwrap();
        let debug = format!("{location:?}");
        assert!(debug.contains("AWS_SECRET_ACCESS_KEY") && !debug.contains("s3cr3t"), "{debug}");
        assert_eq!(location.store_url().as_str(), "s3://bucket/");
        assert_eq!(location.join("raw/orders/").unwrap().url().as_str(), "s3://bucket/lake/raw/orders/");
    }
}
