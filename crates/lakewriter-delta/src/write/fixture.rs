//! A Delta table made from rows at hand: the tables a job's test is given (`lakewriter test`),
//! in a scratch lakehouse.

use std::num::NonZeroU64;

use datafusion::arrow::array::RecordBatch;
use deltalake::protocol::SaveMode;
use lakewriter_storage::Location;

use crate::{Error, Result};

/// How a fixture table's rows are laid out in its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixtureFiles {
    /// As few files as the writer makes.
    Few,
    /// Every row in a file of its own, in the order of the rows, or (`reversed`) the last row's
    /// file first in the table's log.
    RowPerFile { reversed: bool },
}

/// Creates a Delta table at `location` (where there is none) holding `batch`'s rows, partitioned
/// by `partition_columns`, in one commit without lakewriter's metadata or partition state.
pub async fn create_fixture(
    location: &Location,
    batch: RecordBatch,
    partition_columns: &[String],
    files: FixtureFiles,
) -> Result<()> {
    let target = crate::table::open_for_write(location, None, &crate::table::LoadedTables::default()).await?;
    let batches = match files {
        FixtureFiles::Few => vec![batch],
        FixtureFiles::RowPerFile { reversed } => {
            let rows: Vec<RecordBatch> = (0..batch.num_rows()).map(|i| batch.slice(i, 1)).collect();
            if reversed { rows.into_iter().rev().collect() } else { rows }
        }
    };
    let mut builder = target.table.write(batches).with_save_mode(SaveMode::ErrorIfExists);
    if files != FixtureFiles::Few {
        builder = builder.with_write_batch_size(1).with_target_file_size(Some(NonZeroU64::MIN));
    }
    if !partition_columns.is_empty() {
        builder = builder.with_partition_columns(partition_columns);
    }
    let url = location.url().clone();
    builder.await.map(drop).map_err(|source| Error::Fixture { url, source: Box::new(source) })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use datafusion::arrow::array::{Int64Array, RecordBatch};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use lakewriter_storage::Location;

    use super::{FixtureFiles, create_fixture};

    /// The files and rows of a fixture table of 3 rows written as `files` says.
    async fn written(files: FixtureFiles) -> (u64, u64) {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = url::Url::from_directory_path(dir.path().join("t")).expect("url");
        let location = Location::new(url, HashMap::new(), |_| None).expect("location");
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1, 2, 3]))]).expect("batch");
        create_fixture(&location, batch, &[], files).await.expect("a fixture table");
        let layout = crate::maintain::layout(&location, None, &[]).await.expect("layout").expect("a table");
        (layout.files, crate::digest(&location, None).await.expect("digest").rows)
    }

    #[tokio::test]
    async fn a_fixture_table_holds_its_rows_in_few_files_or_a_file_per_row() {
        assert_eq!(written(FixtureFiles::Few).await, (1, 3));
        assert_eq!(written(FixtureFiles::RowPerFile { reversed: true }).await, (3, 3));
        assert_eq!(written(FixtureFiles::RowPerFile { reversed: false }).await, (3, 3));
    }
}
