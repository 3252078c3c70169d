//! A project folder in a temporary directory, and runs of the binary in it.

use std::path::{Path, PathBuf};
use std::process::Command;

use lakewriter_core::DateRange;

use super::{DAILY_ORDERS_SQL, Digest, Project, Run, daily_orders, day, parse_lines};

/// A project folder: its `lakewriter.toml`, and a `lake/` root (or the root that `env` sets).
pub struct Lake {
    dir: tempfile::TempDir,
    /// Added to the environment of every run of the binary.
    env: Vec<(String, String)>,
}

impl Lake {
    /// Raw orders for `from..=to`, and the guide's project ([`daily_orders`]).
    pub fn new(from: &str, to: &str) -> Self {
        let lake = Self::empty(&[]);
        let days = DateRange::new(day(from), day(to)).expect("range");
        lakewriter_datagen::write_orders(&lake.root(), days).expect("raw data");
        lake.set_project(&daily_orders(DAILY_ORDERS_SQL));
        lake
    }

    /// An empty folder: no project file, no raw data. `env` is added to every run.
    pub fn empty(env: &[(&str, &str)]) -> Self {
        let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Self { dir: tempfile::tempdir().expect("temp dir"), env }
    }

    /// The sample project of `lakewriter demo` and its raw layer (orders and customer changes of
    /// September 2026), nothing run.
    pub fn demo() -> Self {
        let lake = Self::empty(&[]);
        lake.prepare_demo();
        lake
    }

    /// Lays out the sample project and raw layer here (`demo --no-run`).
    pub fn prepare_demo(&self) {
        self.run_demo(&["--no-run"]).assert_code(0);
    }

    /// Runs `lakewriter --color never demo <this folder> ARGS…`.
    pub fn run_demo(&self, args: &[&str]) -> Run {
        let dir = self.path().to_str().expect("utf-8 path");
        let all = [&["--color", "never", "demo", dir], args].concat();
        Run::from(&command(&all, self.path(), &self.env()).output().expect("run lakewriter"))
    }

    /// The variables added to every run.
    pub fn env(&self) -> Vec<(&str, &str)> {
        self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
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

    /// Writes `project` as the project file.
    pub fn set_project(&self, project: &Project) {
        self.set_project_text(&project.to_toml());
    }

    /// Writes `text` as the project file: for files a [`Project`] cannot express, such as
    /// invalid ones.
    pub fn set_project_text(&self, text: &str) {
        std::fs::write(self.project_file(), text).expect("write project");
    }

    /// The binary with `--project <this> --color never ARGS…`, not started.
    pub fn command(&self, args: &[&str]) -> Command {
        let project = self.project_file();
        let all = [&["--project", project.to_str().expect("utf-8 path"), "--color", "never"], args].concat();
        command(&all, self.path(), &self.env())
    }

    /// Runs `lakewriter --project <this> --color never ARGS…`.
    pub fn cli(&self, args: &[&str]) -> Run {
        Run::from(&self.command(args).output().expect("run lakewriter"))
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
        parse_lines::<serde_json::Value>(&text)
            .into_iter()
            .find_map(|mut a| a.get_mut("commitInfo").map(serde_json::Value::take))
            .expect("commitInfo in commit")
    }
}

/// The fields of the last schema the Delta log of the table in `dir` records (its JSON commits;
/// the tests' tables have no checkpoint that drops one).
pub fn logged_fields(dir: &Path) -> Vec<serde_json::Value> {
    let mut commits: Vec<_> = std::fs::read_dir(dir.join("_delta_log"))
        .expect("the log")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    commits.sort();
    let schema = commits
        .iter()
        .rev()
        .find_map(|commit| {
            std::fs::read_to_string(commit).expect("commit").lines().find_map(|line| {
                let action: serde_json::Value = serde_json::from_str(line).expect("action");
                action["metaData"]["schemaString"].as_str().map(str::to_owned)
            })
        })
        .expect("a schema in the log");
    let schema: serde_json::Value = serde_json::from_str(&schema).expect("schema JSON");
    schema["fields"].as_array().expect("fields").clone()
}

/// One raw customer change: (customer_id, email, tier, updated_at as seconds, op).
pub type Change<'a> = (Option<i64>, &'a str, &'a str, Option<i64>, &'a str);

impl Lake {
    /// Writes `rows` as the raw file `raw/customers_batch/dt=<day>/<file>`.
    pub fn write_changes(&self, day: &str, file: &str, rows: &[Change<'_>]) {
        let path = self.root().join("raw/customers_batch").join(format!("dt={day}")).join(file);
        lakewriter_datagen::write_parquet(&path, &changes(rows)).expect("write changes");
    }
}

/// `rows` as a batch of the raw dataset `customers_batch`.
pub fn changes(rows: &[Change<'_>]) -> arrow::array::RecordBatch {
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
    RecordBatch::try_new(
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
    .expect("batch")
}

/// The binary with `args` in `cwd`, with no log filter, backtrace setting (errors would carry
/// backtraces), project or root from the caller's environment, and `env` added.
pub fn command(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lakewriter"));
    command
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_LOG")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
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
