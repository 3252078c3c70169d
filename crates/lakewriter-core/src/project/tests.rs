//! Parsing project files: jobs, sources, every write mode and its errors.

use super::*;

mod project_files {
    use super::*;

    const GOOD: &str = r#"
root = "lake"

[jobs.daily_orders]
target = "analytics.daily_orders"
write = "overwrite_partition"
partition_by = "dt"
sql = "SELECT 1 AS x, $dt AS dt"

[jobs.from_file]
target = "analytics.other"
write = "overwrite_partition"
partition_by = "dt"
sql_file = "jobs/other.sql"
"#;

    fn parse(text: &str) -> Result<Project> {
        Project::parse(text, Path::new("/p/lakewriter.toml"))
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn parses_jobs() {
        let p = parse(GOOD).unwrap();
        let job = p.job("daily_orders").unwrap();
        assert_eq!(job.target.to_string(), "analytics.daily_orders");
        assert_eq!(job.write, WriteSpec::OverwritePartition);
        assert_eq!(job.partition_by.as_deref(), Some("dt"));
        assert_eq!(job.partition_key(crate::parse_date("2026-09-30").ok()).to_string(), "dt=2026-09-30");
        assert_eq!(job.partition_key(None), crate::PartitionKey::All);
        assert_eq!(p.job("from_file").unwrap().sql, SqlSource::File("/p/jobs/other.sql".into()));
        assert_eq!(p.root_url(Path::new("/p")).unwrap().as_str(), "file:///p/lake/");
        let abs = parse(&GOOD.replace("\"lake\"", "\"/data/lake\"")).unwrap();
        assert_eq!(abs.root_url(Path::new("/p")).unwrap().as_str(), "file:///data/lake/");
        let s3 = parse(&GOOD.replace("\"lake\"", "\"s3://bucket/prefix\"")).unwrap();
        assert_eq!(s3.root_url(Path::new("/p")).unwrap().as_str(), "s3://bucket/prefix/");
    }

    #[test]
    fn unknown_job_lists_the_known_ones() {
        let e = parse(GOOD).unwrap().job("nope").unwrap_err().to_string();
        assert_eq!(e, "/p/lakewriter.toml: no job `nope`; jobs here: daily_orders, from_file");
    }

    #[test]
    fn config_errors_name_file_job_and_key() {
        let e =
            err(&GOOD.replace("write = \"overwrite_partition\"\npartition_by = \"dt\"\nsql = ", "wirte = 1\nsql = "));
        assert!(e.starts_with("/p/lakewriter.toml: job `daily_orders`:"), "{e}");
        assert!(e.contains("unknown field `wirte`"), "{e}");

        let e = err(&GOOD.replace("target = \"analytics.daily_orders\"\n", ""));
        assert!(e.contains("job `daily_orders`") && e.contains("missing field `target`"), "{e}");

        let e = err(&GOOD.replacen("\"overwrite_partition\"", "\"upsert\"", 1));
        assert!(e.contains("job `daily_orders`") && e.contains("unknown variant `upsert`"), "{e}");

        let e = err(&GOOD.replacen("partition_by = \"dt\"\n", "", 1));
        assert!(e.contains("job `daily_orders`: missing key `partition_by`"), "{e}");

        let e = err(&GOOD.replacen("\"analytics.daily_orders\"", "\"daily_orders\"", 1));
        assert!(e.contains("job `daily_orders`: key `target`: invalid table name `daily_orders`"), "{e}");

        let e = err(&GOOD.replacen("sql = \"SELECT 1 AS x, $dt AS dt\"", "", 1));
        assert!(e.contains("job `daily_orders`: missing key `sql`"), "{e}");

        let e = err(&GOOD.replacen("sql_file = \"jobs/other.sql\"", "sql_file = \"x\"\nsql = \"SELECT 1\"", 1));
        assert!(e.contains("job `from_file`: set either `sql` or `sql_file`"), "{e}");

        let e = err(&format!("colour = 1\n{GOOD}"));
        assert!(e.starts_with("/p/lakewriter.toml: ") && e.contains("unknown field `colour`"), "{e}");

        let e = err("[jobs]\n");
        assert!(e.contains("missing field `root`"), "{e}");
    }

    #[test]
    fn sources_declare_unique_keys_strictly() {
        let p = parse(&format!("{GOOD}\n[sources.\"raw.orders\"]\nunique = [\"order_id\"]\n")).unwrap();
        let orders = TableRef::parse("raw.orders").unwrap();
        assert_eq!(p.sources[&orders], SourceSpec { unique: vec!["order_id".into()] });
        assert!(parse(GOOD).unwrap().sources.is_empty());

        let source = |body: &str| err(&format!("{GOOD}\n[sources.\"raw.orders\"]\n{body}\n"));
        let e = source("unique = []");
        assert!(e.starts_with("/p/lakewriter.toml: source `raw.orders`: key `unique` is empty"), "{e}");
        let quoted = parse(&format!("{GOOD}\n[sources.\"raw.orders\"]\nunique = [\"Order Id\", 'quo\"te']\n")).unwrap();
        assert_eq!(quoted.sources[&orders].unique, ["Order Id", "quo\"te"]);
        let e = source("unique = [\"order_id\", \"\"]");
        assert!(e.contains("source `raw.orders`: key `unique`: an empty column name"), "{e}");
        let e = source("unique = [\"order_id\"]\nuniq = [\"x\"]");
        assert!(e.contains("source `raw.orders`") && e.contains("unknown field `uniq`"), "{e}");
        let e = source("");
        assert!(e.contains("source `raw.orders`") && e.contains("missing field `unique`"), "{e}");
        let e = err(&format!("{GOOD}\n[sources.orders]\nunique = [\"order_id\"]\n"));
        assert!(e.contains("source `orders`: invalid table name `orders`"), "{e}");
    }

    #[test]
    fn allow_nondeterministic_is_an_optional_bool_outside_the_fingerprint() {
        let p = parse(GOOD).unwrap();
        assert!(!p.job("daily_orders").unwrap().allow_nondeterministic);
        let allowed =
            GOOD.replacen("partition_by = \"dt\"\n", "partition_by = \"dt\"\nallow_nondeterministic = true\n", 1);
        let allowed = parse(&allowed).unwrap();
        let job = allowed.job("daily_orders").unwrap();
        assert!(job.allow_nondeterministic);
        assert_eq!(job.code_fingerprint("SELECT 1"), p.job("daily_orders").unwrap().code_fingerprint("SELECT 1"));
        let e = err(&GOOD.replacen(
            "partition_by = \"dt\"\n",
            "partition_by = \"dt\"\nallow_nondeterministic = \"yes\"\n",
            1,
        ));
        assert!(e.contains("job `daily_orders`") && e.contains("allow_nondeterministic"), "{e}");
    }

    #[test]
    fn the_code_fingerprint_covers_how_sql_is_planned() {
        let p = parse(&GOOD.replacen("root = ", "dialect = \"datafusion\"\nroot = ", 1)).unwrap(); // adds nothing
        let job = p.job("daily_orders").unwrap();
        let text = job.fingerprinted("SELECT  1.5\n");
        assert!(text.starts_with("SELECT 1.5\n"), "{text}");
        assert!(text.ends_with("\ndatafusion.sql_parser.parse_float_as_decimal=true"), "{text}");
        assert_eq!(job.code_fingerprint("SELECT  1.5\n"), crate::stable_hash(text.as_bytes()));
        for literal in ["1.5", "1e3", ".5", "2E-1"] {
            let text = job.fingerprinted(&format!("SELECT a * {literal} FROM t"));
            assert!(text.ends_with("parse_float_as_decimal=true"), "{literal}: {text}");
        }
        // SQL whose literals the settings do not decide (integers; a fraction inside a string,
        // an identifier or a comment) keeps the fingerprint it had before the settings existed.
        let sql = "SELECT 15, '1.5' AS \"x.5\", $dt -- 2.5\nFROM t";
        let settings = format!("{}|{:?}|{:?}", job.target, job.partition_by, job.write);
        let before = format!("{}\n{settings}", sql.split_whitespace().collect::<Vec<_>>().join(" "));
        assert_eq!(job.fingerprinted(sql), before);
    }

    #[test]
    fn the_dialect_is_set_for_the_project_or_a_job_and_a_spark_job_fingerprints_it_with_ansi() {
        let p = parse(GOOD).unwrap();
        let job = p.job("daily_orders").unwrap();
        assert_eq!(job.semantics, crate::Semantics::default());
        assert_eq!(p.semantics.dialect, crate::Dialect::Spark);
        assert!(job.fingerprinted("SELECT 1").ends_with("|dialect=spark,ansi=true"));
        let datafusion = parse(&GOOD.replacen("root = ", "dialect = \"datafusion\"\nroot = ", 1)).unwrap();
        let datafusion = datafusion.job("daily_orders").unwrap().code_fingerprint("SELECT 1");
        assert_ne!(datafusion, job.code_fingerprint("SELECT 1"));
        let spark = parse(&GOOD.replacen("root = ", "dialect = \"spark\"\nansi = false\nroot = ", 1)).unwrap();
        let spark_job = spark.job("daily_orders").unwrap();
        assert_eq!(
            spark_job.semantics,
            crate::Semantics { dialect: crate::Dialect::Spark, ansi: false, ..crate::Semantics::default() }
        );
        let text = spark_job.fingerprinted("SELECT 1");
        assert!(text.ends_with("|dialect=spark,ansi=false"), "{text}");
        assert_ne!(spark_job.code_fingerprint("SELECT 1"), job.code_fingerprint("SELECT 1"));
        let ansi = parse(&GOOD.replacen("root = ", "dialect = \"spark\"\nroot = ", 1)).unwrap();
        let ansi_job = ansi.job("daily_orders").unwrap();
        assert_eq!(ansi_job.code_fingerprint("SELECT 1"), job.code_fingerprint("SELECT 1"));
        assert_ne!(ansi_job.code_fingerprint("SELECT 1"), spark_job.code_fingerprint("SELECT 1"));
        // A job's own dialect wins over the project's; DataFusion's keeps the fingerprint it had.
        let own = GOOD.replacen("partition_by = \"dt\"\n", "partition_by = \"dt\"\ndialect = \"datafusion\"\n", 1);
        let own = parse(&own.replacen("root = ", "dialect = \"spark\"\nroot = ", 1)).unwrap();
        assert_eq!(own.job("daily_orders").unwrap().code_fingerprint("SELECT 1"), datafusion);
        let e = err(&GOOD.replacen("root = ", "dialect = \"hive\"\nroot = ", 1));
        assert!(e.contains("unknown variant `hive`, expected `datafusion` or `spark`"), "{e}");
    }

    #[test]
    fn the_session_time_zone_is_an_iana_zone_and_a_spark_job_fingerprints_it_where_it_is_not_utc() {
        let utc = parse(GOOD).unwrap();
        let utc_job = utc.job("daily_orders").unwrap();
        assert_eq!(utc_job.semantics.time_zone, crate::TimeZone::UTC);
        let named_utc = parse(&GOOD.replacen("root = ", "time_zone = \"UTC\"\nroot = ", 1)).unwrap();
        assert_eq!(
            named_utc.job("daily_orders").unwrap().code_fingerprint("SELECT 1"),
            utc_job.code_fingerprint("SELECT 1")
        );
        let paris = parse(&GOOD.replacen("root = ", "time_zone = \"Europe/Paris\"\nroot = ", 1)).unwrap();
        let paris_job = paris.job("daily_orders").unwrap();
        assert_eq!(paris_job.semantics.time_zone.name(), "Europe/Paris");
        let text = paris_job.fingerprinted("SELECT 1");
        assert!(text.ends_with("|dialect=spark,ansi=true,time_zone=Europe/Paris"), "{text}");
        assert_ne!(paris_job.code_fingerprint("SELECT 1"), utc_job.code_fingerprint("SELECT 1"));
        let e = err(&GOOD.replacen("root = ", "time_zone = \"Mars/Olympus\"\nroot = ", 1));
        assert!(e.contains("`time_zone`: `Mars/Olympus` is not a time zone"), "{e}");
    }

    #[test]
    fn not_null_names_columns_strictly_outside_the_fingerprint() {
        let p = parse(GOOD).unwrap();
        assert!(p.job("daily_orders").unwrap().not_null.is_empty());
        let declared = |value: &str| {
            GOOD.replacen("partition_by = \"dt\"\n", &format!("partition_by = \"dt\"\nnot_null = {value}\n"), 1)
        };
        let strict = parse(&declared("[\"x\", \"dt\"]")).unwrap();
        let job = strict.job("daily_orders").unwrap();
        assert_eq!(job.not_null, ["x", "dt"]);
        assert_eq!(job.code_fingerprint("SELECT 1"), p.job("daily_orders").unwrap().code_fingerprint("SELECT 1"));
        assert_eq!(
            err(&declared("[\"\"]")),
            "/p/lakewriter.toml: job `daily_orders`: key `not_null`: an empty column name"
        );
        assert_eq!(
            err(&declared("[\"x\", \"x\"]")),
            "/p/lakewriter.toml: job `daily_orders`: key `not_null`: `x` is named twice"
        );
        let e = err(&declared("\"x\""));
        assert!(e.starts_with("/p/lakewriter.toml: job `daily_orders`: ") && e.contains("not_null"), "{e}");
    }
}

mod write_modes {
    use super::*;

