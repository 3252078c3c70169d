//! The independent reader: delta-rs Python (`deltalake` with pyarrow, installed by `scripts/test`
//! into its venv) opening lakewriter's tables through `scripts/delta-reader.py`. It shares no
//! code with lakewriter: where both agree on a table's version and content, the table is a
//! Delta table, not just a lakewriter one.

use std::path::PathBuf;
use std::process::Command;

use serde::Deserialize;

use crate::support::Lake;

/// A table as the independent reader sees it.
#[derive(Debug, Deserialize)]
pub struct Read {
    pub version: u64,
    pub rows: u64,
    /// Rows that differ from every other row: fewer than `rows` where a row is duplicated.
    pub distinct_rows: u64,
    /// A SHA-256 of the table's rows, sorted (as JSON): the reader's own digest.
    pub digest: String,
    /// The data files of the version read.
    pub files: u64,
}

/// The reader, run with `lake`'s environment (its S3 settings, where it has them).
pub struct Reader<'a> {
    lake: &'a Lake,
}

impl<'a> Reader<'a> {
    pub fn new(lake: &'a Lake) -> Self {
        Self { lake }
    }

    fn run(&self, args: &[&str]) -> String {
        self.run_with_input(args, "")
    }

    /// Runs the reader with `input` on its stdin.
    fn run_with_input(&self, args: &[&str], input: &str) -> String {
        use std::io::Write as _;
        let python = std::env::var("LAKEWRITER_TEST_PYTHON").unwrap_or_else(|_| {
            panic!("the independent reader needs delta-rs Python: run the tests with `scripts/test`, which installs it and sets LAKEWRITER_TEST_PYTHON")
        });
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/delta-reader.py");
        let mut child = Command::new(python)
            .arg(script)
            .args(args)
            .envs(self.lake.env())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run the independent reader");
        child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write the reader's input");
        let output = child.wait_with_output().expect("run the independent reader");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "the independent reader failed on {args:?}:\n{stdout}{stderr}");
        stdout
    }

    /// The table at `uri`, at its latest version.
    pub fn read(&self, uri: &str) -> Read {
        let out = self.run(&["read", uri]);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("the reader's JSON: {out}: {e}"))
    }

    /// The files below the table at `uri` that its latest version does not reference.
    pub fn unreferenced(&self, uri: &str) -> Vec<String> {
        let out = self.run(&["unreferenced", uri]);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("the reader's JSON: {out}: {e}"))
    }

    /// Removes every file the table's latest version does not reference (a full vacuum with no
    /// retention, which only a test that runs nothing else on the table may do).
    pub fn vacuum(&self, uri: &str) {
        self.run(&["vacuum", uri]);
    }

    /// Sets the table's `delta.checkpointInterval` (a metadata commit by another writer).
    pub fn checkpoint_every(&self, commits: u32, uri: &str) {
        self.run(&["checkpoint-every", &commits.to_string(), uri]);
    }

    /// Sets the table property `key` to `value` (a metadata commit by another writer).
    pub fn set_property(&self, key: &str, value: &str, uri: &str) {
        self.run(&["set-property", key, value, uri]);
    }

    /// Deletes the rows `predicate` (SQL) matches from the table at `uri`, as an edit by hand
    /// with another writer; returns how many it deleted.
    pub fn delete(&self, predicate: &str, uri: &str) -> u64 {
        let out = self.run(&["delete", predicate, uri]);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("the reader's JSON: {out}: {e}"))
    }

    /// The table at `uri` as delta-rs, polars and a pyarrow dataset read it, and `rows` (JSON
    /// Lines: the rows lakewriter read): `{reader: {"rows", "digest", "columns"?}}`, the digests of
    /// one canonical form of the rows.
    pub fn interop(&self, uri: &str, rows: &str) -> serde_json::Value {
        self.interop_by(uri, rows, &[])
    }

    /// [`Reader::interop`] by the readers named (`deltalake`, `polars`, `pyarrow_dataset`; none:
    /// all three).
    pub fn interop_by(&self, uri: &str, rows: &str, readers: &[&str]) -> serde_json::Value {
        let out = self.run_with_input(&[&["interop", uri][..], readers].concat(), rows);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("the reader's JSON: {out}: {e}"))
    }

    /// The table's protocol: `min_reader_version`, `min_writer_version`, `reader_features`,
    /// `writer_features`.
    pub fn protocol(&self, uri: &str) -> serde_json::Value {
        let out = self.run(&["protocol", uri]);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("the reader's JSON: {out}: {e}"))
    }

    /// Enables the table feature `name` (deltalake's `TableFeatures` name), as another engine would.
    pub fn add_feature(&self, name: &str, uri: &str) {
        self.run(&["add-feature", name, uri]);
    }

    /// The rows of the table at `uri`, each as a JSON object (dates, decimals and times as text).
    pub fn rows(&self, uri: &str) -> Vec<serde_json::Map<String, serde_json::Value>> {
        let out = self.run(&["rows", uri]);
        let rows: Vec<String> =
            serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("the reader's JSON: {out}: {e}"));
        rows.iter().map(|r| serde_json::from_str(r).expect("a row object")).collect()
    }

    /// The rows of each table of `uris` (dates, decimals and timestamps as text), read by one
    /// process: for each, in order, its rows or the reader's error.
    pub fn tables(&self, uris: &[String]) -> Vec<Result<Vec<serde_json::Value>, String>> {
        #[derive(Deserialize)]
        struct Table {
            rows: Option<Vec<serde_json::Value>>,
            error: Option<String>,
        }
        let args: Vec<&str> = std::iter::once("tables").chain(uris.iter().map(String::as_str)).collect();
        let out = self.run(&args);
        let read: Vec<Table> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("the reader's JSON: {l}: {e}")))
            .collect();
        assert_eq!(read.len(), uris.len(), "a line a table: {out}");
        read.into_iter().map(|t| t.rows.ok_or_else(|| t.error.unwrap_or_default())).collect()
    }

    /// The table's columns as its log holds them: `(name, Delta type, nullable)`; a nested type as
    /// its JSON.
    pub fn schema(&self, uri: &str) -> Vec<(String, String, bool)> {
        let out = self.run(&["schema", uri]);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("the reader's JSON: {out}: {e}"))
    }

    /// Appends `rows` (JSON Lines) to the table at `uri` with delta-rs's own write, partitioned by
    /// `column` (creating the table where there is none): a table delta-rs wrote.
    pub fn write(&self, uri: &str, column: &str, rows: &str) {
        self.run_with_input(&["write", uri, column], rows);
    }

    /// Every file below `uri` (a lakehouse root), Delta or not, with its size, modification time
    /// and SHA-256: equal before and after only where nothing was written, moved or touched.
    pub fn tree(&self, uri: &str) -> Vec<(String, u64, String, String)> {
        let out = self.run(&["tree", uri]);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("the reader's JSON: {out}: {e}"))
    }
}
