//! Storage faults on S3. The fault proxy (`scripts/s3-fault-proxy.py`, see `support::fault_proxy`) sits
//! between lakewriter and the S3 test server and answers chosen requests with a 5xx, answers
//! them late, drops their connections mid-body, or goes away for a while. lakewriter retries
//! what is safe to retry, within its request policy (docs/guide/s3.md); a
//! commit whose log-entry PUT landed while its answer was lost is found by its run id and counts
//! once, in every write mode; any other fault that outlasts the retries fails the run with an
//! error naming the request and its object, showing no secret and leaving the table as it was;
//! and the run made again once the fault is gone converges to the content of an undisturbed run.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::support::fault_proxy::{CHECKPOINT, DATA_FILE, Fault, LOG_ENTRY, LOG_LIST, Proxy, Requests, Seen};
use crate::support::figures::{Figures, rng, trials};
use crate::support::modes::{FAILING, GOOD, WRITTEN, label, project, run, state, table};
use crate::support::reader::Reader;
use crate::support::s3::{S3, assert_no_secret};
use crate::support::{Digest, Lake, Project, Report, Run, WRITE_MODES, WriteMode, day};

/// The request policy of every project here: 3 retries whose pauses add up to 0.6 to 1.4 s, so
/// that a failing request fails in seconds, and a 3 s timeout. The 10 s retry budget is never
/// what ends the retries of a failing request here: errors always say "after 3 retries".
pub(super) fn with_test_policy(project: Project) -> Project {
    let policy = [
        ("max_retries", "3"),
        ("init_backoff", "200ms"),
        ("max_backoff", "800ms"),
        ("retry_timeout", "10s"),
        ("timeout", "3s"),
        ("connect_timeout", "1s"),
    ];
    policy.into_iter().fold(project, |project, (key, value)| project.storage(key, value))
}

/// Tries of one failing request under [`with_test_policy`].
const TRIES: usize = 4;
/// Seconds an answer comes late to miss the 3 s timeout.
const LATE: f64 = 4.0;
/// Seconds the server is away without failing a run: less than the shortest sum of pauses.
const AWAY_BRIEFLY: f64 = 0.3;

/// A prefix of the test bucket with raw orders for [`WRITTEN`] and [`FAILING`] and the project of
/// one mode, reached straight (to set up and check) and through the proxy (the runs under faults).
struct Place {
    s3: S3,
    faulty: Lake,
    mode: WriteMode,
}

impl Place {
    /// With `mode`'s table written for [`WRITTEN`] where `written`, or no table yet.
    fn new(proxy: &Proxy, mode: WriteMode, written: bool) -> Self {
        let s3 = S3::new(&format!("faults-{}", mode.as_str().replace('_', "-")));
        for dt in [WRITTEN, FAILING] {
            let bytes = lakewriter_datagen::parquet_bytes(&lakewriter_datagen::orders_for(day(dt))).expect("parquet");
            s3.put(&format!("raw/orders/dt={dt}/part-00000.parquet"), bytes);
        }
        let project = with_test_policy(project(&[mode], GOOD));
        s3.lake.set_project(&project);
        let faulty = Lake::empty(&s3.env_via(&proxy.endpoint));
        faulty.set_project(&project);
        if written {
            run(&s3.lake, mode, WRITTEN).assert_code(0);
        }
        Self { s3, faulty, mode }
    }

    /// The table's content, read straight from the server.
    fn digest(&self) -> Digest {
        self.s3.lake.digest(&table(self.mode), None)
    }

    /// The run for [`FAILING`] (`rebuild`: of every day), through the proxy.
    fn run(&self) -> Run {
        run(&self.faulty, self.mode, FAILING)
    }

    /// The state `status` gives the partition of that run.
    fn state(&self) -> String {
        state(&self.s3.lake, self.mode)
    }

    /// The URI of the table, `s3://…/failures/<mode>`.
    fn uri(&self) -> String {
        self.s3.url(&format!("failures/{}", self.mode.as_str()))
    }

    /// How the proxy's URLs start for the table's objects: `http://…/lakewriter-test/<prefix>/failures/<mode>/`.
    fn url(&self, proxy: &Proxy) -> String {
        format!("{}/{}", proxy.endpoint, self.resource())
    }