    fn job(body: &str) -> Result<JobSpec> {
        let text = format!("root = \"lake\"\n[jobs.j]\ntarget = \"s.t\"\nsql = \"SELECT 1\"\n{body}");
        Project::parse(&text, Path::new("p.toml")).map(|p| p.jobs["j"].clone())
    }

    fn err(body: &str) -> String {
        job(body).unwrap_err().to_string()
    }

    #[test]
    fn on_schema_change_takes_dbts_names_defaults_to_fail_and_stays_outside_the_fingerprint() {
        let default = job("write = \"append\"").unwrap();
        assert_eq!(default.on_schema_change, OnSchemaChange::Fail);
        for (value, policy) in [
            ("fail", OnSchemaChange::Fail),
            ("append_new_columns", OnSchemaChange::AppendNewColumns),
            ("ignore", OnSchemaChange::Ignore),
            ("sync_all_columns", OnSchemaChange::SyncAllColumns),
        ] {
            let job = job(&format!("write = \"append\"\non_schema_change = \"{value}\"")).unwrap();
            assert_eq!((job.on_schema_change, job.on_schema_change.as_str()), (policy, value));
            assert_eq!(job.code_fingerprint("SELECT 1"), default.code_fingerprint("SELECT 1"));
        }
        let e = err("write = \"append\"\non_schema_change = \"merge\"");
        assert!(e.starts_with("p.toml: job `j`: unknown variant `merge`, expected one of `fail`"), "{e}");
        // A rebuild replaces the columns on every run: it takes sync_all_columns or nothing.
        let rebuild = |value: &str| job(&format!("write = \"rebuild\"\non_schema_change = \"{value}\""));
        assert_eq!(rebuild("sync_all_columns").unwrap().on_schema_change, OnSchemaChange::SyncAllColumns);
        assert_eq!(
            rebuild("ignore").unwrap_err().to_string(),
            "p.toml: job `j`: key `on_schema_change`: \"ignore\" does not apply to write = \"rebuild\", which replaces the table's columns with its result's on every run (a full refresh); leave the key out, or set \"sync_all_columns\""
        );
        assert!(rebuild("append_new_columns").is_err());
        // A job written as a statement takes every policy: an INSERT's columns beyond the
        // table's, a MERGE's assignments to columns the table lacks are its new columns.
        let statement = |value: &str| job(&format!("on_schema_change = \"{value}\""));
        assert_eq!(statement("append_new_columns").unwrap().on_schema_change, OnSchemaChange::AppendNewColumns);
        assert_eq!(statement("ignore").unwrap().on_schema_change, OnSchemaChange::Ignore);
    }

