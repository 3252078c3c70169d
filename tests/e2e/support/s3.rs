//! A prefix of the S3 test bucket that `scripts/test` starts (moto, on 127.0.0.1), and a project
//! folder whose runs reach it. A test that needs it fails — never skips — when it is not there.

use std::process::Stdio;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{Digest, Lake, Run};

const SECRET: &str = "test-secret-3f9a1c-never-printed";

/// A fresh prefix in the test bucket, and a project folder whose runs reach it.
pub struct S3 {
    pub root: String,
    pub endpoint: String,
    /// The project folder; every run of the binary there has the environment of [`S3::env`].
    pub lake: Lake,
}

impl S3 {
    pub fn new(name: &str) -> Self {
        let endpoint = std::env::var("LAKEWRITER_TEST_S3_ENDPOINT").unwrap_or_else(|_| {
            panic!("the S3 tests need the S3 test server: run them with `scripts/test`, which starts it and sets LAKEWRITER_TEST_S3_ENDPOINT")
        });
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let root = format!("s3://lakewriter-test/{name}-{}-{nanos}/", std::process::id());
        let lake = Lake::empty(&Self::env_of(&endpoint, &root));
        Self { root, endpoint, lake }
    }

    /// The variables that reach the prefix `root` of the test bucket at `endpoint`.
    fn env_of<'a>(endpoint: &'a str, root: &'a str) -> Vec<(&'a str, &'a str)> {
        vec![
            ("AWS_ENDPOINT_URL", endpoint),
            ("AWS_ACCESS_KEY_ID", "lakewriter-test"),
            ("AWS_SECRET_ACCESS_KEY", SECRET),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ALLOW_HTTP", "true"),
            ("LAKEWRITER_ROOT", root),
        ]
    }

    /// The URL of `relative` below the prefix.
    pub fn url(&self, relative: &str) -> String {
        format!("{}{relative}", self.root)
    }

    pub fn env(&self) -> Vec<(&str, &str)> {
        Self::env_of(&self.endpoint, &self.root)
    }

    /// The variables that reach this prefix through another endpoint (a proxy in front of the
    /// server).
    pub fn env_via<'a>(&'a self, endpoint: &'a str) -> Vec<(&'a str, &'a str)> {
        Self::env_of(endpoint, &self.root)
    }

    /// The root, `s3://lakewriter-test/<prefix>/`.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// Puts `bytes` at `relative` below the root, as another tool would: `relative` is the
    /// object's key below the root, taken as it is.
    pub fn put(&self, relative: &str, bytes: Vec<u8>) {
        use object_store::ObjectStoreExt as _;
        let (bucket, prefix) = self.root.trim_start_matches("s3://").split_once('/').expect("s3://bucket/prefix/");
        let store = object_store::aws::AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_endpoint(&self.endpoint)
            .with_access_key_id("lakewriter-test")
            .with_secret_access_key(SECRET)
            .with_region("us-east-1")
            .with_allow_http(true)
            .build()
            .expect("S3 store");
        // The key as given (`Path::from` would encode a `%` in it again).
        let path = object_store::path::Path::parse(format!("{prefix}{relative}")).expect("an object key");
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        runtime.block_on(store.put(&path, bytes.into())).expect("put");
    }

    pub fn cli(&self, args: &[&str]) -> Run {
        self.lake.cli(args)
    }

    pub fn digest(&self, table: &str) -> Digest {
        self.lake.digest(table, None)
    }

    /// Starts `lakewriter --json ARGS…` without waiting for it.
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        let all = [&["--json"], args].concat();
        self.lake.command(&all).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn")
    }
}

pub fn assert_no_secret(run: &Run) {
    assert!(
        !run.stdout.contains(SECRET) && !run.stderr.contains(SECRET),
        "a secret leaked:\n{}\n{}",
        run.stdout,
        run.stderr
    );
}
