//! Every command's `--json` lines against `schema/events.schema.json`, checked by a validator that
//! shares no code with lakewriter (Python `jsonschema`, through `scripts/validate-events.py`):
//! each line of each command matches exactly one kind of line the schema describes, every closing
//! line carries `schema_version` 4, every command's last line is a closing line (`demo --no-run`,
//! `demo --late` and `init` too), and every kind the schema describes is printed here.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::{Lake, edited, parse_lines};

/// The kinds of line that the demo and the commands that read a lakehouse print.
const READING: [&str; 18] = [
    "demo_rerun",
    "digest",
    "graph_job",
    "graph_summary",
    "lint_summary",
    "partition_report",
    "pipeline_summary",
    "plan_partition",
    "plan_summary",
    "report_written",
    "run_summary",
    "status_job",
    "status_overview",
    "status_partition",
    "status_summary",
    "test_result",
    "test_summary",
    "verify_report",
];

/// The kinds of line that backfills, reproductions, audits, maintenance and statements print.
const WRITING: [&str; 13] = [
    "audit_partition",
    "audit_summary",
    "maintain_step",
    "maintain_summary",
    "partition_report",
    "pipeline_summary",
    "run_summary",
    "sql_row",
    "sql_statement",
    "sql_statement_failed",
    "sql_summary",
    "status_partition",
    "status_summary",
];

/// The kinds of line that late data and failures print.
const FAILING: [&str; 14] = [
    "job_failed",
    "lint_finding",
    "lint_summary",
    "not_run",
    "partition_report",
    "pipeline_summary",
    "plan_partition",
    "plan_summary",
    "run_summary",
    "status_partition",
    "status_summary",
    "test_result",
    "test_summary",
    "verify_report",
];

/// The kinds of line that a backfill dropping a column prints.
const DROPPING: [&str; 4] = ["columns_dropped", "partition_report", "pipeline_summary", "run_summary"];

/// The kinds of line that laying out a project, late data and an overview of the jobs print.
const SETTING_UP: [&str; 5] = ["demo_laid", "init_written", "late_delivered", "status_job", "status_overview"];

/// The closing lines whose `schema_version` is a field of their one tagged object.
const TAGGED_CLOSING: [&str; 7] = ["summary", "plan", "pipeline", "overview", "demo", "late", "init"];

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