    #[test]
    fn dedup_window_is_a_number_of_days_over_a_named_column_or_the_partition_column() {
        let dedup = |extra: &str| job(&format!("write = \"append_dedup\"\nkey = [\"id\"]\n{extra}"));
        let window = |job: JobSpec| match job.write {
            WriteSpec::AppendDedup { window, .. } => window.map(|w| (w.days, w.column)),
            other => panic!("{other:?}"),
        };
        let partitioned = "partition_by = \"dt\"\n";
        for (text, days) in [("7 days", 7), ("1 day", 1), ("7d", 7), ("2w", 14)] {
            let job = dedup(&format!("{partitioned}dedup_window = \"{text}\"")).unwrap();
            assert_eq!(window(job), Some((days, "dt".to_owned())), "{text}");
        }
        let named =
            dedup(&format!("{partitioned}dedup_window = \"3 days\"\ndedup_window_column = \"seen_at\"")).unwrap();
        assert_eq!(window(named), Some((3, "seen_at".to_owned())));
        assert_eq!(window(dedup(partitioned).unwrap()), None);
        for (extra, expected) in [
            ("dedup_window = \"7 days\"", "name the date column it counts days in"),
            ("partition_by = \"dt\"\ndedup_window = \"0 days\"", "`0 days` is not a number of days"),
            ("partition_by = \"dt\"\ndedup_window = \"36h\"", "`36h` is not a number of days"),
            ("partition_by = \"dt\"\ndedup_window = \"a week\"", "`a week` is not a number of days"),
            ("partition_by = \"dt\"\ndedup_window_column = \"dt\"", "`dedup_window_column` needs `dedup_window`"),
        ] {
            let e = dedup(extra).unwrap_err().to_string();
            assert!(e.contains(expected), "{extra}: {e}");
        }
        let e = err("write = \"merge\"\nkey = [\"id\"]\nnewer_by = \"v\"\ndedup_window = \"7 days\"");
        assert!(e.contains("key `dedup_window` does not apply to write = \"merge\""), "{e}");
        // A window is part of the code; no window keeps the fingerprint append_dedup had before.
        let plain = dedup(partitioned).unwrap();
        assert_eq!(
            plain.fingerprinted("SELECT 1").lines().nth(1),
            Some("s.t|Some(\"dt\")|AppendDedup { key: [\"id\"] }|dialect=spark,ansi=true")
        );
        let windowed = dedup(&format!("{partitioned}dedup_window = \"7 days\"")).unwrap();
        assert_ne!(windowed.code_fingerprint("SELECT 1"), plain.code_fingerprint("SELECT 1"));
    }

