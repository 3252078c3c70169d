use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// The unit of work: one job for one logical partition.
///
/// A plain value, so that a scheduler can queue it, a worker can retry it, a backfill can shard a
/// list of them and a report can name it. Running the same `PartitionRun` again is always safe.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PartitionRun {
    pub job: String,
    /// The logical date; `None` for a job that runs whole (`rebuild`).
    pub dt: Option<NaiveDate>,
    /// For `append`: append again even though this partition was committed before.
    #[serde(default)]
    pub force: bool,
}

impl PartitionRun {
    #[must_use]
    pub fn new(job: impl Into<String>, dt: NaiveDate) -> Self {
        Self { job: job.into(), dt: Some(dt), force: false }
    }

    /// A run of a job that takes no partition (`rebuild`).
    #[must_use]
    pub fn whole(job: impl Into<String>) -> Self {
        Self { job: job.into(), dt: None, force: false }
    }

    #[must_use]
    pub fn forced(self, force: bool) -> Self {
        Self { force, ..self }
    }
}

impl std::fmt::Display for PartitionRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.dt {
            Some(dt) => write!(f, "{} dt={dt}", self.job),
            None => write!(f, "{} (whole table)", self.job),
        }
    }
}

/// One input file a partition's plan read: what its input fingerprint is made of.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct InputFile {
    /// Relative to the lakehouse root where the file is below it, so that moving the lakehouse
    /// changes no fingerprint.
    pub path: String,
    pub size: u64,
    /// Last-modified time (RFC 3339), where the store reports one.
    pub modified: Option<String>,
    pub e_tag: Option<String>,
}

/// A hash of a set of input files (order-independent): two runs that read the same files, of the
/// same size and e-tag (or, where there is none, modification time), have the same input
/// fingerprint. An S3 e-tag follows the content, so a copied bucket keeps its fingerprints; local
/// files are given no e-tag (object_store's is made of the inode) and a modification time to the
/// second, so a copy made with its times keeps them too.
#[must_use]
pub fn input_fingerprint(files: &[InputFile]) -> String {
    let mut lines: Vec<String> = files
        .iter()
        .map(|f| format!("{}|{}|{}", f.path, f.size, f.e_tag.as_deref().or(f.modified.as_deref()).unwrap_or("")))
        .collect();
    lines.sort();
    crate::stable_hash(lines.join("\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, size: u64) -> InputFile {
        InputFile { path: path.into(), size, modified: Some("2026-09-30T00:00:00Z".into()), e_tag: None }
    }

    #[test]
    fn input_fingerprints_ignore_order_and_see_every_change() {
        let a = [file("raw/o/dt=1/a.parquet", 10), file("raw/o/dt=1/b.parquet", 20)];
        let reversed = [a[1].clone(), a[0].clone()];
        assert_eq!(input_fingerprint(&a), input_fingerprint(&reversed));
        assert_ne!(input_fingerprint(&a), input_fingerprint(&a[..1]), "a file removed");
        assert_ne!(
            input_fingerprint(&a),
            input_fingerprint(&[a[0].clone(), file("raw/o/dt=1/b.parquet", 21)]),
            "a file changed"
        );
        let late = [a[0].clone(), a[1].clone(), file("raw/o/dt=1/late.parquet", 5)];
        assert_ne!(input_fingerprint(&a), input_fingerprint(&late), "a late file");
        assert_eq!(input_fingerprint(&[]).len(), 32);
    }
}
