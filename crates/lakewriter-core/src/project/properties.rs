//! Properties of the project-file parser, over generated files: it never panics, every error
//! names the file and where in it, and every valid project it is given parses back to itself.

use std::path::Path;

use proptest::prelude::*;
use toml::{Table, Value};

use super::{Checks, JobSpec, OnDuplicateKeys, Project, SqlSource, WriteSpec};
use crate::Error;

const FILE: &str = "/p/lakewriter.toml";

fn parse(text: &str) -> crate::Result<Project> {
    Project::parse(text, Path::new(FILE))
}

/// The error's message, after checking that it is a configuration error naming [`FILE`].
fn message(error: &Error) -> &str {
    match error {
        Error::Config { file, message } if file == Path::new(FILE) => message,
        other => panic!("not an error of the project file {FILE}: {other:?}"),
    }
}

/// Where a message says the mistake is: a place in the text (TOML's line and column), a job, a
/// source, or the root.
fn names_where(message: &str) -> bool {
    ["TOML parse error at line ", "job `", "source `", "`root` "].iter().any(|p| message.starts_with(p))
}

/// A column name: a plain one, or any other SQL can give in quotes (any text but an empty one).
fn column() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z_][a-z0-9_]{0,8}", any::<String>().prop_filter("not empty", |s| !s.is_empty())]
}

fn columns() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::btree_set(column(), 1..4).prop_map(|set| set.into_iter().collect())
}

/// Text that is not blank: SQL, a predicate, a condition (any characters TOML can hold).
fn text() -> impl Strategy<Value = String> {
    any::<String>().prop_filter("not blank", |s| !s.trim().is_empty())
}

/// A write mode with valid settings.
fn write_spec() -> impl Strategy<Value = WriteSpec> {
    let merge = (columns(), column(), any::<bool>(), proptest::option::of(text()))
        .prop_filter("newer_by outside the key", |(key, newer_by, ..)| !key.contains(newer_by))
        .prop_map(|(key, newer_by, errors, delete_when)| WriteSpec::Merge {
            key,
            newer_by,
            on_duplicate_keys: if errors { OnDuplicateKeys::Error } else { OnDuplicateKeys::KeepNewest },
            delete_when,
        });
    prop_oneof![
        Just(WriteSpec::OverwritePartition),
        merge,
        text().prop_map(|predicate| WriteSpec::DeleteInsert { predicate }),
        columns().prop_map(|key| WriteSpec::AppendDedup { key, window: None }),
        Just(WriteSpec::Append),
        Just(WriteSpec::Rebuild),
        Just(WriteSpec::Statement),
    ]
}

prop_compose! {
    fn job(name: String)(
        schema in "[a-z_][a-z0-9_]{0,6}",
        table in "[a-z_][a-z0-9_]{0,6}",
        write in write_spec(),
        partition_by in proptest::option::of(column()),
        sql in text(),
        allow_nondeterministic in any::<bool>(),
        not_null in proptest::option::of(columns()),
    ) -> JobSpec {
        let partition_by = match write {
            WriteSpec::OverwritePartition => partition_by.or_else(|| Some("dt".to_owned())),
            _ => partition_by,
        };
        let target = crate::TableRef::new(&schema, &table).expect("identifiers");
        JobSpec { name: name.clone(), target, write, partition_by, sql: SqlSource::Inline(sql), allow_nondeterministic, not_null: not_null.unwrap_or_default(), on_schema_change: crate::OnSchemaChange::default(), on_missing_input: crate::OnMissingInput::default(), semantics: crate::Semantics::default(), checks: Checks::default(), input_size_warning: None, cluster_by: Vec::new(), target_file_size: None }
    }
}

