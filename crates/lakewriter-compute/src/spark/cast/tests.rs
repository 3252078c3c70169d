use super::{java_double, java_float};

#[test]
fn decimals_are_written_as_java_writes_them() {
    assert_eq!(super::java_decimal(-1, 18), "-1E-18");
    assert_eq!(super::java_decimal(0, 18), "0E-18");
    assert_eq!(super::java_decimal(725, 2), "7.25");
    assert_eq!(super::java_decimal(1_234, 9), "0.000001234");
    assert_eq!(super::java_decimal(12, 9), "1.2E-8");
    assert_eq!(super::decimal_text(-5, 3), "-0.005");
}

#[test]
fn doubles_and_floats_are_written_as_java_writes_them() {
    let cases = [(1e10, "1.0E10"), (1e-7, "1.0E-7"), (1e7, "1.0E7"), (0.0001, "1.0E-4"), (1e300, "1.0E300")];
    for (value, text) in cases {
        assert_eq!(java_double(value), text);
    }
    let cases = [(9_999_999.0, "9999999.0"), (0.001, "0.001"), (1_234_567.0, "1234567.0"), (100.0, "100.0")];
    for (value, text) in cases {
        assert_eq!(java_double(value), text);
    }
    assert_eq!(java_double(-0.0), "-0.0");
    assert_eq!(java_double(0.285), "0.285");
    assert_eq!(java_double(5e-324), "4.9E-324");
    assert_eq!(java_double(f64::MAX), "1.7976931348623157E308");
    assert_eq!(java_double(f64::NEG_INFINITY), "-Infinity");
    assert_eq!(java_float(16_777_216.0), "1.6777216E7");
    assert_eq!(java_float(9.223_372e18), "9.223372E18");
}
