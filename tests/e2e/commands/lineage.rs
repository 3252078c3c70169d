//! OpenLineage events of `run` and `backfill` (`--openlineage-file`, `OPENLINEAGE_URL`): a START
//! and a COMPLETE or FAIL for each partition run, in that order, with the run's own id, the tables
//! it read and the version it committed; an endpoint that is down or never answers fails nothing.
//! `tests/python/lineage.py` checks the same events against the OpenLineage client's classes, over
//! HTTP.

use std::io::Read as _;
use std::net::TcpListener;
use std::path::Path;

use serde_json::Value;

use crate::support::modes::{self, Columns, FAILING, GOOD, project, written};
use crate::support::{Lake, Run, WRITE_MODES, WriteMode, json_lines, parse_lines};

/// The events of `file`, one JSON object a line.
fn events(file: &Path) -> Vec<Value> {
    parse_lines(&std::fs::read_to_string(file).unwrap_or_default())
}

/// `lakewriter --json run MODE [--dt DAY] ARGS…` with `env`.
fn run_mode(lake: &Lake, mode: WriteMode, day: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut all = vec!["--json", "run", mode.as_str()];
    if mode != WriteMode::Rebuild {
        all.extend(["--dt", day]);
    }
    all.extend(args);
    let mut command = lake.command(&all);
    command.envs(env.iter().copied());
    Run::from(&command.output().expect("run lakewriter"))
}

/// The events of run `run_id`, in the order they were written.
fn of_run<'a>(events: &'a [Value], run_id: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["run"]["runId"] == run_id).collect()
}

fn kinds(events: &[&Value]) -> Vec<String> {
    events.iter().map(|e| e["eventType"].as_str().unwrap_or_default().to_owned()).collect()
}

/// The dataset of `datasets` whose name ends with `/<relative>`.
fn dataset<'a>(datasets: &'a Value, relative: &str) -> &'a Value {
    let suffix = format!("/{relative}");
    datasets
        .as_array()
        .and_then(|all| all.iter().find(|d| d["name"].as_str().is_some_and(|n| n.ends_with(&suffix))))
        .unwrap_or_else(|| panic!("no dataset {relative} in {datasets}"))
}

#[test]
fn every_write_mode_emits_start_then_complete_with_its_run_its_inputs_and_the_version_it_committed() {
    let lake = written(&WRITE_MODES);
    let file = lake.path().join("lineage.jsonl");
    let file_arg = file.to_str().expect("utf-8 path");
    for mode in WRITE_MODES {
        let run = run_mode(&lake, mode, FAILING, &["--openlineage-file", file_arg], &[]);
        run.assert_code(0);
        let lines = json_lines(&run);
        let report = &lines[0];
        let run_id = report["run_id"].as_str().expect("run id");
        assert!(uuid_like(run_id), "{mode:?}: run id {run_id}");
        let all = events(&file);
        let ours = of_run(&all, run_id);
        assert_eq!(kinds(&ours), ["START", "COMPLETE"], "{mode:?}");
        let (start, complete) = (ours[0], ours[1]);
        for event in [start, complete] {
            assert_eq!((&event["job"]["namespace"], &event["job"]["name"]), (&"default".into(), &mode.as_str().into()));
            assert_eq!(event["schemaURL"], "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent");
            assert_eq!(dataset(&event["outputs"], &format!("failures/{}", mode.as_str()))["namespace"], "file");
            assert_eq!(dataset(&event["inputs"], "raw/orders")["namespace"], "file");
        }
        let nominal = &complete["run"]["facets"]["nominalTime"]["nominalStartTime"];
        match mode {
            WriteMode::Rebuild => assert!(nominal.is_null(), "a whole-table run has no nominal time"),
            _ => assert_eq!(nominal, &Value::from(format!("{FAILING}T00:00:00Z"))),
        }
        let output = dataset(&complete["outputs"], &format!("failures/{}", mode.as_str()));
        let version = report["table_version"].as_u64().expect("version").to_string();
        assert_eq!(output["facets"]["version"]["datasetVersion"], Value::from(version), "{mode:?}");
        let statistics = &output["outputFacets"]["outputStatistics"];
        assert_eq!(
            (&statistics["rowCount"], &statistics["fileCount"]),
            (&report["rows_written"], &report["files_added"])
        );
        let columns: Vec<&str> = output["facets"]["schema"]["fields"]
            .as_array()
            .expect("fields")
            .iter()
            .filter_map(|f| f["name"].as_str())
            .collect();
        assert!(columns.starts_with(&["order_id", "customer_id", "amount", "status", "created_at"]), "{columns:?}");
        let read = &dataset(&complete["inputs"], "raw/orders")["inputFacets"]["inputStatistics"]["fileCount"];
        assert_eq!(read, &report["files_scanned"], "{mode:?}");
        let own = &complete["run"]["facets"]["lakewriter"];
        assert_eq!(
            (&own["partition"], &own["write"], &own["committed"]),
            (&report["partition"], &report["write"], &report["committed"])
        );
    }
}

