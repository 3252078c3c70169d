//! Crash injection: a run SIGKILLed as it enters a phase of its write — told by the phase events
//! it logs on stderr (`RUST_LOG=lakewriter::phase=info`; see ARCHITECTURE.md), never by a guessed
//! time. After each kill the table opens; it holds its old or its new content whole, never a mix
//! or a duplicate; its partition state agrees with the data; and the same command run again
//! converges to the content of an undisturbed run.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::failures::{DATED, FAILING, GOOD, WRITTEN, project, run, table, written};
use crate::figures::Figures;
use crate::s3::S3;
use crate::support::{Digest, Lake, Mode, day};

/// Where a trial runs: a local lakehouse, or a prefix of the S3 test bucket.
enum Place {
    Local(Lake),
    S3(S3),
}

impl Place {
    fn lake(&self) -> &Lake {
        match self {
            Self::Local(lake) => lake,
            Self::S3(s3) => &s3.lake,
        }
    }

    /// Raw orders for [`WRITTEN`] and [`FAILING`], and `mode`'s table written for [`WRITTEN`].
    fn written(on_s3: bool, mode: Mode) -> Self {
        if !on_s3 {
            return Self::Local(written(&[mode]));
        }
        let s3 = S3::new(&format!("crash-{}", mode.as_str().replace('_', "-")));
        for dt in [WRITTEN, FAILING] {
            let bytes = lakewriter_datagen::parquet_bytes(&lakewriter_datagen::orders_for(day(dt))).expect("parquet");
            s3.put(&format!("raw/orders/dt={dt}/part-00000.parquet"), bytes);
        }
        s3.lake.set_project(&project(&[mode], GOOD));
        run(&s3.lake, mode, WRITTEN).assert_code(0);
        Self::S3(s3)
    }
}

/// The phases a run is killed at: planned (nothing written yet), writing (data files on their
/// way, the log entry not yet), committed (the log entry landed; the checkpoint and the report
/// not yet).
const PHASES: [&str; 3] = ["planned", "writing", "committed"];

/// Runs `lakewriter ARGS` on `lake` and SIGKILLs it as it logs that it enters `phase`; whether
/// it reached that phase before it ended on its own.
fn kill_at(lake: &Lake, args: &[&str], phase: &str) -> bool {
    let mut command = lake.command(args);
    command.env("RUST_LOG", "lakewriter=warn,lakewriter::phase=info").stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn lakewriter");
    let stderr = child.stderr.take().expect("stderr");
    let needle = format!("phase=\"{phase}\"");
    let hit = BufReader::new(stderr).lines().map_while(Result::ok).any(|line| line.contains(&needle));
    if hit {
        child.kill().expect("SIGKILL");
    }
    child.wait().expect("wait for lakewriter");
    hit
}

/// The arguments of `mode`'s run for `day` (`rebuild`: without a date).
fn args(mode: Mode, day: &str) -> Vec<&str> {
    let mut args = vec!["run", mode.as_str()];
    if mode != Mode::Rebuild {
        args.extend(["--dt", day]);
    }
    args
}

/// The state `status` gives the partition of `mode`'s run for [`FAILING`].
fn state(lake: &Lake, mode: Mode) -> String {
    let mut args = vec!["--json", "status", mode.as_str()];
    if mode != Mode::Rebuild {
        args.extend(["--from", FAILING, "--to", FAILING]);
    }
    let run = lake.cli(&args);
    run.assert_code(0);
    let first = run.stdout.lines().next().expect("a partition line");
    let line: serde_json::Value = serde_json::from_str(first).expect("JSON");
    line["state"].as_str().expect("state").to_owned()
}