fn project() -> impl Strategy<Value = Project> {
    let jobs = proptest::collection::btree_set("[A-Za-z0-9_-]{1,10}", 0..4)
        .prop_flat_map(|names| names.into_iter().map(job).collect::<Vec<_>>());
    let sources = proptest::collection::btree_map(("[a-z]{1,5}", "[a-z]{1,5}"), columns(), 0..3);
    let storage = proptest::collection::btree_map("[a-z_]{1,12}", "[ -~]{0,12}", 0..3);
    (text(), storage, jobs, sources).prop_map(|(root, storage, jobs, sources)| Project {
        file: FILE.into(),
        root,
        semantics: crate::Semantics::default(),
        storage,
        engine: None,
        jobs: jobs.into_iter().map(|job| (job.name.clone(), job)).collect(),
        sources: sources
            .into_iter()
            .map(|((schema, table), unique)| {
                (crate::TableRef::new(&schema, &table).expect("identifiers"), super::SourceSpec { unique })
            })
            .collect(),
        tests: std::collections::BTreeMap::new(),
    })
}

fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().cloned().map(Value::String).collect())
}

/// The `[jobs.NAME]` table of `job`.
fn job_table(job: &JobSpec) -> Table {
    let mut t = Table::new();
    t.insert("target".into(), job.target.to_string().into());
    t.insert("write".into(), job.write.mode().as_str().into());
    if let Some(column) = &job.partition_by {
        t.insert("partition_by".into(), column.clone().into());
    }
    match &job.write {
        WriteSpec::Merge { key, newer_by, on_duplicate_keys, delete_when } => {
            t.insert("key".into(), strings(key));
            t.insert("newer_by".into(), newer_by.clone().into());
            if *on_duplicate_keys == OnDuplicateKeys::Error {
                t.insert("on_duplicate_keys".into(), "error".into());
            }
            if let Some(condition) = delete_when {
                t.insert("delete_when".into(), condition.clone().into());
            }
        }
        WriteSpec::DeleteInsert { predicate } => drop(t.insert("predicate".into(), predicate.clone().into())),
        WriteSpec::AppendDedup { key, .. } => drop(t.insert("key".into(), strings(key))),
        WriteSpec::OverwritePartition | WriteSpec::Append | WriteSpec::Rebuild | WriteSpec::Statement => {}
    }
    if job.allow_nondeterministic {
        t.insert("allow_nondeterministic".into(), true.into());
    }
    if !job.not_null.is_empty() {
        t.insert("not_null".into(), strings(&job.not_null));
    }
    if let SqlSource::Inline(sql) = &job.sql {
        t.insert("sql".into(), sql.clone().into());
    }
    t
}

/// The file of `project`, as TOML.
fn file_table(project: &Project) -> Table {
    let mut file = Table::new();
    file.insert("root".into(), project.root.clone().into());
    let storage = project.storage.iter().map(|(k, v)| (k.clone(), Value::from(v.clone()))).collect();
    file.insert("storage".into(), Value::Table(storage));
    let jobs = project.jobs.iter().map(|(name, job)| (name.clone(), Value::Table(job_table(job)))).collect();
    file.insert("jobs".into(), Value::Table(jobs));
    let sources = project.sources.iter().map(|(table, source)| {
        (table.to_string(), Value::Table(Table::from_iter([("unique".to_owned(), strings(&source.unique))])))
    });
    file.insert("sources".into(), Value::Table(sources.collect()));
    file
}

/// Where an unknown key goes in a file: at the top, in a job's table or in a source's.
#[derive(Debug, Clone)]
enum Level {
    Top,
    Job(usize),
    Source(usize),
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_parses_or_fails_naming_where(text in any::<String>()) {
        if let Err(e) = parse(&text) {
            prop_assert!(names_where(message(&e)), "{e}");
        }
    }