#[test]
fn a_failed_run_of_every_mode_emits_fail_with_its_error() {
    let lake = written(&WRITE_MODES);
    let failing = Columns { customer_id: "CAST(CASE WHEN customer_id >= 0 THEN 'x' ELSE '1' END AS BIGINT)", ..GOOD };
    lake.set_project(&project(&WRITE_MODES, failing));
    let file = lake.path().join("lineage.jsonl");
    for mode in WRITE_MODES {
        let before = lake.digest(&modes::table(mode), None);
        let run = run_mode(&lake, mode, FAILING, &["--openlineage-file", file.to_str().expect("utf-8")], &[]);
        run.assert_code(1);
        let report = json_lines(&run).remove(0);
        let all = events(&file);
        let ours = of_run(&all, report["run_id"].as_str().expect("run id"));
        assert_eq!(kinds(&ours), ["START", "FAIL"], "{mode:?}");
        let error = &ours[1]["run"]["facets"]["errorMessage"];
        assert_eq!((&error["message"], &error["programmingLanguage"]), (&report["error"], &"Rust".into()), "{mode:?}");
        assert!(ours[1]["outputs"][0]["facets"]["version"].is_null(), "{mode:?}: no version made");
        assert!(ours[1]["outputs"][0]["outputFacets"]["outputStatistics"].is_null(), "{mode:?}: nothing written");
        assert_eq!(lake.digest(&modes::table(mode), None), before, "{mode:?}: nothing committed");
    }
}

#[test]
fn a_backfill_emits_each_partitions_run_in_order_under_the_parent_run_and_namespace_given() {
    let lake = Lake::new("2026-09-01", "2026-09-04");
    let file = lake.path().join("lineage.jsonl");
    let parent = "airflow/orders_dag.load/01890f0b-5c1d-7cc6-b5a4-3f3c1c5b0e0a";
    let mut command = lake.command(&[
        "--json",
        "backfill",
        "daily_orders",
        "--from",
        "2026-09-01",
        "--to",
        "2026-09-04",
        "--parallel",
        "4",
        "--openlineage-file",
        file.to_str().expect("utf-8"),
    ]);
    command.env("OPENLINEAGE_PARENT_ID", parent).env("OPENLINEAGE_NAMESPACE", "lakehouse");
    let run = Run::from(&command.output().expect("run lakewriter"));
    run.assert_code(0);
    let (reports, _) = run.json();
    let all = events(&file);
    assert_eq!(all.len(), 8, "a START and a COMPLETE for each of 4 days");
    for report in &reports {
        let ours = of_run(&all, report.run_id.as_deref().expect("run id"));
        assert_eq!(kinds(&ours), ["START", "COMPLETE"], "{}", report.partition);
        for event in ours {
            assert_eq!(event["job"]["namespace"], "lakehouse");
            let facet = &event["run"]["facets"]["parent"];
            let named = (&facet["job"]["namespace"], &facet["job"]["name"], &facet["run"]["runId"]);
            assert_eq!(
                named,
                (&"airflow".into(), &"orders_dag.load".into(), &"01890f0b-5c1d-7cc6-b5a4-3f3c1c5b0e0a".into())
            );
            assert_eq!(facet["root"]["run"], facet["run"], "the parent is the root where no root is given");
        }
    }
}

#[test]
fn an_upstream_delta_table_is_an_input_with_the_version_read() {
    let lake = Lake::demo();
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-24", "--to", "2026-09-30"]).assert_code(0);
    let version = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-30"]);
    let (reports, _) = version.assert_code(0).json();
    let upstream = reports[0].table_version.expect("version").to_string();
    let file = lake.path().join("lineage.jsonl");
    let run = lake.cli(&[
        "--json",
        "run",
        "weekly_revenue",
        "--dt",
        "2026-09-30",
        "--openlineage-file",
        file.to_str().expect("utf-8"),
    ]);
    run.assert_code(0);
    let all = events(&file);
    let input = dataset(&all[1]["inputs"], "analytics/daily_orders");
    assert_eq!(input["facets"]["version"]["datasetVersion"], Value::from(upstream));
    assert!(input["inputFacets"]["inputStatistics"]["fileCount"].as_u64().is_some_and(|n| n >= 7), "{input}");
}