/// Kills a run of every mode at every phase, each in a fresh place (local or on S3), and checks
/// the table after the kill and after a rerun; returns the phases hit.
fn kill_every_mode_at_every_phase(on_s3: bool, figures: &mut Figures) -> usize {
    let mut hits = 0;
    for mode in DATED.into_iter().chain([Mode::Rebuild]) {
        let undisturbed = Place::written(on_s3, mode);
        run(undisturbed.lake(), mode, FAILING).assert_code(0);
        let new = undisturbed.lake().digest(&table(mode), None);
        for phase in PHASES {
            let place = Place::written(on_s3, mode);
            let lake = place.lake();
            let old = lake.digest(&table(mode), None);
            assert!(kill_at(lake, &args(mode, FAILING), phase), "{mode:?} reaches {phase}");
            hits += 1;
            let after = lake.digest(&table(mode), None);
            let content = (after.digest.as_str(), after.rows);
            let is_old = content == (old.digest.as_str(), old.rows);
            let is_new = content == (new.digest.as_str(), new.rows);
            figures.trial(phase, if is_new { "new content" } else { "old content" });
            if !is_old && !is_new {
                figures.partial();
            }
            assert!(is_old || is_new, "{mode:?} killed at {phase}: neither the old nor the new content: {after:?}");
            match phase {
                "planned" => assert!(is_old, "{mode:?}: killed before writing, yet the table changed"),
                "committed" => assert!(is_new, "{mode:?}: killed after its commit, yet the table is old"),
                _ => {}
            }
            if mode != Mode::Rebuild {
                let expected = if is_new { "fresh" } else { "missing" };
                assert_eq!(
                    state(lake, mode),
                    expected,
                    "{mode:?} killed at {phase}: the state disagrees with the data"
                );
            }
            run(lake, mode, FAILING).assert_code(0);
            let rerun = lake.digest(&table(mode), None);
            assert!(figures.compare(&new, &rerun), "{mode:?} killed at {phase}: {rerun:?}, not {new:?}");
            assert_eq!(state(lake, mode), "fresh", "{mode:?} killed at {phase}: fresh after the rerun");
        }
    }
    hits
}

#[test]
fn a_run_killed_at_any_phase_leaves_old_or_new_content_and_a_rerun_converges() {
    let mut figures = Figures::new("`run` SIGKILLed at a phase, every mode, local", "crash::a_run_killed_at_any_phase");
    assert_eq!(
        kill_every_mode_at_every_phase(false, &mut figures),
        6 * PHASES.len(),
        "every phase of every mode was hit"
    );
    figures.finish();
}

#[test]
fn on_s3_a_run_killed_at_any_phase_leaves_old_or_new_content_and_a_rerun_converges() {
    let mut figures =
        Figures::new("`run` SIGKILLed at a phase, every mode, S3", "crash::on_s3_a_run_killed_at_any_phase");
    assert_eq!(
        kill_every_mode_at_every_phase(true, &mut figures),
        6 * PHASES.len(),
        "every phase of every mode was hit"
    );
    figures.finish();
}

#[test]
fn a_backfill_killed_at_a_commit_leaves_each_partition_whole_and_a_rerun_converges() {
    const PHASES: [&str; 2] = ["writing", "committed"];
    let (from, to) = ("2026-09-01", "2026-09-04");
    let days = ["2026-09-01", "2026-09-02", "2026-09-03", "2026-09-04"];
    let scenario = "`backfill --parallel N` SIGKILLed at a partition's phase, local";
    let mut figures = Figures::new(scenario, "crash::a_backfill_killed_at_a_commit");
    let mut rng = crate::figures::rng(scenario);
    let mut expected: Vec<Option<Vec<Digest>>> = vec![None, None];
    for trial in 0..crate::figures::trials(PHASES.len()) {
        let phase = PHASES[trial % PHASES.len()];
        let parallel = rng.usize(2..=3);
        let parallel_arg = parallel.to_string();
        let backfill = ["backfill", "daily_orders", "--from", from, "--to", to, "--parallel", &parallel_arg];
        let expected = expected[parallel - 2].get_or_insert_with(|| {
            let undisturbed = Lake::new(from, to);
            undisturbed.cli(&backfill).assert_code(0);
            days.iter().map(|d| undisturbed.digest("analytics.daily_orders", Some(d))).collect()
        });
        let lake = Lake::new(from, to);
        lake.cli(&["run", "daily_orders", "--dt", from]).assert_code(0);
        assert!(kill_at(&lake, &backfill[..], phase), "the backfill reaches {phase}");
        let mut written = 0;
        for (day, new) in days.iter().zip(expected.iter()) {
            let part = lake.digest("analytics.daily_orders", Some(day));
            let whole = (part.digest == new.digest && part.rows == new.rows) || part.rows == 0;
            if !whole {
                figures.partial();
            }
            written += usize::from(part.rows > 0);
            assert!(whole, "{day} after a kill at {phase}: a partial partition: {part:?}");
        }
        figures.trial(phase, &format!("{written} of {} partitions written", days.len()));
        lake.cli(&backfill).assert_code(0);
        for (day, new) in days.iter().zip(expected.iter()) {
            let part = lake.digest("analytics.daily_orders", Some(day));
            assert!(figures.compare(new, &part), "{day} after the rerun: {part:?}, not {new:?}");
        }
    }
    figures.finish();
}