fn schema() -> Value {
    let path = repo_file("schema/events.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `scripts/validate-events.py` on `lines` (with `--kinds`: the kind of each valid line too):
/// its exit code and its output.
fn validate(lines: &str, kinds: bool) -> (i32, String) {
    let python = std::env::var("LAKEWRITER_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("the events validator needs Python jsonschema: run the tests with `scripts/test`, which installs it and sets LAKEWRITER_TEST_PYTHON")
    });
    let mut child = Command::new(python)
        .arg(repo_file("scripts/validate-events.py"))
        .arg(repo_file("schema/events.schema.json"))
        .args(kinds.then_some("--kinds"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the events validator");
    child.stdin.take().expect("stdin").write_all(lines.as_bytes()).expect("write the lines");
    let output = child.wait_with_output().expect("wait for the events validator");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

/// `text`'s lines, numbered from 1 as the validator numbers them.
fn numbered(text: &str) -> String {
    text.lines().enumerate().fold(String::new(), |mut out, (i, line)| {
        let _ = writeln!(out, "{:>4}  {line}", i + 1);
        out
    })
}

/// A lakehouse whose commands' lines are validated, and the kinds of line seen.
struct Checked<'a> {
    lake: &'a Lake,
    kinds: BTreeSet<String>,
}

impl<'a> Checked<'a> {
    fn new(lake: &'a Lake) -> Self {
        Self { lake, kinds: BTreeSet::new() }
    }

    /// Runs `lakewriter --json ARGS…`, which must exit `code` and print `closing` closing lines;
    /// validates every line it prints and returns them.
    fn json(&mut self, args: &[&str], code: i32, closing: usize) -> Vec<Value> {
        let run = self.lake.cli(&[&["--json"][..], args].concat());
        run.assert_code(code);
        self.lines(&format!("lakewriter --json {}", args.join(" ")), &run.stdout, closing)
    }

    /// Validates the JSON Lines `stdout` of `what`, which must hold `closing` closing lines, each
    /// with `schema_version` 4, and end with one; records the kinds of its lines.
    fn lines(&mut self, what: &str, stdout: &str, closing: usize) -> Vec<Value> {
        assert!(!stdout.is_empty(), "{what}: nothing on stdout");
        let (code, out) = validate(stdout, true);
        assert_eq!(code, 0, "{what}: lines the schema does not describe:\n{out}\nstdout:\n{}", numbered(stdout));
        let kinds: Vec<&str> = out.lines().map(|l| l.split_once(' ').expect("`LINE KIND`").1).collect();
        assert_eq!(kinds.len(), stdout.lines().count(), "{what}: a kind for each line:\n{out}");
        let values: Vec<Value> = parse_lines(stdout);
        let mut closings = 0;
        let mut last_closes = false;
        for (kind, value) in kinds.iter().zip(&values) {
            let tagged = TAGGED_CLOSING.iter().find_map(|tag| value.get(tag));
            let version = match *kind {
                "verify_report" | "digest" | "report_written" => Some(&value["schema_version"]),
                _ => tagged.map(|object| &object["schema_version"]),
            };
            last_closes = version.is_some();
            if let Some(version) = version {
                assert_eq!(*version, Value::from(4), "{what}: the schema_version of a closing line: {value}");
                closings += 1;
            }
        }
        assert_eq!(closings, closing, "{what}: closing lines in:\n{}", numbered(stdout));
        assert!(last_closes, "{what}: the last line is not a closing line:\n{}", numbered(stdout));
        self.kinds.extend(kinds.iter().map(|&k| k.to_owned()));
        values
    }

    /// Asserts that the kinds of line seen are `expected`.
    #[track_caller]
    fn assert_kinds(&self, expected: &[&str]) {
        let expected: BTreeSet<String> = expected.iter().map(|&k| k.to_owned()).collect();
        assert_eq!(self.kinds, expected, "the kinds of line printed");
    }
}

#[test]
fn the_demo_and_the_commands_that_read_print_lines_of_the_schema() {
    let lake = Lake::empty(&[]);
    let demo = lake.run_demo(&["--json"]);
    demo.assert_code(0);
    let mut checked = Checked::new(&lake);
    let lines = checked.lines("lakewriter --json demo", &demo.stdout, 4);
    let reruns: Vec<&Value> = lines.iter().filter(|l| l["rerun"].is_string()).map(|l| &l["job"]).collect();
    assert_eq!(reruns, ["daily_orders", "customers", "weekly_revenue"], "a rerun line for each job");

    checked.json(&["run", "daily_orders", "--dt", "2026-09-30"], 0, 1);
    let dry = checked.json(&["run", "customers", "--dt", "2026-09-30", "--dry-run", "--show", "2"], 0, 1);
    assert!(dry[0]["dry_run"].is_object(), "a dry run's report: {}", dry[0]);
    assert_eq!(dry[1]["summary"]["would_change"], 0);
    let status = checked.json(&["status", "daily_orders", "--from", "2026-09-29", "--to", "2026-10-01"], 0, 1);
    let overview = checked.json(&["status"], 0, 1);
    let totals = &overview.last().expect("the closing line")["overview"];
    let partitions: u64 = ["fresh", "stale", "missing"].iter().filter_map(|s| totals[s].as_u64()).sum();
    assert_eq!((&totals["jobs"], partitions), (&3.into(), 90), "{totals}");
    // The demo's raw layer ends on the 30th: the 1st has no input.
    assert_eq!(
        (&status[2]["state"], &status[2]["no_input"]),
        (&Value::from("no_input"), &serde_json::json!(["raw.orders"]))
    );
    let maintenance = checked.json(&["status", "customers", "--maintenance"], 0, 1);
    assert!(maintenance.last().expect("a summary")["summary"]["maintenance"].is_object());
    checked.json(&["plan", "daily_orders", "--from", "2026-09-29", "--to", "2026-10-01"], 0, 1);
    let verify = checked.json(&["verify", "customers", "--dt", "2026-09-30"], 0, 1);
    assert_eq!(verify[0]["pass"], true);
    checked.json(&["lint"], 0, 1);
    let whole = checked.json(&["digest", "core.customers"], 0, 1);
    assert_eq!(whole[0]["partition"], Value::Null);
    let day = checked.json(&["digest", "analytics.daily_orders", "--partition", "2026-09-15"], 0, 1);
    assert_eq!(day[0]["partition"], "dt=2026-09-15");
    checked.json(&["graph"], 0, 1);
    let report = checked.json(&["report", "--out", "report.html"], 0, 1);
    let partitions: u64 = ["fresh", "stale", "missing"].iter().filter_map(|s| report[0][s].as_u64()).sum();
    assert_eq!((&report[0]["jobs"], partitions), (&3.into(), 90), "{}", report[0]);
    // The demo's tests pass.
    let tests = checked.json(&["test"], 0, 1);
    assert_eq!(tests.last().expect("a summary")["summary"]["passed"], 3, "{tests:?}");
    checked.assert_kinds(&READING);
}

#[test]
fn backfills_audits_maintenance_and_statements_print_lines_of_the_schema() {
    let lake = Lake::demo();
    let mut checked = Checked::new(&lake);
    let range = ["--from", "2026-09-01", "--to", "2026-09-03"];
    checked.json(&[&["backfill", "daily_orders"][..], &range].concat(), 0, 2);
    checked.json(&[&["backfill", "--all"][..], &range].concat(), 0, 4);
    let reproduced = lake.path().join("reproduced");
    let reproduced = reproduced.to_str().expect("utf-8 path");
    checked.json(&["reproduce", "--all", "--into", reproduced], 0, 4);

    // A second copy of one day's rows, appended by a statement: the audit finds the partition
    // differs from its reproduction, and the partition holds two small files to compact.
    let append = "INSERT INTO analytics.daily_orders SELECT * FROM analytics.daily_orders WHERE dt = DATE '2026-09-02'";
    checked.json(&["sql", "-e", append], 0, 1);
    let audit = checked.json(&["audit", "daily_orders", "--against", reproduced], 1, 1);
    assert_eq!(audit[1]["verdict"], "differs", "{}", audit[1]);
    let status = checked.json(&["status", "daily_orders", "--maintenance"], 0, 1);
    let maintenance = &status.last().expect("a summary")["summary"]["maintenance"];
    assert_eq!(maintenance["to_compact"][0]["partition"], "dt=2026-09-02", "{maintenance}");
    let dry = checked.json(&["maintain", "daily_orders", "--dry-run"], 0, 1);
    assert_eq!(dry[0]["status"], "dry_run", "{}", dry[0]);
    let maintained = checked.json(&["maintain", "daily_orders"], 0, 1);
    assert_eq!((&maintained[0]["step"], &maintained[0]["committed"]), (&"compact".into(), &true.into()));

    // A query's rows are marked with their statement; the summary closes a failed run too.
    let statements = "SELECT COUNT(*) AS n FROM core.customers; DELETE FROM core.customers WHERE customer_id = -1; \
                      UPDATE core.customers SET no_such_column = 1; SELECT 1";
    let lines = checked.json(&["sql", "-e", statements], 2, 1);
    assert_eq!(lines[0]["statement"], 1, "{}", lines[0]);
    assert!(lines[0]["row"]["n"].is_u64(), "the query's row: {}", lines[0]);
    assert_eq!((&lines[1]["status"], &lines[2]["status"]), (&"ok".into(), &"failed".into()));
    let summary = serde_json::json!({"statements": 4, "ok": 2, "failed": 1, "not_run": 1, "schema_version": 4});
    assert_eq!(lines[3]["summary"], summary);
    checked.assert_kinds(&WRITING);
}

#[test]
fn late_data_and_failures_print_lines_of_the_schema() {
    let lake = Lake::demo();
    let mut checked = Checked::new(&lake);
    let range = ["--from", "2026-09-01", "--to", "2026-09-03"];
    checked.json(&[&["backfill", "--all"][..], &range].concat(), 0, 4);
    lake.run_demo(&["--late", "2026-09-03"]).assert_code(0);
    let status = checked.json(&[&["status", "daily_orders"][..], &range].concat(), 0, 1);
    assert_eq!(status[2]["reasons"], serde_json::json!(["inputs_changed"]));
    let dry = checked.json(&["run", "daily_orders", "--dt", "2026-09-03", "--dry-run", "--show", "2"], 0, 1);
    assert_eq!(dry[0]["dry_run"]["added_examples"].as_array().map(Vec::len), Some(2), "{}", dry[0]);
    let plan = checked.json(&[&["plan", "daily_orders", "--only", "stale"][..], &range].concat(), 0, 1);
    assert_eq!((&plan[0]["action"], &plan[2]["action"]), (&"skip".into(), &"run".into()));
    checked.json(&[&["backfill", "--all", "--only", "stale"][..], &range].concat(), 0, 4);
    failures(&mut checked);
    checked.assert_kinds(&FAILING);
}

/// With the demo's revenue made negative, a blocking check fails: failed reports with their
/// checks and errors, a failed verify, a job not run; then lint findings.
fn failures(checked: &mut Checked<'_>) {
    let lake = checked.lake;
    let project = std::fs::read_to_string(lake.project_file()).expect("the demo's project");
    let negative = edited(&project, "SUM(amount)", "-SUM(amount)");
    lake.set_project_text(&negative);
    let failed = checked.json(&["run", "daily_orders", "--dt", "2026-09-03"], 1, 1);
    assert_eq!(failed[0]["status"], "failed", "{}", failed[0]);
    assert!(failed[0]["error"].is_string() && failed[0]["checks"].as_array().is_some_and(|c| !c.is_empty()));
    let verify = checked.json(&["verify", "daily_orders", "--dt", "2026-09-03"], 1, 1);
    assert_eq!(verify[0]["second"], Value::Null, "{}", verify[0]);
    let tests = checked.json(&["test", "daily_orders_counts"], 1, 1);
    assert_eq!(tests[0]["status"], "failed", "{}", tests[0]);
    assert!(tests[0]["checks"][0]["detail"].as_str().is_some_and(|d| d.contains("revenue >= 0")), "{}", tests[0]);
    let pipeline = checked.json(&["backfill", "--all", "--from", "2026-09-01", "--to", "2026-09-01"], 1, 3);
    assert!(pipeline.iter().any(|l| l["not_run"]["job"] == "weekly_revenue"), "{pipeline:?}");
    let counts = &pipeline.last().expect("the closing line")["pipeline"];
    assert_eq!((&counts["jobs"], &counts["failed"], &counts["not_run"]), (&3.into(), &1.into(), &1.into()), "{counts}");

    // A job whose state cannot be read (its log a symlink to itself) cannot select its stale
    // days: it fails to start.
    let log = lake.root().join("analytics/weekly_revenue/_delta_log");
    std::fs::rename(&log, log.with_file_name("_delta_log.kept")).expect("move the log away");
    std::os::unix::fs::symlink("_delta_log", &log).expect("a symlink loop");
    let range = ["--from", "2026-09-01", "--to", "2026-09-03"];
    let failed = checked.json(&[&["backfill", "weekly_revenue", "--only", "stale"][..], &range].concat(), 1, 1);
    assert_eq!(failed[0]["job_failed"]["job"], "weekly_revenue", "{failed:?}");

    let unbounded = edited(&negative, "FROM raw.orders\nWHERE dt = $dt", "FROM raw.orders\nWHERE amount >= 0");
    // DataFusion's `random()`, which its dialect plans (and lint then finds nondeterministic).
    let random = edited(&unbounded, "-SUM(amount)", "-SUM(amount) * random()");
    lake.set_project_text(&format!("dialect = \"datafusion\"\n{random}"));
    let lint = checked.json(&["lint"], 1, 1);
    let severities: BTreeSet<&str> = lint.iter().filter_map(|l| l["severity"].as_str()).collect();
    assert_eq!(severities, BTreeSet::from(["error", "warn"]), "{lint:?}");
}

#[test]
fn laying_out_a_project_and_the_overview_of_its_jobs_print_lines_of_the_schema() {
    let lake = Lake::empty(&[]);
    let mut checked = Checked::new(&lake);
    let laid = lake.run_demo(&["--json", "--no-run"]);
    laid.assert_code(0);
    let laid = checked.lines("lakewriter --json demo --no-run", &laid.stdout, 1);
    assert_eq!((&laid[0]["demo"]["days"], &laid[0]["demo"]["project_written"]), (&30.into(), &true.into()));
    let delivered = lake.run_demo(&["--json", "--late", "2026-09-03"]);
    delivered.assert_code(0);
    let delivered = checked.lines("lakewriter --json demo --late", &delivered.stdout, 1);
    assert_eq!(delivered[0]["late"]["delivered"], true, "{}", delivered[0]);
    let init = checked.json(&["init", "fresh"], 0, 1);
    assert_eq!((&init[0]["init"]["from"], &init[0]["init"]["to"]), (&"2026-01-01".into(), &"2026-01-07".into()));

    // Nothing written yet: each job a line of its own, none written; then one job backfilled, and
    // one whose SQL names a table there is not.
    let overview = checked.json(&["status"], 0, 1);
    assert_eq!(overview.last().expect("the closing line")["overview"]["not_written"], 3, "{overview:?}");
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]).assert_code(0);
    let project = std::fs::read_to_string(lake.project_file()).expect("the demo's project");
    lake.set_project_text(&edited(&project, "FROM raw.orders\nWHERE dt = $dt", "FROM raw.order\nWHERE dt = $dt"));
    let overview = checked.json(&["status"], 1, 1);
    let broken = overview.iter().find(|l| l["job"] == "daily_orders").expect("daily_orders' line");
    assert_eq!((&broken["failed"], &broken["written"]), (&2.into(), &true.into()), "{broken}");
    checked.assert_kinds(&SETTING_UP);
}

#[test]
fn a_backfill_that_drops_a_column_prints_lines_of_the_schema() {
    use crate::support::modes::{FAILING, GOOD, WRITTEN, project};
    let mode = crate::support::WriteMode::OverwritePartition;
    let lake = crate::support::modes::written(&[mode]);
    let without = project(&[mode], GOOD)
        .edited_sql(mode.as_str(), "customer_id AS customer_id, ", "")
        .with_schema_change(mode.as_str(), "sync_all_columns");
    lake.set_project(&without);
    let mut checked = Checked::new(&lake);
    let args = ["backfill", mode.as_str(), "--from", WRITTEN, "--to", FAILING, "--replace-schema"];
    let lines = checked.json(&args, 0, 2);
    let dropped = lines.iter().find_map(|l| l.get("columns_dropped")).expect("a columns_dropped line");
    assert_eq!(dropped["table"], "failures.overwrite_partition", "{dropped}");
    checked.assert_kinds(&DROPPING);
}

#[test]
fn the_validator_refuses_lines_the_schema_does_not_describe() {
    let broken = [
        // A summary without its schema_version, and one of another version.
        r#"{"summary":{"job":"j","partitions":1,"ok":1,"skipped":0,"failed":0,"rows_written":4,"table_version":0,"duration_ms":9,"would_change":null}}"#,
        r#"{"plan":{"job":"j","only":"all","run":1,"skip":0,"schema_version":1}}"#,
        // A field the schema does not know.
        r#"{"summary":{"jobs":1,"edges":0,"schema_version":4,"cycles":0}}"#,
        // A failed step without its error, and a status the schema does not know.
        r#"{"table":"a.b","step":"vacuum","status":"failed","committed":false,"table_version":null,"partitions":null,"files_removed":null,"files_added":null,"target_file_size":null,"files_deleted":null,"log_files_removed":null,"retention":null,"retries":0,"duration_ms":1,"note":null,"error":null}"#,
        r#"{"table":"a.b","step":"vacuum","status":"done","committed":false,"table_version":null,"partitions":null,"files_removed":null,"files_added":null,"target_file_size":null,"files_deleted":null,"log_files_removed":null,"retention":null,"retries":0,"duration_ms":1,"note":null,"error":null}"#,
        // A step that leaves out a field that does not apply to it, rather than `null`.
        r#"{"table":"a.b","step":"vacuum","status":"ok","committed":false,"table_version":null,"partitions":null,"files_removed":null,"target_file_size":null,"files_deleted":0,"log_files_removed":null,"retention":"7d","retries":0,"duration_ms":1,"note":null,"error":null}"#,
        // A digest's partition as a bare date rather than a partition key.
        r#"{"table":"a.b","partition":"2026-09-01","rows":1,"digest":"00000000000000000000000000000000","version":0,"schema_version":4}"#,
        // A query's row, and a line that is not JSON.
        r#"{"n":42}"#,
        "summary: 1 partition",
    ];
    let (code, out) = validate(&(broken.join("\n") + "\n"), false);
    assert_eq!(code, 1, "{out}");
    for n in 1..=broken.len() {
        assert!(out.contains(&format!("line {n}: ")), "no message for line {n}:\n{out}");
    }
    assert!(out.contains("'schema_version' is a required property"), "{out}");
    assert!(out.contains("'cycles' was unexpected"), "{out}");

    let valid = r#"{"summary":{"jobs":1,"edges":0,"schema_version":4}}"#;
    assert_eq!(validate(&format!("{valid}\n"), false), (0, String::new()));
}

#[test]
fn every_kind_of_line_of_the_schema_is_printed_by_a_test_here() {
    let schema = schema();
    let kinds: BTreeSet<&str> = schema["oneOf"]
        .as_array()
        .expect("a oneOf of line kinds")
        .iter()
        .map(|kind| kind["$ref"].as_str().and_then(|r| r.strip_prefix("#/$defs/")).expect("a $ref to a $def"))
        .collect();
    let printed: BTreeSet<&str> =
        READING.into_iter().chain(WRITING).chain(FAILING).chain(DROPPING).chain(SETTING_UP).collect();
    assert_eq!(kinds, printed);
    assert_eq!(schema["version"], 4);
    assert_eq!(schema["$defs"]["schema_version"]["const"], schema["version"]);
}
