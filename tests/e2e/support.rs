//! A lakehouse in a temporary folder, and typed views of the binary's output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chrono::NaiveDate;
use lakewriter_core::{DateRange, parse_date};
use serde::Deserialize;

pub const DAILY_ORDERS_SQL: &str = "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt \
     FROM raw.orders WHERE dt = $dt GROUP BY customer_id";

pub fn day(s: &str) -> NaiveDate {
    parse_date(s).expect("test date")
}

/// A project folder with a `lake/` root holding raw orders for some days.
pub struct Lake {
    dir: tempfile::TempDir,
}

/// What a run of the binary returned.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(output: &Output) -> Self {
        Self {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// The JSON lines of stdout: partition reports, then the summary.
    pub fn json(&self) -> (Vec<Report>, Summary) {
        let mut reports = Vec::new();
        let mut summary = None;
        for line in self.stdout.lines() {
            let value: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
            if let Some(s) = value.get("summary") {
                summary = Some(serde_json::from_value(s.clone()).expect("summary shape"));
            } else {
                reports.push(serde_json::from_value(value).unwrap_or_else(|e| panic!("report shape: {line}: {e}")));
            }
        }
        (reports, summary.unwrap_or_else(|| panic!("no summary line in {}", self.stdout)))
    }

    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "exit code\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

#[derive(Debug, Deserialize)]
pub struct Report {
    pub job: String,
    pub partition: String,
    pub status: String,
    pub committed: bool,
    pub changes: Option<Changes>,
    pub note: Option<String>,
    pub rows_written: Option<u64>,
    pub table_version: Option<u64>,
    pub files_scanned: Option<usize>,
    pub error: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
pub struct Changes {
    pub inserted: u64,
    pub updated: u64,
    pub deleted: u64,
    pub unchanged: u64,
    pub duplicates_dropped: u64,
}

#[derive(Debug, Deserialize)]
pub struct Summary {
    pub partitions: usize,
    pub ok: usize,
    pub skipped: usize,
    pub failed: usize,
    pub rows_written: u64,
    pub table_version: Option<u64>,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
pub struct Digest {
    pub rows: u64,
    pub digest: String,
    pub version: u64,
}

impl Lake {
    /// Raw orders for `from..=to`, and a project with `daily_orders` as in the README.
    pub fn new(from: &str, to: &str) -> Self {
        let lake = Self { dir: tempfile::tempdir().expect("temp dir") };
        let days = DateRange::new(day(from), day(to)).expect("range");
        lakewriter_datagen::write_orders(&lake.root(), days).expect("raw data");
        lake.set_job("daily_orders", "analytics.daily_orders", DAILY_ORDERS_SQL);
        lake
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn root(&self) -> PathBuf {
        self.path().join("lake")
    }

    pub fn project_file(&self) -> PathBuf {
        self.path().join("lakewriter.toml")
    }

    /// Rewrites the project file with one overwrite_partition job.
    pub fn set_job(&self, name: &str, target: &str, sql: &str) {
        self.set_project(&format!(
            "root = \"lake\"\n\n[jobs.{name}]\ntarget = \"{target}\"\nwrite = \"overwrite_partition\"\npartition_by = \"dt\"\nsql = '''\n{sql}\n'''\n"
        ));
    }

    pub fn set_project(&self, toml: &str) {
        std::fs::write(self.project_file(), toml).expect("write project");
    }

    /// Runs `lakewriter --project <this> ARGS…`.
    pub fn cli(&self, args: &[&str]) -> Run {
        let project = self.project_file();
        let mut all = vec!["--project", project.to_str().expect("utf-8 path"), "--color", "never"];
        all.extend_from_slice(args);
        lakewriter(&all, self.path())
    }

    pub fn digest(&self, table: &str, partition: Option<&str>) -> Digest {
        let mut args = vec!["--json", "digest", table];
        if let Some(p) = partition {
            args.extend(["--partition", p]);
        }
        let run = self.cli(&args);
        run.assert_code(0);
        serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("digest JSON: {}: {e}", run.stdout))
    }

    /// The files of one partition folder of a table, sorted, with their sizes.
    pub fn partition_files(&self, table_dir: &str, partition: &str) -> Vec<(String, u64)> {
        let dir = self.root().join(table_dir).join(partition);
        let mut files: Vec<(String, u64)> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .map(|e| e.expect("dir entry"))
                    .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().expect("metadata").len()))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    /// The Delta log's commit files (`*.json`) of a table.
    pub fn commit_count(&self, table_dir: &str) -> usize {
        std::fs::read_dir(self.root().join(table_dir).join("_delta_log")).map_or(0, |entries| {
            entries.filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".json"))).count()
        })
    }

    /// The `commitInfo` of commit `version`.
    pub fn commit_info(&self, table_dir: &str, version: u64) -> serde_json::Value {
        let path = self.root().join(table_dir).join("_delta_log").join(format!("{version:020}.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("log line"))
            .find_map(|mut a| a.get_mut("commitInfo").map(serde_json::Value::take))
            .expect("commitInfo in commit")
    }
}

/// One raw customer change: (customer_id, email, tier, updated_at as seconds, op).
pub type Change<'a> = (Option<i64>, &'a str, &'a str, Option<i64>, &'a str);

impl Lake {
    /// Writes `rows` as the raw file `raw/customers_batch/dt=<day>/<file>`.
    pub fn write_changes(&self, day: &str, file: &str, rows: &[Change<'_>]) {
        use arrow::array::{Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
        use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
        use std::sync::Arc;
        let schema = Arc::new(Schema::new(vec![
            Field::new("customer_id", DataType::Int64, true),
            Field::new("email", DataType::Utf8, false),
            Field::new("tier", DataType::Utf8, false),
            Field::new("updated_at", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), true),
            Field::new("op", DataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(rows.iter().map(|r| r.0).collect::<Int64Array>()),
                Arc::new(rows.iter().map(|r| Some(r.1)).collect::<StringArray>()),
                Arc::new(rows.iter().map(|r| Some(r.2)).collect::<StringArray>()),
                Arc::new(
                    rows.iter()
                        .map(|r| r.3.map(|s| s * 1_000_000))
                        .collect::<TimestampMicrosecondArray>()
                        .with_timezone("UTC"),
                ),
                Arc::new(rows.iter().map(|r| Some(r.4)).collect::<StringArray>()),
            ],
        )
        .expect("batch");
        let path = self.root().join("raw/customers_batch").join(format!("dt={day}")).join(file);
        lakewriter_datagen::write_parquet(&path, &batch).expect("write changes");
    }
}

/// The binary with `args` in `cwd`, with no log filter, project or root from the caller's
/// environment, and `env` added.
pub fn command(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lakewriter"));
    command
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_LOG")
        .env_remove("LAKEWRITER_PROJECT")
        .env_remove("LAKEWRITER_ROOT");
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

/// Runs the binary with `args` in `cwd` (see [`command`]).
pub fn lakewriter(args: &[&str], cwd: &Path) -> Run {
    lakewriter_with(args, cwd, &[])
}

/// Runs the binary with `args` in `cwd` and `env` added.
pub fn lakewriter_with(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Run {
    Run::from(&command(args, cwd, env).output().expect("run lakewriter"))
}

/// Waits for a spawned run.
pub fn finish(child: std::process::Child) -> Run {
    Run::from(&child.wait_with_output().expect("wait for lakewriter"))
}
