//! Freshness and `--only` on partition states made by hand.

use super::*;
use lakewriter_delta::state::Recorded;

fn recorded(code: &str, inputs: &str) -> Recorded {
    Recorded {
        code: lakewriter_delta::state::fingerprint_version(code),
        inputs: lakewriter_delta::state::fingerprint_version(inputs),
        columns: None,
        unwritten: Vec::new(),
        written_at: None,
        version: Some(3),
        rows: Some(10),
        run_id: None,
        duration_ms: None,
    }
}

#[test]
fn freshness_compares_code_and_inputs_separately() {
    let (code, inputs) = ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    let other = "cccccccccccccccccccccccccccccccc";
    let r = recorded(code, inputs);
    let status = |rec, c, i| PartitionStatus::of(PartitionKey::All, None, rec, c, Some(i), 1);
    assert_eq!(status(Some(&r), code, inputs).label(), "fresh");
    assert_eq!(status(Some(&r), code, other).label(), "stale: inputs changed");
    assert_eq!(status(Some(&r), other, inputs).label(), "stale: code changed");
    assert_eq!(status(Some(&r), other, other).label(), "stale: inputs changed, code changed");
    assert_eq!(status(None, code, inputs).label(), "missing");
    assert_eq!(status(Some(&r), code, inputs).version, Some(3));
    let unreadable = PartitionStatus::of(PartitionKey::All, None, Some(&r), code, None, 0);
    assert_eq!(unreadable.label(), "stale: inputs unreadable");
    assert_eq!(PartitionStatus::of(PartitionKey::All, None, None, code, None, 0).label(), "missing");
}

#[test]
fn only_selects_partitions_by_state() {
    let (code, inputs) = ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    let r = recorded(code, inputs);
    let fresh = PartitionStatus::of(PartitionKey::All, None, Some(&r), code, Some(inputs), 1);
    let stale = PartitionStatus::of(PartitionKey::All, None, Some(&r), code, Some("c"), 1);
    let missing = PartitionStatus::of(PartitionKey::All, None, None, code, Some(inputs), 1);
    let picks = |only: Only| [&fresh, &stale, &missing].map(|s| only.selects(s));
    assert_eq!(picks(Only::All), [true, true, true]);
    assert_eq!(picks(Only::Stale), [false, true, true]);
    assert_eq!(picks(Only::Missing), [false, false, true]);
}
