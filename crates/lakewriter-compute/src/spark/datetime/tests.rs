use super::Pattern;

#[test]
fn java_patterns_write_as_spark_writes_them() {
    let t = chrono::NaiveDate::from_ymd_opt(2026, 3, 8).unwrap().and_hms_micro_opt(7, 15, 30, 123_456).unwrap();
    let formatted = |p: &str| Pattern::parse(p).expect("a pattern").format(&t, Some(chrono::Duration::zero()));
    assert_eq!(formatted("yyyy-MM-dd HH:mm:ss"), "2026-03-08 07:15:30");
    assert_eq!(formatted("EEE, MMM d, yyyy"), "Sun, Mar 8, 2026");
    assert_eq!(formatted("HH:mm:ss.SSS"), "07:15:30.123");
    assert_eq!(formatted("hh:mm a 'Q'Q D"), "07:15 AM Q1 67");
    assert_eq!(formatted("EEEE MMMM yy"), "Sunday March 26");
}
