//! The documentation's examples, run: every ```console block of the README and of docs/guide/
//! is a session of commands (`$ lakewriter …` lines, each followed by the stdout it prints). A
//! page's blocks run in order, in one folder: for the README an empty one, for a guide page a
//! copy of the demo's project after `lakewriter demo` (made once, copied with its file times, so
//! that its partitions stay fresh) in a folder `demo/` of a temporary folder.
//!
//! Matching, as trycmd does: `[..]` in an expected line stands for any text, a line `...` for any
//! number of lines; runs of spaces compare equal whatever their length, and a duration (`69 ms`,
//! `3.2 s`) equals any duration. A command must exit 0, unless the next one is `echo $?`, whose
//! output is the exit code. Besides `lakewriter` (or `cargo run [-q] -p lakewriter-cli --`), a
//! session may `cd DIR` and `echo $?`; anything else fails the test. A block of any other language
//! titled with a file (```` ```sql title="sql/x.sql" ````) is written to that file, relative to
//! the session's folder, where it stands among the commands; titled `… add`, it is added to the
//! end of the file (a job added to `lakewriter.toml`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::{Run, command};

/// One command of a session and the stdout it shows, or a file it writes.
struct Step {
    /// The line number of its `$ ` line (or its block's) in the page.
    line: usize,
    words: Vec<String>,
    /// The stdout shown, or the file's lines.
    expected: Vec<String>,
    /// A file block's file, and whether it is added to.
    file: Option<(String, bool)>,
}

/// A block's file, from its opening fence: ```` ```LANG title="PATH" [add] ````.
fn titled(fence: &str) -> Option<(String, bool)> {
    let rest = fence.split_once("title=\"")?.1;
    let (path, after) = rest.split_once('"')?;
    Some((path.to_owned(), after.trim() == "add"))
}

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The steps of every ```console block of the page, in order.
fn steps(page: &str) -> Vec<Step> {
    let text = std::fs::read_to_string(repository().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
    let mut steps: Vec<Step> = Vec::new();
    let (mut in_console, mut in_file, mut in_block) = (false, false, false);
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            in_console = in_block && line.trim() == "```console";
            in_file = false;
            if let (true, Some(file)) = (in_block, titled(line)) {
                steps.push(Step { line: i + 1, words: Vec::new(), expected: Vec::new(), file: Some(file) });
                in_file = true;
            }
        } else if in_file {
            steps.last_mut().expect("the file's step").expected.push(line.to_owned());
        } else if let (true, Some(start)) = (in_console, line.strip_prefix("$ ")) {
            // A command goes on over the next lines while a quote is open.
            let mut shell = start.to_owned();
            while shell.matches('"').count() % 2 == 1 || shell.matches('\'').count() % 2 == 1 {
                let (_, next) = lines.next().unwrap_or_else(|| panic!("{page}:{}: an unclosed quote", i + 1));
                shell = format!("{shell}\n{next}");
            }
            steps.push(Step { line: i + 1, words: words(&shell), expected: Vec::new(), file: None });
        } else if in_console {
            let step = steps.last_mut().unwrap_or_else(|| panic!("{page}:{}: output before a command", i + 1));
            step.expected.push(line.to_owned());
        }
    }
    steps
}

/// A command line split as the shell splits it: words, '…' and "…" quotes, `# comments`.
fn words(shell: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut in_word) = (Vec::new(), String::new(), None, false);
    for c in shell.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => (quote, in_word) = (Some(c), true),
            (None, '#') if !in_word => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                }
                in_word = false;
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The arguments of a `lakewriter` command, however the page calls the binary.
fn lakewriter_args(words: &[String]) -> Option<&[String]> {
    let prefixes: [&[&str]; 3] = [
        &["lakewriter"],
        &["cargo", "run", "-p", "lakewriter-cli", "--"],
        &["cargo", "run", "-q", "-p", "lakewriter-cli", "--"],
    ];
    prefixes
        .iter()
        .find(|p| words.len() >= p.len() && words.iter().zip(p.iter()).all(|(w, p)| w == p))
        .map(|p| &words[p.len()..])
}

/// A line as it is compared: runs of white space as one space, a duration as `[duration]`.
fn normal(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let number = !words[i].is_empty() && words[i].chars().all(|c| c.is_ascii_digit() || c == '.');
        let unit = words.get(i + 1).map(|w| w.trim_end_matches(|c: char| !c.is_alphanumeric()));
        if number && matches!(unit, Some("ms" | "s")) {
            let rest = words[i + 1].trim_start_matches(char::is_alphanumeric);
            out.push(format!("[duration]{rest}"));
            i += 2;
        } else {
            out.push(words[i].to_owned());
            i += 1;
        }
    }
    let indent = if line.starts_with(' ') { " " } else { "" };
    format!("{indent}{}", out.join(" "))
}

/// Whether `actual` matches the expected line `pattern`, whose `[..]` stand for any text.
fn line_matches(pattern: &str, actual: &str) -> bool {
    let parts: Vec<&str> = pattern.split("[..]").collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return pattern == actual;
    }
    if !actual.starts_with(first) || !actual[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the lines `actual` match the expected `lines`, whose line `...` stands for any lines.
fn lines_match(lines: &[String], actual: &[String]) -> bool {
    match lines.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            actual.first().is_some_and(|a| line_matches(&normal(first), &normal(a))) && lines_match(rest, &actual[1..])
        }
    }
}

