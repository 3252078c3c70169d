//! A lakehouse root that cannot be written, cannot be read, or fills up. The tests run as root,
//! whom file modes do not stop, so each fault is real: a read-only bind mount or a small tmpfs in
//! a private mount namespace (`unshare --mount`), and an unprivileged user (`setpriv`) in front
//! of a folder with mode 000. Where a mechanism is missing, the test fails saying so; it never
//! skips. Each run names the partition and the operating system's reason, exits 1, and commits
//! nothing: the table stays at its version with its content.

use std::ffi::OsStr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use crate::support::figures::Figures;
use crate::support::modes::{DATED, FAILING, WRITTEN, run, table, written};
use crate::support::{Lake, Run, WRITE_MODES, WriteMode, days};

/// The exit code of a namespace script whose set-up (a mount) failed before lakewriter ran.
const SET_UP_FAILED: i32 = 125;

/// `command`, run by `program PREFIX…` (its environment and folder kept).
fn wrapped(command: &Command, program: &str, prefix: &[&OsStr]) -> Command {
    let prefix = [prefix, &[command.get_program()]].concat();
    rebuilt(command, OsStr::new(program), &prefix)
}

/// `program PREFIX… ARGS…`, with the arguments, environment and folder of `command`.
fn rebuilt(command: &Command, program: &OsStr, prefix: &[&OsStr]) -> Command {
    let mut wrapper = Command::new(program);
    wrapper.args(prefix).args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapper.env(key, value),
            None => wrapper.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        wrapper.current_dir(dir);
    }
    wrapper
}

/// Runs `script` with `sh` in a private mount namespace, with `args` as `$1…`; a failed set-up
/// in it exits [`SET_UP_FAILED`], and fails the test naming `what` it needed.
fn in_namespace(script: &str, args: &[&OsStr], command: &Command, what: &str) -> Run {
    let prefix =
        [&[OsStr::new("--mount"), OsStr::new("sh"), OsStr::new("-c"), OsStr::new(script), OsStr::new("sh")], args]
            .concat();
    let output = wrapped(command, "unshare", &prefix)
        .output()
        .unwrap_or_else(|e| panic!("{what} needs util-linux's `unshare`: {e}"));
    let run = Run::from(&output);
    assert_ne!(
        run.code, SET_UP_FAILED,
        "{what}: cannot set it up in a private mount namespace (root needed):\n{}",
        run.stderr
    );
    run
}

/// Runs `command` where `dir` is mounted read-only.
fn read_only(dir: &Path, command: &Command) -> Run {
    const SCRIPT: &str = r#"mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 125; shift; exec "$@""#;
    in_namespace(SCRIPT, &[dir.as_os_str()], command, "a read-only root (a read-only bind mount)")
}