#[test]
fn a_lineage_endpoint_that_is_down_or_never_answers_fails_no_run() {
    let lake = written(&[WriteMode::OverwritePartition]);
    // Accepts connections and never answers: each request waits for its timeout.
    let silent = TcpListener::bind("127.0.0.1:0").expect("listener");
    let silent_url = format!("http://user:secret@{}/", silent.local_addr().expect("addr"));
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in silent.incoming().take(2).flatten() {
            let mut stream = stream;
            let mut buffer = [0; 1024];
            let _ = stream.read(&mut buffer);
            open.push(stream);
        }
        std::thread::sleep(std::time::Duration::from_secs(5));
    });
    // Nothing listens: each request is refused at once.
    let closed = TcpListener::bind("127.0.0.1:0").expect("listener");
    let closed_url = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    for url in [&silent_url, &closed_url] {
        let mut env = vec![("OPENLINEAGE_URL", url.as_str())];
        if url == &closed_url {
            env.push(("OPENLINEAGE_API_KEY", "key-that-stays-secret"));
        }
        let run = run_mode(&lake, WriteMode::OverwritePartition, FAILING, &["--openlineage-timeout", "1"], &env);
        run.assert_code(0);
        let (reports, _) = run.json();
        assert!(reports[0].committed, "{url}");
        assert!(run.stderr.contains("OpenLineage: "), "{url}: the undelivered events are logged:\n{}", run.stderr);
        for secret in ["secret", "user:"] {
            assert!(!run.stderr.contains(secret), "{url}: the log shows `{secret}`:\n{}", run.stderr);
        }
    }
    drop(held);
}

/// An endpoint on 127.0.0.1 that answers every request 200 and keeps each request's
/// `Authorization` headers, in the order the requests came.
struct Endpoint {
    url: String,
    seen: std::sync::mpsc::Receiver<Vec<String>>,
}

impl Endpoint {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
        let url = format!("127.0.0.1:{}", listener.local_addr().expect("addr").port());
        let (send, seen) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let Some(headers) = read_request(&mut stream) else { continue };
                let auth =
                    headers.into_iter().filter(|h| h.to_ascii_lowercase().starts_with("authorization:")).collect();
                let _ = std::io::Write::write_all(
                    &mut stream,
                    b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
                if send.send(auth).is_err() {
                    return;
                }
            }
        });
        Self { url, seen }
    }

    /// The `Authorization` headers of each request received so far.
    fn requests(&self) -> Vec<Vec<String>> {
        self.seen.try_iter().collect()
    }
}

