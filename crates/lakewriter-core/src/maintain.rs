//! The vocabulary of `lakewriter maintain`: its steps, and the durations and sizes its options
//! take (`--retention 7d`, `--target-file-size 128MiB`).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Serialize, Serializer};

/// Delta's default `delta.deletedFileRetentionDuration`: a week.
pub const DEFAULT_RETENTION: Duration = Duration::from_hours(7 * 24);

/// One step of table maintenance, in the order `maintain` runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    /// Rewrite the small files of each partition holding several into fewer, larger ones.
    Compact,
    /// Write a checkpoint of the table's latest version.
    Checkpoint,
    /// Delete data files no version within the retention references.
    Vacuum,
    /// Delete log files older than the table's log retention, before its newest checkpoint.
    Cleanup,
}

impl Step {
    /// Every step, in the order `maintain` runs them.
    pub const ALL: [Step; 4] = [Step::Compact, Step::Checkpoint, Step::Vacuum, Step::Cleanup];

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Compact => "compact",
            Self::Checkpoint => "checkpoint",
            Self::Vacuum => "vacuum",
            Self::Cleanup => "cleanup",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for Step {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|step| step.as_str() == s).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|s| s.as_str()).collect();
            format!("unknown step `{s}`: expected one of {}", known.join(", "))
        })
    }
}

impl Serialize for Step {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Parses a duration written as a whole number and a unit: `s`, `m`, `h`, `d` or `w` (`168h`,
/// `7d`, `0h`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let invalid =
        || format!("invalid duration `{text}`: expected a whole number and a unit (s, m, h, d, w), e.g. 168h or 7d");
    let at = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(invalid)?;
    let (number, unit) = text.split_at(at);
    let number: u64 = number.parse().map_err(|_| invalid())?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 24 * 3600,
        "w" => 7 * 24 * 3600,
        _ => return Err(invalid()),
    };
    number.checked_mul(seconds).map(Duration::from_secs).ok_or_else(invalid)
}

/// A duration as `parse_duration` reads it, in the largest unit up to days that divides it:
/// `168h` prints as `7d`, `36h` as `36h`, `90m` as `90m`, `0h` as `0s`.
#[must_use]
pub fn format_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    let unit = [(24 * 3600, "d"), (3600, "h"), (60, "m")]
        .into_iter()
        .find(|(size, _)| seconds > 0 && seconds.is_multiple_of(*size));
    match unit {
        Some((size, unit)) => format!("{}{unit}", seconds / size),
        None => format!("{seconds}s"),
    }
}

/// Parses a size in bytes: a whole number with an optional unit, `KB`, `MB`, `GB` (powers of
/// 1000) or `KiB`, `MiB`, `GiB` (powers of 1024), in any case (`134217728`, `128MiB`, `100MB`).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let invalid =
        || format!("invalid size `{text}`: expected bytes, or a number with KB, MB, GB, KiB, MiB or GiB, e.g. 128MiB");
    let at = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(at);
    let number: u64 = number.parse().map_err(|_| invalid())?;
    let factor: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1000,
        "mb" => 1000 * 1000,
        "gb" => 1000 * 1000 * 1000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(invalid()),
    };
    match number.checked_mul(factor) {
        Some(0) => Err(format!("invalid size `{text}`: it must be more than 0 bytes")),
        Some(bytes) => Ok(bytes),
        None => Err(invalid()),
    }
}

/// A size for people: `512 B`, `4.0 KiB`, `100.0 MiB`.
#[must_use]
pub fn format_size(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // a size to one decimal
    let value = bytes as f64;
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KiB", value / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.1} MiB", value / 1_048_576.0),
        _ => format!("{:.1} GiB", value / 1_073_741_824.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_in_whole_units_and_print_back() {
        assert_eq!(parse_duration("168h"), Ok(DEFAULT_RETENTION));
        assert_eq!(parse_duration("7d"), Ok(DEFAULT_RETENTION));
        assert_eq!(parse_duration("1w"), Ok(DEFAULT_RETENTION));
        assert_eq!(parse_duration("0h"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        for bad in ["", "7", "h", "7x", "1.5h", "-1h", "7 d", "99999999999999999999w"] {
            let error = parse_duration(bad).expect_err(bad);
            assert!(error.starts_with(&format!("invalid duration `{bad}`")), "{error}");
        }
        for (text, printed) in
            [("168h", "7d"), ("2w", "14d"), ("30d", "30d"), ("36h", "36h"), ("90m", "90m"), ("0h", "0s")]
        {
            assert_eq!(format_duration(parse_duration(text).expect(text)), printed);
        }
    }

    #[test]
    fn sizes_take_decimal_and_binary_units() {
        assert_eq!(parse_size("134217728"), Ok(128 << 20));
        assert_eq!(parse_size("128MiB"), Ok(128 << 20));
        assert_eq!(parse_size("128mib"), Ok(128 << 20));
        assert_eq!(parse_size("100MB"), Ok(100_000_000));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        for bad in ["", "MB", "1.5MB", "12 MB", "1TB", "-1"] {
            assert!(parse_size(bad).expect_err(bad).starts_with(&format!("invalid size `{bad}`")));
        }
        assert_eq!(parse_size("0MB"), Err("invalid size `0MB`: it must be more than 0 bytes".into()));
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(100 << 20), "100.0 MiB");
    }

    #[test]
    fn steps_parse_by_name_in_their_order() {
        assert_eq!("vacuum".parse::<Step>(), Ok(Step::Vacuum));
        assert_eq!(
            "optimize".parse::<Step>(),
            Err("unknown step `optimize`: expected one of compact, checkpoint, vacuum, cleanup".into())
        );
        let mut steps = vec![Step::Cleanup, Step::Compact, Step::Vacuum];
        steps.sort();
        assert_eq!(steps, [Step::Compact, Step::Vacuum, Step::Cleanup]);
    }
}
