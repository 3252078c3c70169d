//! Every key the project file accepts, by the table it goes in. The parser's own shapes
//! (`parse.rs`, `checks.rs`) decide what is accepted; this list names the same keys for the
//! reference (`docs/reference/project-file.md`), and a test holds the two together.

/// The tables of `lakewriter.toml` and the keys each accepts, in the order the parser declares
/// them. `jobs.NAME` stands for a job's table, `sources.NAME` for a source's; `[storage]` takes
/// object-store options by name and is not listed here.
pub const KEYS: &[(&str, &[&str])] = &[
    ("", &["root", "dialect", "ansi", "time_zone", "storage", "engine", "jobs", "sources", "tests"]),
    ("engine", &["url"]),
    (
        "jobs.NAME",
        &[
            "target",
            "write",
            "partition_by",
            "sql",
            "sql_file",
            "key",
            "newer_by",
            "on_duplicate_keys",
            "delete_when",
            "predicate",
            "allow_nondeterministic",
            "not_null",
            "on_schema_change",
            "on_missing_input",
            "dialect",
            "dedup_window",
            "dedup_window_column",
            "input_size_warning",
            "cluster_by",
            "target_file_size",
            "checks",
        ],
    ),
    (
        "jobs.NAME.checks",
        &["not_null", "unique", "accepted_values", "row_count", "expect", "change_vs_previous", "warn"],
    ),
    ("jobs.NAME.checks.row_count", &["min", "max"]),
    ("jobs.NAME.checks.change_vs_previous", &["max_row_count_change_pct"]),
    ("sources.NAME", &["unique"]),
    ("tests.NAME", &["job", "dt", "dates", "given", "expect"]),
    ("tests.NAME.given.TABLE", &["rows", "file", "schema"]),
    ("tests.NAME.expect", &["rows", "file", "schema", "tolerance", "error"]),
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::KEYS;
    use crate::Project;

    /// The keys the parser's unknown-key error lists for a key `zz_unknown` put into `table`.
    fn accepted(table: &str) -> Vec<String> {
        let header = match table {
            "" => String::new(),
            "sources.NAME" => "[sources.\"raw.orders\"]\n".to_owned(),
            "jobs.NAME" => "[jobs.j]\ntarget = \"a.b\"\n".to_owned(),
            "tests.NAME" => "[jobs.j]\ntarget = \"a.b\"\nsql = \"SELECT 1\"\n[tests.t]\n".to_owned(),
            t if t.starts_with("tests.") => format!(
                "[jobs.j]\ntarget = \"a.b\"\nsql = \"SELECT 1\"\n[tests.t]\njob = \"j\"\n[{}]\n",
                t.replace("NAME", "t").replace("TABLE", "\"raw.orders\"")
            ),
            t => format!("[jobs.j]\ntarget = \"a.b\"\n[{}]\n", t.replace("NAME", "j")),
        };
        let text = format!("root = \"lake\"\n{header}zz_unknown = 1\n");
        let error = Project::parse(&text, Path::new("lakewriter.toml")).expect_err("an unknown key").to_string();
        // serde's wording: "expected `a`", "expected `a` or `b`", "expected one of `a`, `b`, `c`".
        let list = error.split_once("expected ").unwrap_or_else(|| panic!("no key list in: {error}")).1;
        let list = list.lines().next().unwrap_or_default().trim_start_matches("one of ");
        list.split(", ").flat_map(|k| k.split(" or ")).map(|k| k.trim_matches('`').to_owned()).collect()
    }

    #[test]
    fn the_key_list_names_every_key_the_parser_accepts() {
        for (table, keys) in KEYS {
            assert_eq!(accepted(table), keys.to_vec(), "the keys of [{table}]");
        }
    }
}