    #[test]
    fn cluster_by_names_distinct_columns_of_a_keyed_write_and_leaves_the_fingerprint_alone() {
        let merge = |extra: &str| job(&format!("write = \"merge\"\nkey = [\"id\"]\nnewer_by = \"v\"\n{extra}"));
        let clustered = merge("cluster_by = [\"id\", \"region\"]").unwrap();
        assert_eq!(clustered.cluster_by, ["id", "region"]);
        assert!(merge("").unwrap().cluster_by.is_empty());
        // The layout changes no row: the code fingerprint is the unclustered job's.
        assert_eq!(clustered.code_fingerprint("SELECT 1"), merge("").unwrap().code_fingerprint("SELECT 1"));
        let dedup = job("write = \"append_dedup\"\nkey = [\"id\"]\ncluster_by = [\"id\"]").unwrap();
        assert_eq!(dedup.cluster_by, ["id"]);
        for (extra, expected) in [
            ("cluster_by = []", "key `cluster_by` is empty"),
            ("cluster_by = [\"\"]", "key `cluster_by`: an empty column name"),
            ("cluster_by = [\"id\", \"id\"]", "key `cluster_by`: `id` is named twice"),
            ("partition_by = \"dt\"\ncluster_by = [\"dt\"]", "`dt` is the partition column"),
        ] {
            let e = merge(extra).unwrap_err().to_string();
            assert!(e.contains(expected), "{extra}: {e}");
        }
        let sized = merge("cluster_by = [\"id\"]\ntarget_file_size = \"16 MiB\"").unwrap();
        assert_eq!(sized.target_file_size, Some(16 << 20));
        assert_eq!(sized.code_fingerprint("SELECT 1"), merge("").unwrap().code_fingerprint("SELECT 1"));
        let e = merge("target_file_size = \"0\"").unwrap_err().to_string();
        assert!(e.contains("key `target_file_size`: invalid size `0`: it must be more than 0 bytes"), "{e}");
        let e = err("write = \"append\"\ncluster_by = [\"id\"]");
        assert!(e.contains("key `cluster_by` does not apply to write = \"append\""), "{e}");
    }