/// The demo's project folder after `lakewriter demo`, made once for every page.
fn demo() -> &'static Path {
    static DEMO: OnceLock<tempfile::TempDir> = OnceLock::new();
    DEMO.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = Run::from(&command(&["demo", "."], dir.path(), &[]).output().expect("run lakewriter"));
        run.assert_code(0);
        dir
    })
    .path()
}

/// Runs the page's sessions and panics at the first command whose output or exit code differs.
fn run_page(page: &str) {
    let steps = steps(page);
    assert!(!steps.is_empty(), "{page} has no ```console block");
    let folder = tempfile::tempdir().expect("temp dir");
    let mut cwd = folder.path().to_path_buf();
    if page != "README.md" {
        // In a folder of its own, so that `../elsewhere` stays in the temporary folder.
        cwd = folder.path().join("demo");
        let copied = Command::new("cp").arg("-a").arg(demo()).arg(&cwd).status().expect("cp");
        assert!(copied.success(), "copying the demo");
    }
    let mut last: Option<Run> = None;
    for (n, step) in steps.iter().enumerate() {
        if let Some((path, add)) = &step.file {
            write_file(&cwd.join(path), &step.expected, *add);
            continue;
        }
        let at = format!("{page}:{}: `$ {}`", step.line, step.words.join(" "));
        let stdout = match step.words.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["cd", dir] => {
                cwd = cwd.join(dir);
                String::new()
            }
            ["echo", "$?"] => format!("{}\n", last.take().unwrap_or_else(|| panic!("{at}: no command before")).code),
            _ => {
                let args = lakewriter_args(&step.words).unwrap_or_else(|| panic!("{at}: not a lakewriter command"));
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let run = Run::from(&command(&args, &cwd, &[]).output().expect("run lakewriter"));
                let checked_next = steps.get(n + 1).is_some_and(|s| s.words == ["echo", "$?"]);
                assert!(checked_next || run.code == 0, "{at}: exit code {}\nstderr:\n{}", run.code, run.stderr);
                let stdout = run.stdout.clone();
                last = Some(run);
                stdout
            }
        };
        let actual: Vec<String> = stdout.lines().map(str::to_owned).collect();
        assert!(
            lines_match(&step.expected, &actual),
            "{at}: the output differs from the page's\n--- the page shows:\n{}\n--- the command printed:\n{}",
            step.expected.join("\n"),
            stdout
        );
    }
}

/// Writes a file block's `lines` to `path` (its folders too), or adds them to its end.
fn write_file(path: &Path, lines: &[String], add: bool) {
    use std::io::Write as _;
    let text = format!("{}\n", lines.join("\n"));
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("the file's folder");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(add)
        .truncate(!add)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    file.write_all(text.as_bytes()).expect("write the file");
}

#[test]
fn every_guide_page_with_examples_is_run() {
    let pages = std::fs::read_dir(repository().join("docs/guide")).expect("docs/guide");
    for entry in pages {
        let name = entry.expect("entry").file_name().into_string().expect("utf-8 name");
        let text = std::fs::read_to_string(repository().join("docs/guide").join(&name)).expect("page");
        let page = name.trim_end_matches(".md").replace('-', "_");
        assert!(
            !text.contains("```console") || GUIDE.contains(&page.as_str()),
            "docs/guide/{name} has examples: add a test `{page}`"
        );
    }
}

#[test]
fn readme() {
    run_page("README.md");
}

/// A test per guide page with examples, of the page's name, and their list.
macro_rules! guide_pages {
    ($($page:ident),*) => {
        const GUIDE: &[&str] = &[$(stringify!($page)),*];
        $(
            #[test]
            fn $page() {
                run_page(&format!("docs/guide/{}.md", stringify!($page).replace('_', "-")));
            }
        )*
    };
}

guide_pages!(
    concepts,
    write_modes,
    state,
    schema_changes,
    pipelines,
    reproduce,
    checks,
    testing,
    sql,
    lint,
    maintenance,
    report,
    command_line
);

#[test]
fn a_shown_output_that_differs_fails() {
    let shown = |lines: &[&str]| lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    let printed =
        shown(&["  dt=2026-09-01  ok           37 rows  version 0       224 ms", "daily_orders: 1 partition, 3.2 s"]);
    assert!(lines_match(&shown(&["  dt=2026-09-01 ok 37 rows version 0 69 ms", "..."]), &printed));
    assert!(lines_match(&shown(&["...", "daily_orders: [..], 0.3 s"]), &printed));
    assert!(!lines_match(&shown(&["  dt=2026-09-01 ok 38 rows version 0 69 ms", "..."]), &printed));
    assert!(!lines_match(&shown(&["  dt=2026-09-01 ok 37 rows version 0 69 ms"]), &printed));
    assert_eq!(words("sql -e \"SELECT 'a b'\" # a comment"), ["sql", "-e", "SELECT 'a b'"]);
    assert_eq!(titled("```toml title=\"lakewriter.toml\" add"), Some(("lakewriter.toml".to_owned(), true)));
    assert_eq!(titled("```sql title=\"sql/x.sql\""), Some(("sql/x.sql".to_owned(), false)));
    assert_eq!(titled("```toml"), None);
}
