//! The matrix as data: the ways a job writes ([`WRITERS`]) and the options that change how rows
//! are matched or written ([`OPTIONS`]), each with the writers it applies to. A cell is one
//! writer with one option: one job, named `WRITER__OPTION`, writing `matrix.WRITER__OPTION` from
//! the raw events. A new option is one line of [`OPTIONS`].

use serde_json::{Value, json};

use crate::support::{Job, WriteMode};

/// How a job writes: a write mode, or a statement that maps onto one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    Mode(WriteMode),
    /// `INSERT OVERWRITE … PARTITION (dt = $dt)`: `overwrite_partition`.
    InsertOverwrite,
    /// `INSERT INTO`: `append`.
    InsertInto,
    /// `MERGE INTO` with a newer-wins update (`UPDATE SET *`, `INSERT *`): `merge`, by its clauses.
    MergeInto,
}

const OVERWRITE: Writer = Writer::Mode(WriteMode::OverwritePartition);
const DELETE_INSERT: Writer = Writer::Mode(WriteMode::DeleteInsert);
const MERGE: Writer = Writer::Mode(WriteMode::Merge);
const APPEND_DEDUP: Writer = Writer::Mode(WriteMode::AppendDedup);
const APPEND: Writer = Writer::Mode(WriteMode::Append);
const REBUILD: Writer = Writer::Mode(WriteMode::Rebuild);

/// Every writer.
const WRITERS: [Writer; 9] = [
    OVERWRITE,
    DELETE_INSERT,
    MERGE,
    APPEND_DEDUP,
    APPEND,
    REBUILD,
    Writer::InsertOverwrite,
    Writer::InsertInto,
    Writer::MergeInto,
];

/// The writers whose table's partitioning is free: all but a partition overwrite's (its
/// `partition_by` is the day it replaces).
const FREELY_PARTITIONED: [Writer; 7] =
    [DELETE_INSERT, MERGE, APPEND_DEDUP, APPEND, REBUILD, Writer::InsertInto, Writer::MergeInto];

/// An option: its name, the writers it applies to, its settings in the job's table of the project
/// file, and what it changes in the rows the table must hold.
pub struct Opt {
    pub name: &'static str,
    writers: &'static [Writer],
    set: fn(Job, Writer) -> Job,
    expect: Expect,
}

/// What an option changes in the expected rows.
#[derive(Clone, Copy)]
struct Expect {
    /// A string column the table is partitioned by: `''` is written as NULL there.
    partition: Option<&'static str>,
    /// `append_dedup`'s window: its days, and the column it counts them in.
    window: Option<(u32, &'static str)>,
    /// The new code adds a column ([`ADDED`]) that the old code's runs lack.
    adds_column: bool,
}

const SAME: Expect = Expect { partition: None, window: None, adds_column: false };

/// Every option, each applied to the writers it names (one option a cell).
pub const OPTIONS: &[Opt] = &[
    Opt { name: "plain", writers: &WRITERS, set: |job, _| job, expect: SAME },
    Opt {
        name: "partition_by_region",
        writers: &FREELY_PARTITIONED,
        set: |job, _| job.partition_by("region"),
        expect: Expect { partition: Some("region"), ..SAME },
    },
    Opt {
        name: "dedup_window",
        writers: &[APPEND_DEDUP],
        set: |job, _| job.partition_by("dt").dedup_window("2 days", None),
        expect: Expect { window: Some((2, "dt")), ..SAME },
    },
    Opt {
        name: "dedup_window_column",
        writers: &[APPEND_DEDUP],
        set: |job, _| job.dedup_window("2 days", Some("event_date")),
        expect: Expect { window: Some((2, "event_date")), ..SAME },
    },
    Opt {
        name: "cluster_by",
        writers: &[MERGE, APPEND_DEDUP],
        set: |job, _| job.cluster_by(&["event_id"]).target_file_size("1 KiB"),
        expect: SAME,
    },
    Opt {
        name: "on_schema_change",
        writers: &WRITERS,
        set: |job, writer| {
            job.on_schema_change(if writer == REBUILD { "sync_all_columns" } else { "append_new_columns" })
        },
        expect: Expect { adds_column: true, ..SAME },
    },
];

/// The columns of a raw event, each job's first columns.
const COLUMNS: [&str; 6] = ["event_id", "region", "event_date", "updated_at", "op", "amount"];

/// The column the new code of an `on_schema_change` cell adds, and its SQL (DataFusion's and
/// DuckDB's alike): a value of each version of a key, so that a row filled from another version
/// shows.
const ADDED: (&str, &str) = ("extra", "amount * 10");

/// Which code a run has: the job as first written, or as edited since (its `on_schema_change`
/// cells' SQL with [`ADDED`]). Every other cell's code is the same in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Old,
    New,
}

/// One writer with one option.
pub struct Cell {
    pub writer: Writer,
    pub option: &'static Opt,
}