    #[test]
    fn every_mode_parses_with_its_settings() {
        let merge =
            job("write = \"merge\"\nkey = [\"id\"]\nnewer_by = \"updated_at\"\ndelete_when = \"op = 'd'\"").unwrap();
        assert_eq!(
            merge.write,
            WriteSpec::Merge {
                key: vec!["id".into()],
                newer_by: "updated_at".into(),
                on_duplicate_keys: OnDuplicateKeys::KeepNewest,
                delete_when: Some("op = 'd'".into())
            }
        );
        let strict =
            job("write = \"merge\"\nkey = [\"a\", \"b\"]\nnewer_by = \"v\"\non_duplicate_keys = \"error\"").unwrap();
        assert!(matches!(strict.write, WriteSpec::Merge { on_duplicate_keys: OnDuplicateKeys::Error, .. }));
        assert_eq!(
            job("write = \"delete_insert\"\npredicate = \"d = $dt\"").unwrap().write,
            WriteSpec::DeleteInsert { predicate: "d = $dt".into() }
        );
        assert_eq!(
            job("write = \"append_dedup\"\nkey = [\"id\"]").unwrap().write,
            WriteSpec::AppendDedup { key: vec!["id".into()], window: None }
        );
        assert_eq!(job("write = \"append\"").unwrap().write, WriteSpec::Append);
        let rebuild = job("write = \"rebuild\"").unwrap();
        assert_eq!(rebuild.write, WriteSpec::Rebuild);
    }

