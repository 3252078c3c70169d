//! The second independent computation: DuckDB (Python package `duckdb`, installed by
//! `scripts/test` into its venv) computes what tables must hold from the raw Parquet files alone,
//! with SQL of its own per kind of write (`scripts/matrix-expect.py`). It shares no code with
//! lakewriter, nor with delta-rs.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The rows each table of `spec` must hold (each row an object), by the table's name in `spec`,
/// computed from the raw files below `raw` (hive folders `dt=…`). `spec` is what
/// `scripts/matrix-expect.py` reads: the days' order and each table's kind of write.
pub fn expected(raw: &Path, spec: &serde_json::Value) -> BTreeMap<String, Vec<serde_json::Value>> {
    let python = std::env::var("LAKEWRITER_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("the expected tables need DuckDB: run the tests with `scripts/test`, which installs it and sets LAKEWRITER_TEST_PYTHON")
    });
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/matrix-expect.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg(raw)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run DuckDB's computation");
    child.stdin.take().expect("stdin").write_all(spec.to_string().as_bytes()).expect("write the spec");
    let output = child.wait_with_output().expect("run DuckDB's computation");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "DuckDB's computation failed:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("DuckDB's JSON: {stdout}: {e}"))
}