/// Runs `command` as a user whom file modes stop: `nobody` (65534) through `setpriv` where the
/// tests run as root, else as the user they run as. `nobody` runs a link to the binary in `dir`
/// (a folder it may enter), since the build folder may lie in root's home (mode 700).
fn unprivileged(command: &Command, dir: &Path) -> Run {
    let as_root = std::fs::metadata("/proc/self").expect("/proc/self").uid() == 0;
    let mut command = if as_root {
        let binary = dir.join("lakewriter");
        if !binary.exists() && std::fs::hard_link(command.get_program(), &binary).is_err() {
            std::fs::copy(command.get_program(), &binary).expect("a copy of the binary");
        }
        let prefix = ["--reuid=65534", "--regid=65534", "--clear-groups", "--"].map(OsStr::new);
        rebuilt(command, OsStr::new("setpriv"), &[&prefix[..], &[binary.as_os_str()]].concat())
    } else {
        wrapped(command, "env", &[])
    };
    let output = command.output().unwrap_or_else(|e| panic!("an unreadable root needs util-linux's `setpriv`: {e}"));
    Run::from(&output)
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// `text` with the random part of each data file's name (`part-00000-<uuid>-c000`) as `<uuid>`.
fn without_uuids(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("part-00000-") {
        let (head, tail) = rest.split_at(at + "part-00000-".len());
        out.push_str(head);
        assert!(tail.len() > 36 && tail.as_bytes()[36] == b'-', "a data file name: {text}");
        out.push_str("<uuid>");
        rest = &tail[36..];
    }
    out + rest
}

#[test]
fn a_read_only_root_fails_every_mode_naming_the_partition_and_commits_nothing() {
    let mut figures = Figures::new("bad input: a read-only root", "faults::local_faults::a_read_only_root");
    let lake = written(&WRITE_MODES);
    let root = lake.root().display().to_string();
    let read_only_fs = "Read-only file system (os error 30)";
    for mode in WRITE_MODES {
        let before = lake.digest(&table(mode), None);
        let mut args = vec!["--json", "run", mode.as_str()];
        if mode != WriteMode::Rebuild {
            args.extend(["--dt", FAILING]);
        }
        let run = read_only(&lake.root(), &lake.command(&args));
        run.assert_code(1);
        let partition = if mode == WriteMode::Rebuild { "all".to_owned() } else { format!("dt={FAILING}") };
        let label = if mode == WriteMode::Rebuild {
            "rebuild (whole table)".to_owned()
        } else {
            format!("{} {partition}", mode.as_str())
        };
        // A partitioned table needs its partition's folder first; the others a data file.
        let refused = if mode == WriteMode::OverwritePartition {
            format!("Unable to create dir {root}/failures/{}/{partition}", mode.as_str())
        } else {
            format!("Unable to open file {root}/failures/{}/part-00000-<uuid>-c000.snappy.parquet#1", mode.as_str())
        };
        let expected = format!(
            "{label}: {}: writing {partition} failed; nothing was committed: Generic LocalFileSystem error: \
             {refused}: {read_only_fs}",
            table(mode),
        );
        let error = run.json().0.remove(0).error.expect("an error");
        assert_eq!(without_uuids(&error), expected, "{mode:?}");
        assert_eq!(without_uuids(&run.stderr), format!("error: {expected}\n"), "{mode:?}: stderr");
        assert_eq!(lake.digest(&table(mode), None), before, "{mode:?}: the table changed");
        figures.trial(mode.as_str(), "clear error, exit 1, nothing committed");
        // Writable again, the same run commits.
        let report = run_fixed(&lake, mode);
        assert_eq!(report, Some(before.version + 1), "{mode:?}: the rerun commits once");
    }

    // A first write: the table's folder cannot be created.
    let fresh = Lake::new(WRITTEN, WRITTEN);
    let run = read_only(&fresh.root(), &fresh.command(&["run", "daily_orders", "--dt", WRITTEN]));
    run.assert_code(1);
    assert_eq!(
        run.error_lines(),
        [format!(
            "error: daily_orders dt={WRITTEN}: cannot create the folder of the Delta table at file://{}/analytics/daily_orders/: {read_only_fs}",
            fresh.root().display()
        )]
    );
    assert!(!fresh.root().join("analytics").exists(), "nothing written");
    figures.trial("first write", "clear error, exit 1, nothing committed");
    figures.finish();
}

/// Runs `mode` for [`FAILING`] with nothing in the way: the version it committed.
fn run_fixed(lake: &Lake, mode: WriteMode) -> Option<u64> {
    let report = run(lake, mode, FAILING).assert_code(0).json().0.remove(0);
    assert!(report.committed, "{mode:?}: {report:?}");
    report.table_version
}

#[test]
fn an_unreadable_root_fails_every_command_naming_it_and_changes_nothing() {
    let mut figures = Figures::new("bad input: an unreadable root", "faults::local_faults::an_unreadable_root");
    let lake = written(&DATED[..1]);
    let name = table(WriteMode::OverwritePartition);
    let before = lake.digest(&name, None);
    // `nobody` reads the project file, and nothing under the root.
    set_mode(lake.path(), 0o755);
    set_mode(&lake.project_file(), 0o644);
    set_mode(&lake.root(), 0o000);
    let root = format!("file://{}/", lake.root().display());
    let listing = [
        format!("error: lakehouse root {root}"),
        "  caused by: cannot open the lakehouse catalog".to_owned(),
        format!("  caused by: cannot list the lakehouse root {root}"),
        format!(
            "  caused by: Generic LocalFileSystem error: Unable to walk dir: IO error for operation on {}: Permission \
             denied (os error 13)",
            lake.root().display()
        ),
    ];
    let mode = WriteMode::OverwritePartition.as_str();
    let range = ["--from", WRITTEN, "--to", FAILING];
    let commands: [Vec<&str>; 5] = [
        vec!["run", mode, "--dt", FAILING],
        [&["backfill", mode][..], &range].concat(),
        [&["status", mode][..], &range].concat(),
        [&["plan", mode][..], &range].concat(),
        vec!["verify", mode, "--dt", WRITTEN],
    ];
    for args in &commands {
        let run = unprivileged(&lake.command(args), lake.path());
        run.assert_code(1);
        assert_eq!(
            (run.stdout.as_str(), run.error_lines()),
            ("", listing.iter().map(String::as_str).collect()),
            "{args:?}"
        );
        figures.trial(args[0], "clear error, exit 1, nothing committed");
    }
    let run = unprivileged(&lake.command(&["digest", &name]), lake.path());
    run.assert_code(1);
    let table_url = format!("{root}{}/", name.replace('.', "/"));
    assert_eq!(
        run.error_lines(),
        [
            format!("error: cannot compute the digest of {name}"),
            format!("  caused by: cannot read the Delta table at {table_url}"),
            "  caused by: Permission denied (os error 13)".to_owned(),
        ]
    );
    figures.trial("digest", "clear error, exit 1, nothing committed");
    set_mode(&lake.root(), 0o755);
    assert_eq!(lake.digest(&name, None), before, "the table changed");
    figures.finish();
}

/// Copies `lake`'s root into a tmpfs with `spare_pages` pages (4 KiB) free, runs `lakewriter
/// --root <the copy> ARGS…` there, and copies that root out: the run, and the copy's root. A page
/// holds one small data file or one commit, so a partition takes two.
fn on_a_small_disk(lake: &Lake, spare_pages: u32, args: &[&str]) -> (Run, String) {
    const SCRIPT: &str = r#"
        mount -t tmpfs -o size=64m lakewriter-test "$1" && cp -a "$2" "$1/lake" || exit 125
        used=$(df -B4096 --output=used "$1" | tail -n 1)
        mount -o remount,size=$(( (used + $3) * 4096 )) "$1" || exit 125
        mount="$1"; copy="$4"; shift 4
        "$@"; code=$?
        cp -a "$mount/lake" "$copy" || exit 125
        exit $code
    "#;
    let (mount, copy) = (lake.path().join("tmpfs"), lake.path().join("after"));
    std::fs::create_dir(&mount).expect("mount point");
    let on_tmpfs = format!("{}/lake", mount.display());
    let command = lake.command(&[&["--root", on_tmpfs.as_str()][..], args].concat());
    let (root, spare) = (lake.root(), spare_pages.to_string());
    let script_args = [mount.as_os_str(), root.as_os_str(), OsStr::new(&spare), copy.as_os_str()];
    let run = in_namespace(SCRIPT, &script_args, &command, "a full disk (a small tmpfs)");
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run.assert_code(1);
    (run, copy.display().to_string())
}

#[test]
fn a_full_disk_fails_the_partitions_that_do_not_fit_and_a_rerun_with_space_converges() {
    let mut figures = Figures::new("bad input: a full disk", "faults::local_faults::a_full_disk");
    let (first, last) = ("2026-09-01", "2026-09-06");
    let lake = Lake::new(first, last);
    lake.cli(&["run", "daily_orders", "--dt", first]).assert_code(0);
    // The undisturbed backfill, for the content each partition should get.
    let reference = Lake::new(first, last);
    reference.cli(&["backfill", "daily_orders", "--from", first, "--to", last]).assert_code(0);
    let backfill = ["backfill", "daily_orders", "--from", "2026-09-02", "--to", last, "--parallel", "1"];
    let (full, after) = on_a_small_disk(&lake, 3, &[&["--json"][..], &backfill].concat());

    // The first day fits; every later one is refused whole, naming its partition.
    let (reports, summary) = full.json();
    assert_eq!((summary.partitions, summary.ok, summary.failed), (5, 1, 4), "{reports:?}");
    for (report, day) in reports.iter().zip(days("2026-09-02", last)) {
        if day.to_string() == "2026-09-02" {
            assert_eq!((report.status.as_str(), report.table_version), ("ok", Some(1)), "{report:?}");
            continue;
        }
        let error = format!(
            "daily_orders dt={day}: analytics.daily_orders: writing dt={day} failed; nothing was committed: Generic \
             LocalFileSystem error: Unable to copy data to file: No space left on device (os error 28)"
        );
        assert_eq!((report.status.as_str(), report.error.as_deref()), ("failed", Some(error.as_str())), "{day}");
        assert!(full.stderr.contains(&format!("error: {error}\n")), "{}", full.stderr);
        figures.trial("no space left", "clear error, exit 1, nothing committed");
    }

    // The copy out of the full disk: the table opens at the first day's commit, each day whole or
    // empty (a data file may be left behind, in no commit).
    let digest = |day: &str| {
        let run = lake.cli(&["--root", &after, "--json", "digest", "analytics.daily_orders", "--partition", day]);
        serde_json::from_str::<crate::support::Digest>(run.assert_code(0).stdout.trim()).expect("digest")
    };
    for day in days(first, last).map(|d| d.to_string()) {
        let (part, expected) = (digest(&day), reference.digest("analytics.daily_orders", Some(&day)));
        assert_eq!(part.version, 1, "{day}: the table's version");
        if day.as_str() <= "2026-09-02" {
            assert!(figures.compare(&expected, &part), "{day}: {part:?}, not {expected:?}");
        } else {
            assert_eq!(part.rows, 0, "{day}: nothing of it in the table");
        }
    }

    // With space again, the same backfill converges to the undisturbed one.
    lake.cli(&[&["--root", after.as_str()][..], &backfill].concat()).assert_code(0);
    for day in days(first, last).map(|d| d.to_string()) {
        let (part, expected) = (digest(&day), reference.digest("analytics.daily_orders", Some(&day)));
        assert_eq!((part.rows, part.digest), (expected.rows, expected.digest), "{day} after the rerun");
    }
    figures.finish();
}