    /// A column SQL names only in quotes — a capital, a space, a quote, a dot, any letter — is a
    /// key, a version, a partition and a check column like any other; only an empty name is not.
    #[test]
    fn any_column_name_but_an_empty_one_is_a_key_version_partition_or_check_column() {
        let names = ["Tier", "Name With Space", "quo\"te", "Ünïcode", "a.b"];
        let list =
            |names: &[&str]| format!("[{}]", names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", "));
        let body = format!(
            "write = \"merge\"\nkey = {}\nnewer_by = 'Updated At'\npartition_by = 'Order Day'\n\
             [jobs.j.checks]\nnot_null = {}\nunique = [{}]\naccepted_values = {{ 'Ünïcode' = ['x'] }}\n",
            list(&names[..3]),
            list(&names),
            list(&names[3..]),
        );
        let merge = job(&body).unwrap();
        let key: Vec<String> = names[..3].iter().map(|&n| n.to_owned()).collect();
        assert!(
            matches!(&merge.write, WriteSpec::Merge { key: k, newer_by, .. } if *k == key && newer_by == "Updated At")
        );
        assert_eq!(merge.partition_by.as_deref(), Some("Order Day"));
        let checks: Vec<String> = merge.checks.checks.iter().map(crate::Check::name).collect();
        assert!(
            checks.contains(&"not_null(quo\"te)".to_owned()) && checks.contains(&"unique(Ünïcode, a.b)".to_owned()),
            "{checks:?}"
        );
        assert!(checks.contains(&"accepted_values(Ünïcode)".to_owned()), "{checks:?}");
        for (body, expected) in [
            ("write = \"merge\"\nkey = ['']\nnewer_by = 'v'", "job `j`: key `key`: an empty column name"),
            ("write = \"merge\"\nkey = ['k']\nnewer_by = ''", "job `j`: key `newer_by` is empty: name a column"),
            ("write = \"append\"\npartition_by = ''", "job `j`: key `partition_by` is empty: name a column"),
            ("write = \"append\"\n[jobs.j.checks]\nnot_null = ['']", "job `j`: checks.not_null: an empty column name"),
            (
                "write = \"append\"\n[jobs.j.checks]\nunique = [['a', '']]",
                "job `j`: checks.unique: an empty column name",
            ),
        ] {
            assert!(err(body).contains(expected), "{body}: {}", err(body));
        }
    }

    #[test]
    fn mode_settings_are_checked() {
        assert!(
            err("write = \"merge\"\nnewer_by = \"v\"")
                .contains("job `j`: missing key `key` (required by write = \"merge\")")
        );
        assert!(err("write = \"merge\"\nkey = [\"id\"]").contains("missing key `newer_by`"));
        assert!(err("write = \"merge\"\nkey = []\nnewer_by = \"v\"").contains("key `key` is empty"));
        assert!(err("write = \"merge\"\nkey = [\"id\"]\nnewer_by = \"id\"").contains("is part of the key"));
        assert!(
            err("write = \"merge\"\nkey = [\"id\"]\nnewer_by = \"v\"\non_duplicate_keys = \"ignore\"")
                .contains("unknown variant `ignore`")
        );
        assert!(err("write = \"append\"\nkey = [\"id\"]").contains("key `key` does not apply to write = \"append\""));
        assert!(
            err("write = \"rebuild\"\npredicate = \"x\"")
                .contains("key `predicate` does not apply to write = \"rebuild\"")
        );
        assert!(err("write = \"delete_insert\"").contains("missing key `predicate`"));
        assert!(
            err("write = \"append_dedup\"\nkey = [\"a\", \"\"]").contains("job `j`: key `key`: an empty column name")
        );
    }
}