/// Every cell of the matrix.
pub fn cells() -> Vec<Cell> {
    OPTIONS.iter().flat_map(|option| option.writers.iter().map(move |&writer| Cell { writer, option })).collect()
}

impl Writer {
    pub fn name(self) -> &'static str {
        match self {
            Writer::Mode(mode) => mode.as_str(),
            Writer::InsertOverwrite => "insert_overwrite",
            Writer::InsertInto => "insert_into",
            Writer::MergeInto => "merge_into",
        }
    }

    /// How `scripts/matrix-expect.py` computes its table.
    fn kind(self) -> &'static str {
        match self {
            OVERWRITE | DELETE_INSERT | Writer::InsertOverwrite => "replace",
            APPEND | Writer::InsertInto => "append",
            MERGE => "merge",
            APPEND_DEDUP => "append_dedup",
            REBUILD => "rebuild",
            Writer::MergeInto => "merge_into",
            Writer::Mode(WriteMode::Statement) => unreachable!("a statement is a writer of its own"),
        }
    }
}

impl Cell {
    /// The job's name: `WRITER__OPTION`.
    pub fn name(&self) -> String {
        format!("{}__{}", self.writer.name(), self.option.name)
    }

    /// The table it writes: `matrix.WRITER__OPTION`.
    pub fn table(&self) -> String {
        format!("matrix.{}", self.name())
    }

    /// Whether it runs for a date: all but a `rebuild`.
    pub fn dated(&self) -> bool {
        self.writer != REBUILD
    }

    /// The job, with `code`'s SQL.
    pub fn job(&self, code: Code) -> Job {
        let (name, table) = (self.name(), self.table());
        let columns = COLUMNS.join(", ");
        let new = self.option.expect.adds_column && code == Code::New;
        let (added, added_name) =
            if new { (format!(", {} AS {}", ADDED.1, ADDED.0), format!(", {}", ADDED.0)) } else { Default::default() };
        let one_day = format!("SELECT {columns}, $dt AS dt{added} FROM raw.events WHERE dt = $dt");
        // Where a column is added, an INSERT names its columns: by position alone the old code's
        // would be refused once the table has the new one (docs/guide/schema-changes.md).
        let listed = |partition: &str| {
            if self.option.expect.adds_column { format!("({columns}{partition}{added_name}) ") } else { String::new() }
        };
        let job = match self.writer {
            OVERWRITE => Job::new(&name, &table).sql(one_day),
            DELETE_INSERT => Job::delete_insert(&name, &table, "dt = $dt").sql(one_day),
            MERGE => Job::merge(&name, &table, &["event_id"], "updated_at").delete_when("op = 'delete'").sql(one_day),
            APPEND_DEDUP => Job::append_dedup(&name, &table, &["event_id"]).sql(one_day),
            APPEND => Job::append(&name, &table).sql(one_day),
            REBUILD => Job::rebuild(&name, &table).sql(format!("SELECT {columns}, dt{added} FROM raw.events")),
            Writer::InsertOverwrite => Job::statement(
                &name,
                &table,
                &format!(
                    "INSERT OVERWRITE TABLE {table} PARTITION (dt = $dt) {}SELECT {columns}{added} FROM raw.events WHERE dt = $dt",
                    listed("")
                ),
            ),
            Writer::InsertInto => {
                Job::statement(&name, &table, &format!("INSERT INTO {table} {}{one_day}", listed(", dt")))
            }
            Writer::MergeInto => {
                // Each key's newest row; on a tie, the greatest value of each other column.
                let order = "updated_at DESC NULLS LAST, region DESC NULLS LAST, event_date DESC NULLS LAST, \
                             op DESC NULLS LAST, amount DESC NULLS LAST";
                let source = format!(
                    "SELECT {columns}, dt{added_name} FROM (SELECT {columns}, $dt AS dt{added}, \
                     ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY {order}) AS rn \
                     FROM raw.events WHERE dt = $dt) WHERE rn = 1"
                );
                let statement = format!(
                    "MERGE INTO {table} AS t USING ({source}) AS s ON t.event_id = s.event_id \
                     WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
                );
                Job::statement(&name, &table, &statement)
            }
            Writer::Mode(WriteMode::Statement) => unreachable!("a statement is a writer of its own"),
        };
        (self.option.set)(job, self.writer)
    }

    /// What `scripts/matrix-expect.py` needs to compute its table.
    pub fn spec(&self) -> Value {
        let Expect { partition, window, adds_column } = self.option.expect;
        let mut columns: Vec<&str> = COLUMNS.to_vec();
        columns.push("dt");
        let mut spec = json!({
            "name": self.name(),
            "kind": self.writer.kind(),
            "columns": columns,
            "key": ["event_id"],
            "newer_by": "updated_at",
            "partition": partition,
            "window": window.map(|(days, column)| json!({"days": days, "column": column})),
            "added": adds_column.then(|| json!({"column": ADDED.0, "sql": ADDED.1})),
        });
        if self.writer == MERGE {
            spec["delete_when"] = json!("op = 'delete'");
        }
        spec
    }
}