    /// Text close to a project file: lines of plausible keys, tables and values, in any order.
    #[test]
    fn any_file_of_plausible_lines_parses_or_fails_naming_where(lines in proptest::collection::vec(prop_oneof![
        Just("root = \"lake\"".to_owned()),
        Just("[storage]".to_owned()),
        "\\[jobs\\.[a-z_\\-]{0,6}\\]",
        "\\[sources\\.\"[a-z.]{0,6}\"\\]",
        "(target|write|partition_by|sql|sql_file|key|newer_by|on_duplicate_keys|delete_when|predicate|allow_nondeterministic|not_null|unique|root|colour) = (\"[a-z_. $=]{0,12}\"|\\[\"[a-z_]{0,4}\"\\]|[0-9]{1,3}|true|\\[\\]|\\{\\})",
    ], 0..14)) {
        if let Err(e) = parse(&lines.join("\n")) {
            prop_assert!(names_where(message(&e)), "{e}");
        }
    }

    #[test]
    fn a_valid_project_parses_back_to_itself(project in project()) {
        let text = toml::to_string(&file_table(&project)).expect("TOML");
        prop_assert_eq!(parse(&text)?, project);
    }

    #[test]
    fn an_empty_column_name_is_refused_naming_the_job_and_the_key(
        project in project(),
        job in any::<usize>(),
        which in any::<usize>(),
    ) {
        let mut file = file_table(&project);
        let jobs = file.get_mut("jobs").and_then(Value::as_table_mut).expect("jobs");
        prop_assume!(!jobs.is_empty());
        let name = jobs.keys().nth(job % jobs.len()).expect("a job").clone();
        let table = jobs.get_mut(&name).and_then(Value::as_table_mut).expect("a job's table");
        let keys: Vec<&str> = ["key", "newer_by", "partition_by"].into_iter().filter(|k| table.contains_key(*k)).collect();
        prop_assume!(!keys.is_empty());
        let key = keys[which % keys.len()];
        let empty = if key == "key" { strings(&["a".to_owned(), String::new()]) } else { Value::from("") };
        table.insert(key.to_owned(), empty);
        let error = parse(&toml::to_string(&file).expect("TOML")).expect_err("an empty column name");
        let message = message(&error);
        prop_assert!(message.starts_with(&format!("job `{name}`: key `{key}`")), "{message}");
        prop_assert!(message.contains("empty"), "{message}");
    }

    #[test]
    fn an_unknown_key_at_any_level_is_named_with_its_job_or_source(
        project in project(),
        level in prop_oneof![Just(Level::Top), any::<usize>().prop_map(Level::Job), any::<usize>().prop_map(Level::Source)],
        key in "[a-z_]{1,10}",
    ) {
        let mut file = file_table(&project);
        let known = ["root", "storage", "engine", "jobs", "sources", "target", "write", "partition_by", "sql", "sql_file", "key",
            "newer_by", "on_duplicate_keys", "delete_when", "predicate", "allow_nondeterministic", "not_null", "unique"];
        prop_assume!(!known.contains(&key.as_str()));
        let within = |table: &mut Value, index: usize| -> Option<(String, Table)> {
            let tables = table.as_table_mut()?;
            let name = tables.keys().nth(index % tables.len().max(1))?.clone();
            let inner = tables.get_mut(&name)?.as_table_mut()?;
            inner.insert(key.clone(), 1.into());
            Some((name, inner.clone()))
        };
        let (place, named) = match level {
            Level::Top => {
                file.insert(key.clone(), 1.into());
                ("", String::new())
            }
            Level::Job(i) => match within(file.get_mut("jobs").expect("jobs"), i) {
                Some((name, _)) => ("job", name),
                None => return Ok(()),
            },
            Level::Source(i) => match within(file.get_mut("sources").expect("sources"), i) {
                Some((name, _)) => ("source", name),
                None => return Ok(()),
            },
        };
        let error = parse(&toml::to_string(&file).expect("TOML")).expect_err("an unknown key");
        let message = message(&error);
        prop_assert!(message.contains(&format!("unknown field `{key}`")), "{message}");
        if !place.is_empty() {
            prop_assert!(message.starts_with(&format!("{place} `{named}`: ")), "{message}");
        }
    }
}