    /// The table's folder as a request's path: `lakewriter-test/<prefix>/failures/<mode>/`.
    fn resource(&self) -> String {
        format!("{}failures/{}/", self.s3.root().trim_start_matches("s3://"), self.mode.as_str())
    }

    /// Where the data file of the run for [`FAILING`] goes below the table, %-encoded.
    fn data_dir(&self) -> &'static str {
        if self.mode == WriteMode::OverwritePartition { "dt%3D2026-09-02/" } else { "" }
    }
}

/// The content an undisturbed run for [`FAILING`] leaves in `mode`'s table, written for
/// [`WRITTEN`] first or not; from a local lakehouse (content does not depend on the store), once
/// for every test here.
fn reference(mode: WriteMode, written: bool) -> Digest {
    /// Rows and digest, by mode and whether the table was written first.
    type Contents = BTreeMap<(&'static str, bool), (u64, String)>;
    static REFERENCES: Mutex<Contents> = Mutex::new(BTreeMap::new());
    let mut references = REFERENCES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (rows, digest) = references.entry((mode.as_str(), written)).or_insert_with(|| {
        let lake = Lake::new(WRITTEN, FAILING);
        lake.set_project(&project(&[mode], GOOD));
        if written {
            run(&lake, mode, WRITTEN).assert_code(0);
        }
        run(&lake, mode, FAILING).assert_code(0);
        let digest = lake.digest(&table(mode), None);
        (digest.rows, digest.digest)
    });
    Digest { rows: *rows, digest: digest.clone(), version: 0 }
}

/// The report of a run that succeeded.
#[track_caller]
fn report_of(run: &Run) -> Report {
    run.assert_code(0);
    assert_no_secret(run);
    run.json().0.remove(0)
}

/// Asserts that `report` committed `version`, that the table is at that version and holds
/// `expected` (counted in `figures`), and that its partition is fresh.
#[track_caller]
fn assert_committed_once(place: &Place, report: &Report, version: u64, expected: &Digest, figures: &mut Figures) {
    let mode = place.mode;
    let outcome = (report.status.as_str(), report.committed, report.table_version);
    assert_eq!(outcome, ("ok", true, Some(version)), "{mode:?}: {report:?}");
    let after = place.digest();
    assert_eq!(after.version, version, "{mode:?}: exactly one new version");
    assert!(figures.compare(expected, &after), "{mode:?}: {after:?}, not {expected:?}");
    assert_eq!(place.state(), "fresh", "{mode:?}: the partition's state");
}

/// The tries of the PUT of log entry `version` the proxy saw.
fn log_entry_puts(seen: &[Seen], version: u64) -> Vec<&Seen> {
    let entry = format!("/_delta_log/{version:020}.json");
    seen.iter().filter(|s| s.method == "PUT" && s.target.ends_with(&entry)).collect()
}

/// The fault and the mode of trial `trial` among `faults` faults: every mode within the first six
/// trials, every pair of a fault and a mode within the first `6 * faults`.
fn pick(trial: usize, faults: usize) -> (usize, WriteMode) {
    let modes = WRITE_MODES.len();
    let cycle = faults * modes / gcd(faults, modes);
    (trial % faults, WRITE_MODES[(trial + trial / cycle) % modes])
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Faults after which a log-entry PUT has landed but its client has no answer, or an error.
const LANDED: [(Fault, &str); 4] = [
    (Fault::ForwardThenStatus(500), "500 on the log-entry PUT after it landed"),
    (Fault::ForwardThenStatus(503), "503 on the log-entry PUT after it landed"),
    (Fault::DropResponse, "the log-entry PUT's answer cut mid-way after it landed"),
    (Fault::DelayAnswer(LATE), "the log-entry PUT's answer later than the timeout after it landed"),
];

#[test]
fn a_log_entry_put_that_lands_but_whose_answer_is_lost_commits_once_in_every_mode() {
    let scenario = "log-entry PUT landed, its answer lost (5xx, cut, late), every mode, S3";
    let mut figures = Figures::new(scenario, "faults::storage_faults::a_log_entry_put_that_lands");
    let mut rng = rng(scenario);
    let proxy = Proxy::start();
    for trial in 0..trials(WRITE_MODES.len()) {
        let (index, mode) = pick(trial, LANDED.len());
        let (fault, hit) = LANDED[index];
        // The commit that creates the table, or one into it.
        let written = rng.bool();
        let place = Place::new(&proxy, mode, written);
        let version = if written { place.digest().version + 1 } else { 0 };
        proxy.inject(LOG_ENTRY, fault, 1, 1);
        let report = report_of(&place.run());
        let seen = proxy.requests();
        let tries = log_entry_puts(&seen, version);
        assert!(tries[0].landed && tries[0].status != Some(200), "{mode:?}, {hit}: {tries:?}");
        if let Fault::DelayAnswer(_) = fault {
            // A timed-out conditional PUT is not retried: its outcome is unknown.
            assert_eq!(tries.len(), 1, "{mode:?}, {hit}: {tries:?}");
        } else {
            // Retried, it found its entry there: "already exists", never a second entry.
            let last = tries.last().expect("a try");
            assert_eq!((tries.len(), last.status), (2, Some(412)), "{mode:?}, {hit}: {tries:?}");
        }
        assert!(log_entry_puts(&seen, version + 1).is_empty(), "{mode:?}, {hit}: no commit made again");
        assert_committed_once(&place, &report, version, &reference(mode, written), &mut figures);
        let read = Reader::new(&place.s3.lake).read(&place.uri());
        assert_eq!((read.version, read.distinct_rows), (version, read.rows), "{mode:?}, {hit}: {read:?}");
        figures.trial(hit, "committed once");
    }
    figures.finish();
}

/// Faults that pass before the retries end, or that a run does without, none of which lets a
/// request land twice: (requests hit, fault, from which match (0: one of the first three, by
/// chance), how many in a row, what the trial hit).
pub(super) const PASSING: [(Requests, Fault, usize, usize, &str); 8] = [
    (DATA_FILE, Fault::Status(500), 1, 2, "500 on a data-file PUT, twice"),
    (DATA_FILE, Fault::DropRequest, 1, 1, "a data-file PUT's connection dropped mid-body"),
    (LOG_ENTRY, Fault::Status(503), 1, 2, "503 on the log-entry PUT before it landed, twice"),
    (LOG_LIST, Fault::Status(503), 0, 3, "503 on a LIST of _delta_log/, three times"),
    (LOG_LIST, Fault::Delay(1.0), 0, 1, "a LIST of _delta_log/ answered 1 s late"),
    (LOG_LIST, Fault::Delay(LATE), 0, 1, "a LIST of _delta_log/ answered after the timeout"),
    // The run's LISTs of the log: the catalog's of the target and of raw.orders, then the
    // partition state's. A LIST whose answer breaks off is asked again (lakewriter's store:
    // object_store reads a LIST's answer outside its own retries).
    (LOG_LIST, Fault::DropResponse, 1, 1, "the catalog's LIST of _delta_log/ cut mid-body"),
    (LOG_LIST, Fault::DropResponse, 3, 1, "the partition state's LIST of _delta_log/ cut mid-body"),
];

#[test]
fn a_fault_that_passes_within_the_retries_changes_nothing_in_any_mode() {
    let scenario = "5xx, dropped connection or slow answer that passes within the retries, S3";
    let mut figures = Figures::new(scenario, "faults::storage_faults::a_fault_that_passes");
    let mut rng = rng(scenario);
    let proxy = Proxy::start();
    for trial in 0..trials(PASSING.len()) {
        let (index, mode) = pick(trial, PASSING.len());
        let (requests, fault, nth, times, hit) = PASSING[index];
        let place = Place::new(&proxy, mode, true);
        let version = place.digest().version + 1;
        proxy.inject(requests, fault, if nth == 0 { rng.usize(1..=3) } else { nth }, times);
        let report = report_of(&place.run());
        let hits = proxy.requests().into_iter().filter(|s| s.action != "forward").count();
        assert_eq!(hits, times, "{mode:?}, {hit}: the fault was hit");
        assert_committed_once(&place, &report, version, &reference(mode, true), &mut figures);
        figures.trial(hit, "committed once");
    }
    figures.finish();
}

/// `text` with what differs between runs masked: a request's duration (`in 1.2s`) and a data
/// file's unique name (`part-00000-<uuid>-c000`).
fn masked(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = [rest.find(" in "), rest.find("part-")].into_iter().flatten().min() {
        out.push_str(&rest[..at]);
        let (mask, replaced) = mask_at(&rest[at..]);
        out.push_str(mask);
        rest = &rest[at + replaced..];
    }
    out.push_str(rest);
    out
}

/// What replaces the start of `text` (` in …` or `part-…`), and how many bytes it replaces.
fn mask_at(text: &str) -> (&'static str, usize) {
    if let Some(after) = text.strip_prefix(" in ") {
        let number = after.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(after.len());
        let unit = ["ms", "µs", "ns", "s"].into_iter().find(|u| after[number..].starts_with(u));
        return match unit {
            Some(unit) if number > 0 => (" in <time>", " in ".len() + number + unit.len()),
            _ => (" in ", " in ".len()),
        };
    }
    match text.find("-c000").filter(|end| !text[..*end].contains('/')) {
        Some(end) => ("part-<file>", end),
        None => ("part-", "part-".len()),
    }
}

/// The body of the proxy's `status` answer for the object at `resource`.
fn injected(status: u16, resource: &str) -> String {
    let (reason, code) =
        if status == 503 { ("Service Unavailable", "SlowDown") } else { ("Internal Server Error", "InternalError") };
    format!(
        "{status} {reason}: <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>injected \
         fault</Message><Resource>/{resource}</Resource><RequestId>fault-proxy</RequestId></Error>"
    )
}

/// The end of the error of a request that failed `TRIES` times: `… in <time>, after 3 retries,
/// …  - ` and the last try's error.
fn after_retries(last: &str) -> String {
    format!(" in <time>, after 3 retries, max_retries: 3, retry_timeout: 10s  - {last}")
}

/// A fault that outlasts the retries: (requests hit, fault, from which match, how many in a row
/// (0: every one), what the trial hit).
pub(super) type Lasting = (Requests, Fault, usize, usize, &'static str);

pub(super) const LASTING: [Lasting; 4] = [
    (DATA_FILE, Fault::Status(503), 1, 0, "503 on every data-file PUT"),
    (LOG_ENTRY, Fault::Status(500), 1, 0, "500 on every log-entry PUT"),
    (LOG_LIST, Fault::Status(503), 1, 0, "503 on every LIST of _delta_log/"),
    // A LIST whose answer breaks off on every try: asked again as often as a 5xx is.
    (LOG_LIST, Fault::DropResponse, 1, 0, "every LIST of _delta_log/ cut mid-body"),
];

/// How the run of `place` fails under `fault` on `requests`.
fn failure(place: &Place, proxy: &Proxy, requests: Requests, fault: Fault) -> String {
    let (mode, url, resource) = (place.mode, place.url(proxy), place.resource());
    let partition = if mode == WriteMode::Rebuild { "all".to_owned() } else { format!("dt={FAILING}") };
    let failed =
        format!("{}: {}: writing {partition} failed; nothing was committed", label(mode, FAILING), table(mode));
    let put = |object: &str, status| {
        let answer =
            format!("Server returned non-2xx status code: {}", injected(status, &format!("{resource}{object}")));
        format!("{failed}: Generic S3 error: Error performing PUT {url}{object}{}", after_retries(&answer))
    };
    let root = place.s3.root();
    // A table whose log cannot be listed fails the runs that read it (here, its own job's), not
    // the catalog: the run's first read of its table's log names it.
    let table_log = |cause: String| {
        format!("{}: cannot read the Delta table at {}/: Generic S3 error: {cause}", label(mode, FAILING), place.uri())
    };
    match (requests.name, fault) {
        (name, Fault::Status(status)) if name == DATA_FILE.name => {
            put(&format!("{}part-<file>-c000.snappy.parquet", place.data_dir()), status)
        }
        (name, Fault::Status(status)) if name == LOG_ENTRY.name => put("_delta_log/00000000000000000001.json", status),
        (_, Fault::Status(status)) => {
            let prefix = root.trim_start_matches("s3://lakewriter-test/").replace('/', "%2F");
            let query = format!("list-type=2&prefix={prefix}failures%2F{}%2F_delta_log%2F", mode.as_str());
            let answer = format!(
                "Server returned non-2xx status code: {}",
                injected(status, &format!("lakewriter-test?{query}"))
            );
            table_log(format!(
                "Error performing list request: Error performing GET {}/lakewriter-test?{query}{}",
                proxy.endpoint,
                after_retries(&answer)
            ))
        }
        _ => table_log(
            "Error getting list response body: HTTP error: request or response body error: error reading a body from \
             connection: end of file before message length reached"
                .to_owned(),
        ),
    }
}

/// Asserts that `run` failed as `expected` says, showing no secret.
#[track_caller]
fn assert_failed(run: &Run, expected: &str) {
    run.assert_code(1);
    assert_no_secret(run);
    let report = run.json().0.remove(0);
    assert_eq!((report.status.as_str(), report.committed), ("failed", false), "{report:?}");
    let reported = report.error.as_deref().unwrap_or_default();
    assert_eq!(masked(reported), *expected);
    assert!(run.stderr.ends_with(&format!("error: {reported}\n")), "stderr:\n{}", run.stderr);
}

#[test]
fn a_fault_that_outlasts_the_retries_fails_the_run_naming_the_request_and_a_rerun_converges() {
    let scenario = "5xx or a cut answer on every try, every mode, S3";
    let mut figures = Figures::new(scenario, "faults::storage_faults::a_fault_that_outlasts_the_retries");
    let proxy = Proxy::start();
    for trial in 0..trials(LASTING.len()) {
        let (index, mode) = pick(trial, LASTING.len());
        let (requests, fault, nth, times, hit) = LASTING[index];
        let place = Place::new(&proxy, mode, true);
        let (before, state) = (place.digest(), place.state());
        proxy.inject(requests, fault, nth, times);
        let run = place.run();
        assert_failed(&run, &failure(&place, &proxy, requests, fault));
        let tries = proxy.requests().into_iter().filter(|s| s.action != "forward").count();
        if requests.name == LOG_LIST.name {
            // Each LIST of a log the run makes (the catalog's of each table, then the run's of
            // its table's) is tried as often as any request.
            assert!(tries >= TRIES && tries % TRIES == 0, "{mode:?}, {hit}: {tries} tries");
        } else {
            assert_eq!(tries, if times == 0 { TRIES } else { times }, "{mode:?}, {hit}: tries");
        }
        assert_eq!(place.digest(), before, "{mode:?}, {hit}: the table changed");
        assert_eq!(place.state(), state, "{mode:?}, {hit}: the partition's state changed");
        proxy.clear();
        let report = report_of(&place.run());
        assert_committed_once(&place, &report, before.version + 1, &reference(mode, true), &mut figures);
        figures.trial(hit, "failed naming the request, nothing committed; the rerun converged");
    }
    figures.finish();
}

/// Faults on the GET of a checkpoint: (fault, how many in a row (0: every one), what the trial
/// hit).
const ON_CHECKPOINT: [(Fault, usize, &str); 3] = [
    (Fault::Status(500), 1, "500 on the GET of a checkpoint"),
    (Fault::DropResponse, 1, "the GET of a checkpoint cut mid-body"),
    (Fault::Status(500), 0, "500 on every GET of a checkpoint"),
];

#[test]
fn a_checkpoint_get_that_fails_is_retried_and_one_that_always_fails_is_named() {
    let scenario = "5xx or cut answer on the GET of a checkpoint, every mode, S3";
    let mut figures = Figures::new(scenario, "faults::storage_faults::a_checkpoint_get_that_fails");
    let proxy = Proxy::start();
    for trial in 0..trials(ON_CHECKPOINT.len()) {
        let (index, mode) = pick(trial, ON_CHECKPOINT.len());
        let (fault, times, hit) = ON_CHECKPOINT[index];
        let place = Place::new(&proxy, mode, true);
        // Another writer sets a checkpoint every 2 commits: it commits version 1 and checkpoints it.
        Reader::new(&place.s3.lake).checkpoint_every(2, &place.uri());
        let before = place.digest();
        assert_eq!(before.version, 1, "{mode:?}: the metadata commit");
        proxy.inject(CHECKPOINT, fault, 1, times);
        let run = place.run();
        let seen = proxy.requests();
        assert!(seen.iter().any(|s| s.action != "forward"), "{mode:?}, {hit}: the checkpoint was read");
        let expected = &reference(mode, true);
        if times == 0 {
            let checkpoint = format!("_delta_log/{:020}.checkpoint.parquet", 1);
            let answer = format!(
                "Server returned non-2xx status code: {}",
                injected(500, &format!("{}{checkpoint}", place.resource()))
            );
            let request = format!("Error performing GET {}{checkpoint}{}", place.url(&proxy), after_retries(&answer));
            let error = format!(
                "{}: cannot read the Delta table at {}/: Generic S3 error: {request}",
                label(mode, FAILING),
                place.uri()
            );
            assert_failed(&run, &error);
            assert_eq!(place.digest(), before, "{mode:?}, {hit}: the table changed");
            proxy.clear();
            let report = report_of(&place.run());
            assert_committed_once(&place, &report, before.version + 1, expected, &mut figures);
            figures.trial(hit, "failed naming the request, nothing committed; the rerun converged");
        } else {
            assert_committed_once(&place, &report_of(&run), before.version + 1, expected, &mut figures);
            figures.trial(hit, "committed once");
        }
    }
    figures.finish();
}

/// Where the server goes away: (requests that trigger it, seconds away, what the trial hit).
const AWAY: [(Requests, f64, &str); 4] = [
    (LOG_ENTRY, AWAY_BRIEFLY, "the server gone briefly at the log-entry PUT"),
    (DATA_FILE, AWAY_BRIEFLY, "the server gone briefly at a data-file PUT"),
    (LOG_ENTRY, 600.0, "the server gone for long at the log-entry PUT"),
    (DATA_FILE, 600.0, "the server gone for long at a data-file PUT"),
];

#[test]
fn a_server_gone_briefly_is_waited_for_and_one_gone_for_long_fails_the_run_in_bounded_time() {
    let scenario = "the S3 server gone for a while (refusing connections), every mode, S3";
    let mut figures = Figures::new(scenario, "faults::storage_faults::a_server_gone");
    let proxy = Proxy::start();
    for trial in 0..trials(AWAY.len()) {
        let (index, mode) = pick(trial, AWAY.len());
        let (requests, seconds, hit) = AWAY[index];
        let place = Place::new(&proxy, mode, true);
        let (before, state) = (place.digest(), place.state());
        proxy.inject(requests, Fault::Gone(seconds), 1, 1);
        let run = place.run();
        let expected = &reference(mode, true);
        if seconds < 1.0 {
            assert_committed_once(&place, &report_of(&run), before.version + 1, expected, &mut figures);
            figures.trial(hit, "committed once");
            continue;
        }
        // The run ends while the server is still away: within the retries of two requests (the
        // one that failed, and the LIST that would have found its commit).
        run.assert_code(1);
        assert_no_secret(&run);
        let object = if requests.name == LOG_ENTRY.name {
            "_delta_log/00000000000000000001.json".to_owned()
        } else {
            format!("{}part-<file>-c000.snappy.parquet", place.data_dir())
        };
        let partition = if mode == WriteMode::Rebuild { "all".to_owned() } else { format!("dt={FAILING}") };
        let refused = "HTTP error: error sending request: client error (Connect): tcp connect error: Connection refused \
                       (os error 111)";
        let error = format!(
            "{}: {}: writing {partition} failed, and whether it committed is unknown: the table's log could not be read \
             to look for its commit; running it again is safe: Generic S3 error: Error performing PUT {}{object}{}",
            label(mode, FAILING),
            table(mode),
            place.url(&proxy),
            after_retries(refused)
        );
        assert_eq!(masked(run.json().0.remove(0).error.as_deref().unwrap_or_default()), error, "{mode:?}");
        proxy.back();
        assert_eq!(place.digest(), before, "{mode:?}, {hit}: the table changed");
        assert_eq!(place.state(), state, "{mode:?}, {hit}: the partition's state changed");
        let report = report_of(&place.run());
        assert_committed_once(&place, &report, before.version + 1, expected, &mut figures);
        figures.trial(hit, "failed naming the request, nothing committed; the rerun converged");
    }
    figures.finish();
}