/// The header lines of the request on `stream`, its body read and dropped.
fn read_request(stream: &mut std::net::TcpStream) -> Option<Vec<String>> {
    let mut bytes = Vec::new();
    let mut buffer = [0; 4096];
    let end = loop {
        let n = stream.read(&mut buffer).ok().filter(|n| *n > 0)?;
        bytes.extend_from_slice(&buffer[..n]);
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
    };
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let headers: Vec<String> = head.lines().skip(1).map(str::to_owned).collect();
    let length: usize = headers
        .iter()
        .find_map(|h| h.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    while bytes.len() < end + 4 + length {
        let n = stream.read(&mut buffer).ok().filter(|n| *n > 0)?;
        bytes.extend_from_slice(&buffer[..n]);
    }
    Some(headers)
}

/// Credentials in `OPENLINEAGE_URL` are sent as HTTP Basic authentication (decoded, as the
/// OpenLineage Python client sends them), `OPENLINEAGE_API_KEY` as a bearer token: each request
/// carries one `Authorization` header. Both at once is a usage error that names the two settings
/// and neither secret, and nothing runs; no log shows either.
#[test]
fn url_credentials_and_an_api_key_are_one_or_the_other() {
    let lake = written(&[WriteMode::OverwritePartition]);
    let endpoint = Endpoint::start();
    let with_credentials = format!("http://lineage-user:s3cr%25t%20pw@{}/", endpoint.url);
    let plain = format!("http://{}/", endpoint.url);
    let key = "key-that-stays-secret";
    let secrets = ["s3cr", "lineage-user", key];
    let cases = [
        (&with_credentials, None, "Basic bGluZWFnZS11c2VyOnMzY3IldCBwdw=="),
        (&plain, Some(key), "Bearer key-that-stays-secret"),
    ];
    for (url, api_key, expected) in cases {
        let mut env = vec![("OPENLINEAGE_URL", url.as_str())];
        env.extend(api_key.map(|k| ("OPENLINEAGE_API_KEY", k)));
        let run = run_mode(&lake, WriteMode::OverwritePartition, FAILING, &["-vv"], &env);
        run.assert_code(0);
        let requests = endpoint.requests();
        assert_eq!(requests.len(), 2, "{expected}: a START and a COMPLETE:\n{}", run.stderr);
        for headers in requests {
            assert_eq!(headers.len(), 1, "one Authorization header: {headers:?}");
            let value = headers[0].split_once(':').map(|(_, v)| v.trim()).unwrap_or_default();
            assert_eq!(value, expected);
        }
        for secret in secrets {
            assert!(!run.stderr.contains(secret), "the log shows `{secret}`:\n{}", run.stderr);
        }
    }

    let before = lake.digest(&modes::table(WriteMode::OverwritePartition), None);
    let env = [("OPENLINEAGE_URL", with_credentials.as_str()), ("OPENLINEAGE_API_KEY", key)];
    let run = run_mode(&lake, WriteMode::OverwritePartition, FAILING, &[], &env);
    run.assert_code(2);
    assert_eq!(
        run.stderr,
        "error: --openlineage-url (OPENLINEAGE_URL) holds credentials (user:password@) and OPENLINEAGE_API_KEY \
         is set: a lineage request carries one of them; remove them from the URL to send the API key as a bearer \
         token, or unset OPENLINEAGE_API_KEY to send them as HTTP Basic authentication\n"
    );
    assert!(run.stdout.is_empty(), "nothing ran: {}", run.stdout);
    assert_eq!(lake.digest(&modes::table(WriteMode::OverwritePartition), None), before, "nothing committed");
    assert!(endpoint.requests().is_empty(), "no event was sent");
}

/// A run's arguments, its environment, and the error it must give.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

#[test]
fn bad_lineage_settings_are_usage_errors_and_a_dry_run_emits_nothing() {
    let lake = written(&[WriteMode::OverwritePartition]);
    let before = lake.digest(&modes::table(WriteMode::OverwritePartition), None);
    let cases: [Case<'_>; 3] = [
        (
            &[],
            &[("OPENLINEAGE_URL", "ftp://user:pw@host/")],
            "--openlineage-url (OPENLINEAGE_URL) is not an http(s) URL",
        ),
        (
            &["--openlineage-file", "/tmp/lineage.jsonl"],
            &[("OPENLINEAGE_PARENT_ID", "airflow/dag.task/not-a-uuid")],
            "OPENLINEAGE_PARENT_ID: `airflow/dag.task/not-a-uuid`: the run id `not-a-uuid` is not a UUID",
        ),
        (
            &["--openlineage-file", "/nonexistent/folder/lineage.jsonl"],
            &[],
            "--openlineage-file /nonexistent/folder/lineage.jsonl: cannot open it for appending",
        ),
    ];
    for (args, env, error) in cases {
        let run = run_mode(&lake, WriteMode::OverwritePartition, FAILING, args, env);
        run.assert_code(2);
        assert!(run.stderr.contains(&format!("error: {error}")), "stderr:\n{}", run.stderr);
        assert!(!run.stderr.contains("pw@"), "{}", run.stderr);
    }
    assert_eq!(lake.digest(&modes::table(WriteMode::OverwritePartition), None), before, "nothing committed");

    let file = lake.path().join("dry.jsonl");
    let dry = run_mode(
        &lake,
        WriteMode::OverwritePartition,
        FAILING,
        &["--dry-run", "--openlineage-file", file.to_str().expect("utf-8")],
        &[],
    );
    dry.assert_code(0);
    assert!(events(&file).is_empty(), "a dry run writes nothing, lineage included");
}

/// A UUID's text: 8-4-4-4-12 hex digits.
fn uuid_like(id: &str) -> bool {
    let groups: Vec<usize> = id.split('-').map(str::len).collect();
    groups == [8, 4, 4, 4, 12] && id.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
}
