//! ARCHITECTURE.md stays a map: every repository path it names exists, within 300 lines of 200 characters.

use std::path::{Path, PathBuf};

/// The longest ARCHITECTURE.md may be, in lines, and the longest a line of it may be, in characters.
const MAX_LINES: usize = 300;
const MAX_LINE_CHARS: usize = 200;

/// The folders a name in backticks must start with to be taken for a repository path.
const REPOSITORY_FOLDERS: [&str; 10] =
    ["crates/", "tests/", "scripts/", "docs/", "data/", "examples/", "schema/", "python/", "fuzz/", ".ci/"];

/// A path the document names, with the line that names it.
#[derive(Debug, PartialEq)]
struct Named {
    line: usize,
    path: String,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The repository path a span of inline code names, if it names one: its first word, without a
/// `:LINE` suffix or a trailing `/`; a pattern (`write/<mode>.rs`, `tests/…`) names its folder.
fn path_in_code(span: &str) -> Option<String> {
    let word = span.split_whitespace().next()?;
    if !REPOSITORY_FOLDERS.iter().any(|folder| word.starts_with(folder)) {
        return None;
    }
    let mut path = word;
    if let Some(start) = path.find(['<', '…', '*', '{']) {
        path = &path[..path[..start].rfind('/').map_or(0, |slash| slash + 1)];
    }
    if let Some((before, suffix)) = path.rsplit_once(':')
        && !suffix.is_empty()
        && suffix.chars().all(|c| c.is_ascii_digit() || c == '-')
    {
        path = before;
    }
    let path = path.trim_end_matches('/');
    (!path.is_empty()).then(|| path.to_owned())
}

/// The repository path a markdown link points to, if it is not a URL or an anchor in the page.
fn path_in_link(target: &str) -> Option<String> {
    let target = target.split('#').next()?.trim().trim_end_matches('/');
    let url = target.contains("://") || target.starts_with("mailto:");
    (!target.is_empty() && !url).then(|| target.to_owned())
}

/// The link targets of a piece of text outside inline code: `[text](TARGET)`.
fn links(text: &str) -> Vec<&str> {
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            rest.find(')').map(|end| &rest[..end])
        })
        .collect()
}

/// Every repository path `text` names: in inline code (a span may go on over lines), in a link,
/// or as a word of a fenced block that starts with a repository folder.
fn named_paths(text: &str) -> Vec<Named> {
    let mut named = Vec::new();
    let mut fenced = false;
    // An inline code span still open at the end of a line: the line it opened on, its text so far.
    let mut open: Option<(usize, String)> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if open.is_none() && line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            let words = line.split_whitespace().map(|word| word.trim_matches(|c: char| "(),;".contains(c)));
            named.extend(words.filter_map(path_in_code).map(|path| Named { line: number, path }));
            continue;
        }
        for (piece_index, piece) in line.split('`').enumerate() {
            if piece_index > 0 {
                // Every backtick opens or closes a span.
                open = match open.take() {
                    Some((start, span)) => {
                        named.extend(path_in_code(&span).map(|path| Named { line: start, path }));
                        None
                    }
                    None => Some((number, String::new())),
                };
            }
            match &mut open {
                Some((_, span)) => {
                    span.push(' ');
                    span.push_str(piece);
                }
                None => named
                    .extend(links(piece).into_iter().filter_map(path_in_link).map(|path| Named { line: number, path })),
            }
        }
    }
    named
}

/// The paths of `named` that do not exist under `root`, as `line N: PATH`.
fn missing(root: &Path, named: &[Named]) -> Vec<String> {
    named
        .iter()
        .filter(|named| !root.join(&named.path).exists())
        .map(|named| format!("line {}: {}", named.line, named.path))
        .collect()
}

#[test]
fn architecture_names_only_paths_that_exist() {
    let root = repository();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md is read");
    let named = named_paths(&text);
    assert!(named.len() > 20, "ARCHITECTURE.md names {} paths: the scan is broken", named.len());
    let missing = missing(&root, &named);
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names {} paths that do not exist:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn architecture_is_short_enough_to_read() {
    let text = std::fs::read_to_string(repository().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md is read");
    let mut problems = Vec::new();
    let lines = text.lines().count();
    if lines > MAX_LINES {
        problems.push(format!("{lines} lines, over {MAX_LINES}: move explanations into docs/"));
    }
    problems.extend(text.lines().enumerate().filter(|(_, line)| line.chars().count() > MAX_LINE_CHARS).map(
        |(index, line)| format!("line {}: {} characters, over {MAX_LINE_CHARS}", index + 1, line.chars().count()),
    ));
    assert!(problems.is_empty(), "ARCHITECTURE.md is too long to read:\n{}", problems.join("\n"));
}

/// The check itself: a path that does not exist is found wherever the document names it.
#[test]
fn architecture_check_finds_a_missing_path() {
    let text = "A `crates/lakewriter-core/` and `crates/no-such-crate/src/lib.rs:12`, a pattern\n\
                `crates/lakewriter/src/write/<mode>.rs`, a [link](docs/no-such-page.md#part), a span `tests/no-such/\n\
                over two lines`, a [site](https://example.com), `lakewriter_delta::state`.\n\
                ```text\nrun ─► scripts/no-such-script (and scripts/check-deps.sh)\n```\n";
    let named = named_paths(text);
    let paths: Vec<&str> = named.iter().map(|named| named.path.as_str()).collect();
    let expected = [
        "crates/lakewriter-core",
        "crates/no-such-crate/src/lib.rs",
        "crates/lakewriter/src/write",
        "docs/no-such-page.md",
        "tests/no-such",
        "scripts/no-such-script",
        "scripts/check-deps.sh",
    ];
    assert_eq!(paths, expected, "{named:?}");
    assert_eq!(
        missing(&repository(), &named),
        [
            "line 1: crates/no-such-crate/src/lib.rs",
            "line 2: docs/no-such-page.md",
            "line 2: tests/no-such",
            "line 5: scripts/no-such-script",
        ]
    );
}
