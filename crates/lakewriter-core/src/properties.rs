//! Properties of dates, date ranges and partition keys, over generated values: what is printed
//! parses back, anything else is refused with an error that names the value, and ranges hold
//! their days in order, once each.

use chrono::{Datelike, NaiveDate};
use proptest::prelude::*;

use crate::{DateRange, Error, PartitionKey, parse_date};

/// Any date with a four-digit year, as `YYYY-MM-DD` writes them.
fn date() -> impl Strategy<Value = NaiveDate> {
    let first = NaiveDate::from_ymd_opt(0, 1, 1).expect("date");
    let last = NaiveDate::from_ymd_opt(9999, 12, 31).expect("date");
    (0..=(last - first).num_days()).prop_map(move |days| first + chrono::Days::new(days.unsigned_abs()))
}

/// Text that tries to pass for a date: a date with something before or after it (quotes, SQL,
/// paths, white space, other separators), or a date's characters rearranged.
fn injection_like() -> impl Strategy<Value = String> {
    let affix = prop_oneof![
        Just("' OR '1'='1".to_owned()),
        Just("; DROP TABLE t; --".to_owned()),
        Just("/../../etc".to_owned()),
        Just("'".to_owned()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("\0".to_owned()),
        Just("T00:00:00".to_owned()),
        "[ -~]{1,6}",
    ];
    prop_oneof![
        (date(), affix.clone()).prop_map(|(d, a)| format!("{d}{a}")),
        (affix, date()).prop_map(|(a, d)| format!("{a}{d}")),
        date().prop_map(|d| d.format("%Y/%m/%d").to_string()),
        date().prop_filter("a one-digit month or day", |d| d.month() < 10 || d.day() < 10).prop_map(unpadded),
    ]
}

/// `d` as `Y-M-D` without leading zeros.
fn unpadded(d: NaiveDate) -> String {
    format!("{}-{}-{}", d.year(), d.month(), d.day())
}

fn names_value(error: &Error, value: &str) -> bool {
    error.to_string().contains(&format!("`{value}`"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_printed_date_parses_back(d in date()) {
        prop_assert_eq!(parse_date(&d.to_string())?, d);
    }

    #[test]
    fn any_text_is_a_canonical_date_or_an_error_naming_it(text in any::<String>()) {
        match parse_date(&text) {
            Ok(d) => prop_assert_eq!(d.to_string(), text),
            Err(e) => prop_assert!(names_value(&e, &text), "{e}"),
        }
    }

    #[test]
    fn injection_like_text_is_refused_naming_it(text in injection_like()) {
        let error = parse_date(&text).expect_err("not a date");
        prop_assert!(matches!(error, Error::InvalidDate { .. }) && names_value(&error, &text), "{error}");
        let key = format!("dt={text}");
        match key.parse::<PartitionKey>() {
            // A column's name may hold `=`: `dt==2024-09-01` is the day 2024-09-01 of the column
            // `dt=`, and names nothing but what it says.
            Ok(parsed) => prop_assert_eq!(parsed.to_string(), key),
            Err(error) => prop_assert!(names_value(&error, &key), "{error}"),
        }
    }

    #[test]
    fn a_range_holds_its_days_in_order_once_each(from in date(), length in 0_u64..3_000, shards in 1_u32..8) {
        let to = from.checked_add_days(chrono::Days::new(length)).filter(|d| d.year() <= 9999);
        prop_assume!(to.is_some());
        let to = to.expect("checked");
        let range = DateRange::new(from, to)?;
        let days: Vec<NaiveDate> = range.days().collect();
        prop_assert_eq!(range.len(), usize::try_from(length).expect("small") + 1);
        prop_assert_eq!(days.len(), range.len());
        prop_assert_eq!((days.first(), days.last()), (Some(&from), Some(&to)));
        prop_assert!(days.windows(2).all(|w| w[0].succ_opt() == Some(w[1])), "consecutive days");
        let mut sharded: Vec<NaiveDate> = (0..shards).flat_map(|i| range.shard(i, shards)).collect();
        sharded.sort();
        prop_assert_eq!(sharded, days, "the shards cover the range once");
    }

    #[test]
    fn a_range_is_refused_backwards_or_over_a_hundred_years(from in date(), to in date()) {
        let days = (to - from).num_days() + 1;
        match DateRange::new(from, to) {
            Ok(range) => prop_assert!(from <= to && range.len() <= DateRange::MAX_DAYS),
            Err(Error::InvalidRange { from: f, to: t }) => {
                prop_assert!(from > to && f == from.to_string() && t == to.to_string());
            }
            Err(Error::RangeTooLong { from: f, to: t, days: n, max }) => {
                prop_assert!(usize::try_from(days).is_ok_and(|d| d == n && d > max && max == DateRange::MAX_DAYS));
                prop_assert!(f == from.to_string() && t == to.to_string());
            }
            Err(other) => prop_assert!(false, "unexpected {other}"),
        }
    }

    #[test]
    fn a_partition_key_prints_and_parses_back(column in "[A-Za-z_][A-Za-z0-9_]{0,12}|[^=]{1,12}", d in proptest::option::of(date())) {
        let key = PartitionKey::of(Some(&column), d);
        let text = key.to_string();
        // Keys compare by their day alone: the text tells their columns apart.
        prop_assert_eq!(text.parse::<PartitionKey>()?.to_string(), text.clone());
        let json = serde_json::to_string(&key).expect("JSON");
        prop_assert_eq!(serde_json::from_str::<PartitionKey>(&json).expect("JSON").to_string(), text);
    }

    #[test]
    fn any_text_is_a_partition_key_printed_as_it_is_or_an_error_naming_it(text in any::<String>()) {
        match text.parse::<PartitionKey>() {
            Ok(key) => prop_assert_eq!(key.to_string(), text),
            Err(e) => prop_assert!(names_value(&e, &text), "{e}"),
        }
    }
}
