use super::*;

#[test]
fn a_parent_id_is_namespace_name_and_a_uuid_run_id() {
    let parent: ParentRun = "airflow://prod/dag.task/01890f0b-5c1d-7cc6-b5a4-3f3c1c5b0e0a".parse().expect("parent");
    assert_eq!(
        (parent.namespace.as_str(), parent.name.as_str(), parent.run_id.as_str()),
        ("airflow://prod", "dag.task", "01890f0b-5c1d-7cc6-b5a4-3f3c1c5b0e0a")
    );
    assert!("ns/job".parse::<ParentRun>().is_err());
    assert!("ns/job/not-a-uuid".parse::<ParentRun>().unwrap_err().contains("not a UUID"));
    assert!("/job/01890f0b-5c1d-7cc6-b5a4-3f3c1c5b0e0a".parse::<ParentRun>().is_err());
}

#[test]
fn datasets_are_named_as_the_naming_convention_says() {
    let local = OutputDataset::at(&url::Url::parse("file:///lake/analytics/daily/").expect("url"));
    assert_eq!((local.namespace.as_str(), local.name.as_str()), ("file", "/lake/analytics/daily"));
    let s3 = InputDataset::at(&url::Url::parse("s3://bucket/lake/analytics/daily/").expect("url"));
    assert_eq!((s3.namespace.as_str(), s3.name.as_str()), ("s3://bucket", "lake/analytics/daily"));
    assert_eq!(s3.facets.data_source.fields.uri, "s3://bucket/lake/analytics/daily");
}

/// An event with every part it can hold: a failed run's end, dated, under a parent, reading a
/// Delta table, its target committed.
fn every_part() -> RunEvent {
    let parent: ParentRun = "airflow/dag.task/01890f0b-5c1d-7cc6-b5a4-3f3c1c5b0e0a".parse().expect("parent");
    let mut input =
        Input { url: url::Url::parse("s3://bucket/up/").expect("url"), version: Some(3), files: 2, bytes: 9 }.dataset();
    input.facets.schema = Some(Schema { fields: vec![SchemaField { name: "a".into(), kind: "long".into() }] }.into());
    let mut output = OutputDataset::at(&url::Url::parse("file:///lake/t/").expect("url"));
    output.facets.version = Some(version(4));
    let statistics = OutputStatistics { file_count: Some(1), row_count: Some(2), size: Some(3) };
    output.output_facets = Some(OutputFacets { output_statistics: Some(statistics.into()) });
    let facets = RunFacets {
        error_message: Some(ErrorMessage::new("failed".into()).into()),
        lakewriter: Some(
            LakewriterRun {
                committed: false,
                duration_ms: 5,
                partition: "dt=2026-09-30".into(),
                retries: 1,
                status: RunStatus::Failed,
                write: Some("merge".into()),
            }
            .into(),
        ),
        nominal_time: Some(nominal_time(NaiveDate::from_ymd_opt(2026, 9, 30).expect("date"))),
        parent: Some(parent.facet(&parent)),
        processing_engine: ProcessingEngine::LAKEWRITER.into(),
    };
    let job = Job {
        facets: JobFacets { job_type: JobType::LAKEWRITER.into(), sql: Sql { query: "SELECT 1".into() }.into() },
        name: "daily".into(),
        namespace: "default".into(),
    };
    let run = Run { facets, run_id: "01890f0b-5c1d-7cc6-b5a4-3f3c1c5b0e0b".into() };
    RunEvent::new("2026-09-30T00:00:00.000Z".into(), EventType::Fail, run, job, vec![input], vec![output])
}

#[test]
fn an_event_is_written_with_its_keys_sorted_at_every_level() {
    let event = every_part();
    let written = serde_json::to_string(&event).expect("JSON");
    // A `serde_json::Value` holds an object's keys sorted.
    let sorted = serde_json::to_value(&event).expect("JSON").to_string();
    assert_eq!(written, sorted);
    for key in ["errorMessage", "lakewriter", "nominalTime", "parent", "inputFacets", "outputStatistics", "schema"] {
        assert!(written.contains(&format!("\"{key}\":{{\"")), "{key} in {written}");
    }
}

#[test]
fn absent_parts_are_left_out_not_null() {
    let mut event = every_part();
    event.run.facets =
        RunFacets { error_message: None, lakewriter: None, nominal_time: None, parent: None, ..event.run.facets };
    event.inputs[0].input_facets = None;
    event.outputs[0].output_facets = Some(OutputFacets { output_statistics: None });
    let written = serde_json::to_value(&event).expect("JSON");
    assert_eq!(
        written["run"]["facets"].as_object().map(|f| f.keys().map(String::as_str).collect::<Vec<_>>()),
        Some(vec!["processing_engine"])
    );
    assert!(written["inputs"][0].get("inputFacets").is_none());
    assert_eq!(written["outputs"][0]["outputFacets"], serde_json::json!({}));
    let statistics = OutputStatistics { file_count: None, row_count: Some(2), size: None };
    let written = serde_json::to_value(Facet::from(statistics)).expect("JSON");
    assert_eq!(
        written.as_object().map(|f| f.keys().map(String::as_str).collect::<Vec<_>>()),
        Some(vec!["_producer", "_schemaURL", "rowCount"])
    );
}

#[test]
fn credentials_in_the_url_are_basic_authentication_decoded_and_leave_the_url() {
    let transport = Transport::http("http://us%40er:p%20w@host:8080/lineage", None).expect("http");
    let Transport::Http { url, auth } = transport else { panic!("http") };
    assert_eq!(url.as_str(), "http://host:8080/lineage");
    assert_eq!(auth, Auth::Basic { user: "us@er".to_owned(), password: "p w".to_owned() });
    assert_eq!(format!("{auth:?}"), "Basic(…)", "Debug shows no secret");
    let Transport::Http { auth, .. } = Transport::http("https://host/", Some("k".into())).expect("http") else {
        panic!("http")
    };
    assert_eq!((auth.clone(), format!("{auth:?}")), (Auth::Bearer("k".into()), "Bearer(…)".to_owned()));
}

#[test]
fn credentials_in_the_url_and_an_api_key_are_refused_naming_neither() {
    let error = Transport::http("http://someone:pw-secret@host/", Some("key-secret".into())).expect_err("both");
    let text = error.to_string();
    assert!(error.is_usage() && text.contains("OPENLINEAGE_API_KEY"), "{text}");
    assert!(!text.contains("secret") && !text.contains("someone"), "{text}");
}
