use datafusion::common::ScalarValue;
use lakewriter_delta::ranges::{Range, order};

use super::scope::{MAX_RANGES, around, touched};

fn int(v: i64) -> ScalarValue {
    ScalarValue::Int64(Some(v))
}

#[test]
fn the_days_around_the_values_held_are_ranges_joined_where_they_overlap_or_touch() {
    assert_eq!(around(&[], 2), vec![]);
    assert_eq!(around(&[10], 2), vec![(8, 12)]);
    // 10 and 14: [8, 12] and [12, 16] overlap; 20's [18, 22] leaves 17 out: apart.
    assert_eq!(around(&[10, 14, 20], 2), vec![(8, 16), (18, 22)]);
    assert_eq!(around(&[10, 15], 2), vec![(8, 17)]);
    assert_eq!(around(&[10, 16], 2), vec![(8, 12), (14, 18)]);
    // 200 days far apart are named by 64 ranges at most, which cover every one of them.
    let days: Vec<i32> = (0..200).map(|i| i * 100).collect();
    let ranges = around(&days, 3);
    assert!(ranges.len() <= MAX_RANGES, "{}", ranges.len());
    assert!(days.iter().all(|d| ranges.iter().any(|(a, b)| a <= &(d - 3) && &(d + 3) <= b)));
}

#[test]
fn the_touched_ranges_are_those_holding_a_key_joined_where_they_overlap() {
    let ranges = |pairs: &[(i64, i64)]| pairs.iter().map(|&(a, b)| (int(a), int(b))).collect::<Vec<_>>();
    let files = ranges(&[(50, 59), (0, 9), (10, 19), (15, 25), (30, 39), (40, 49)]);
    let keys: Vec<ScalarValue> = [12, 31, 39, 60].into_iter().map(int).collect();
    // 12 is in [10, 19] and nowhere else, but [15, 25] overlaps it and is not touched: only
    // ranges that hold a key count; 31 and 39 are in [30, 39]; 60 is in no file.
    assert_eq!(touched(files.clone(), &keys), ranges(&[(10, 19), (30, 39)]));
    // 18 is in both overlapping files: they are joined into one range.
    let keys: Vec<ScalarValue> = [18, 59].into_iter().map(int).collect();
    assert_eq!(touched(files.clone(), &keys), ranges(&[(10, 25), (50, 59)]));
    assert_eq!(touched(files, &[]), ranges(&[]));
    // Bounds are inclusive.
    assert_eq!(touched(ranges(&[(1, 5)]), &[int(5)]), ranges(&[(1, 5)]));
    assert_eq!(touched(ranges(&[(1, 5)]), &[int(0), int(6)]), ranges(&[]));
    // 200 touched files apart are named by 64 ranges at most, which cover every one of them.
    let files: Vec<Range> = (0..200).map(|i| (int(i * 10), int(i * 10 + 5))).collect();
    let keys: Vec<ScalarValue> = (0..200).map(|i| int(i * 10 + 1)).collect();
    let scope = touched(files.clone(), &keys);
    assert!(scope.len() <= MAX_RANGES, "{}", scope.len());
    let covered = |k: &ScalarValue| scope.iter().any(|(a, b)| order(a, k).is_le() && order(k, b).is_le());
    assert!(files.iter().all(|(min, max)| covered(min) && covered(max)));
}
