//! Apache Spark as the oracle of the `spark` dialect: every case of the differential corpus
//! (`tests/spark/corpus`) written by lakewriter's real write path and compared, typed, with the
//! answers Spark 4.3 gave over the same Parquet (`tests/spark/answers.jsonl`, which
//! `tests/spark/differential.py record` regenerates), in both ANSI modes. The cases that differ
//! must be exactly those `tests/spark/known-different.txt` lists (the work left, a list that only
//! shrinks): a new difference fails, and so does a listed case that no longer differs.
//! `scripts/test` also asks Spark itself every case again (`differential.py confirm`): its answers
//! must be the recorded ones. docs/guide/sql.md holds the summary table this prints
//! (`LAKEWRITER_BLESS=1` rewrites it).

use std::path::PathBuf;
use std::process::Command;

/// Where docs/guide/sql.md holds the corpus's summary table.
const BEGIN: &str = "<!-- differential suite: begin -->\n";
const END: &str = "<!-- differential suite: end -->";

#[test]
fn the_spark_dialect_gives_the_answers_spark_recorded_for_every_case_of_the_corpus() {
    let python = std::env::var("LAKEWRITER_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("the differential suite reads tables with delta-rs Python: run the tests with `scripts/test`, which installs it and sets LAKEWRITER_TEST_PYTHON")
    });
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new(python)
        .arg(repo.join("tests/spark/differential.py"))
        .arg("check")
        .arg(env!("CARGO_BIN_EXE_lakewriter"))
        .output()
        .expect("run the differential suite");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the cases where lakewriter's spark dialect and Spark differ are not those tests/spark/known-different.txt lists:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = &stdout[stdout.find("| category |").expect("the summary table")..];
    let table = &table[..table.find("\n\n").map_or(table.len(), |end| end + 1)];
    let page_path = repo.join("docs/guide/sql.md");
    let page = std::fs::read_to_string(&page_path).expect("docs/guide/sql.md");
    let (start, end) =
        (page.find(BEGIN).expect("the begin marker") + BEGIN.len(), page.find(END).expect("the end marker"));
    if std::env::var_os("LAKEWRITER_BLESS").is_some() {
        std::fs::write(&page_path, format!("{}{table}{}", &page[..start], &page[end..])).expect("write sql.md");
        return;
    }
    assert_eq!(&page[start..end], table, "docs/guide/sql.md's table of the corpus (LAKEWRITER_BLESS=1 rewrites it)");
}
