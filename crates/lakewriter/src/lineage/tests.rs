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
    let local = dataset(&url::Url::parse("file:///lake/analytics/daily/").expect("url"), json!({}));
    assert_eq!((&local["namespace"], &local["name"]), (&json!("file"), &json!("/lake/analytics/daily")));
    let s3 = dataset(&url::Url::parse("s3://bucket/lake/analytics/daily/").expect("url"), json!({}));
    assert_eq!((&s3["namespace"], &s3["name"]), (&json!("s3://bucket"), &json!("lake/analytics/daily")));
    assert_eq!(s3["facets"]["dataSource"]["uri"], json!("s3://bucket/lake/analytics/daily"));
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
