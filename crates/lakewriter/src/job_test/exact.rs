//! Values as text, and numbers as exact decimals: a value's text in one spelling, so that `15.5`,
//! `15.50` and `1.55e1` are one number and `15.5049` is not `15.50`. Expected values are compared
//! this way, never rounded to the table's type first, and a given value is cast to its `schema`
//! type only where the type holds it exactly ([`cast`]; [`STRICT`], the casts that fail rather
//! than make a value NULL). The layer under the fixtures and their CSV files.

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

/// Casts that fail on a value that does not fit, instead of making it NULL.
pub(super) const STRICT: CastOptions<'static> = CastOptions { safe: false, format_options: FormatOptions::new() };

/// The greatest power of ten a number's text may carry: far beyond any Arrow type's range.
const MAX_EXPONENT: i64 = 10_000;

/// `text` as an exact decimal number in one spelling — no `+`, no exponent, no leading or
/// trailing zeros, `0` for zero of either sign —, or `None` where it is not a finite number.
pub(super) fn canonical(text: &str) -> Option<String> {
    let text = text.trim();
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], unsigned[at + 1..].parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    if !(-MAX_EXPONENT..=MAX_EXPONENT).contains(&exponent) {
        return None;
    }
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    // The digits, and where the point falls among them.
    let digits = format!("{whole}{fraction}");
    let point = i64::try_from(whole.len()).ok()? + exponent;
    let leading = digits.len() - digits.trim_start_matches('0').len();
    let digits = digits.trim_matches('0');
    if digits.is_empty() {
        return Some("0".to_owned());
    }
    let point = point - i64::try_from(leading).ok()?;
    let length = i64::try_from(digits.len()).ok()?;
    let zeros = |n: i64| "0".repeat(usize::try_from(n).unwrap_or(0));
    let number = if point <= 0 {
        format!("0.{}{digits}", zeros(-point))
    } else if point >= length {
        format!("{digits}{}", zeros(point - length))
    } else {
        let at = usize::try_from(point).ok()?;
        format!("{}.{}", &digits[..at], &digits[at..])
    };
    Some(if negative { format!("-{number}") } else { number })
}

/// Whether a column of `data_type` holds numbers, compared as exact decimals.
pub(super) fn is_number(data_type: &DataType) -> bool {
    data_type.is_numeric()
}

/// Whether `data_type` holds text.
pub(super) fn is_text(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The values of `array` as text, NULL as `None`.
pub(super) fn texts(array: &dyn Array) -> Result<Vec<Option<String>>, String> {
    let options = FormatOptions::new();
    let formatter = ArrayFormatter::try_new(array, &options).map_err(|e| e.to_string())?;
    Ok((0..array.len()).map(|i| array.is_valid(i).then(|| formatter.value(i).to_string())).collect())
}

/// `array` cast to `to`, refused where a value does not fit: where the cast fails, and where a
/// number would change — an integer or a decimal holds a value exactly or not at all; a float
/// holds the nearest value, as SQL's `CAST` makes it. The error names the first value that does
/// not fit and its row.
pub(super) fn cast(array: &ArrayRef, to: &DataType) -> Result<ArrayRef, String> {
    let cast = cast_with_options(array, to, &STRICT).map_err(|e| e.to_string())?;
    if !is_number(to) || matches!(to, DataType::Float16 | DataType::Float32 | DataType::Float64) {
        return Ok(cast);
    }
    for (row, (from, into)) in texts(array.as_ref())?.into_iter().zip(texts(cast.as_ref())?).enumerate() {
        if let (Some(from), Some(into)) = (from, into)
            && canonical(&from).is_none_or(|exact| canonical(&into).as_ref() != Some(&exact))
        {
            return Err(format!("{from} (row {row}) would be {into}"));
        }
    }
    Ok(cast)
}

#[cfg(test)]
mod tests {
    use super::canonical;

    #[test]
    fn a_number_has_one_spelling() {
        let same = [
            ("15.5", "15.5"),
            ("15.50", "15.5"),
            ("+15.50", "15.5"),
            ("1.55e1", "15.5"),
            ("155E-1", "15.5"),
            ("0015.5000", "15.5"),
            ("-0.0", "0"),
            ("0", "0"),
            ("000", "0"),
            (".5", "0.5"),
            ("5.", "5"),
            ("-1e-7", "-0.0000001"),
            ("1e3", "1000"),
            ("100", "100"),
            ("123456789012345678901234567890.12", "123456789012345678901234567890.12"),
        ];
        for (text, one) in same {
            assert_eq!(canonical(text).as_deref(), Some(one), "{text}");
        }
        assert_ne!(canonical("15.5049"), canonical("15.50"));
        assert_ne!(canonical("2.5"), canonical("2"));
    }

    #[test]
    fn what_is_not_a_finite_number_has_none() {
        for text in ["", "-", ".", "e5", "1e", "NaN", "inf", "-inf", "1.2.3", "1,5", "0x10", "1e99999", "a"] {
            assert_eq!(canonical(text), None, "{text}");
        }
    }
}
