-- Every write mode and both statements a job can be, each writing its own table: a first run
-- (`-- before:`) where the case changes a table, the job's run, and the same run again. Spark's
-- answer is the table after one run: an INSERT OVERWRITE as Spark runs it on a table of its
-- own, the other modes as the SELECT of the rows they promise (Spark runs MERGE only on a table
-- format it has no jar for here).

-- write: overwrite_day
-- job: write = "overwrite_partition"
-- job: partition_by = "dt"
-- before: SELECT 'stale' AS k, CAST(0 AS BIGINT) AS orders, CAST(0 AS DECIMAL(20,2)) AS revenue, CAST(0 AS DOUBLE) AS mean_d, $dt AS dt
SELECT k, COUNT(*) AS orders, SUM(amount) AS revenue, AVG(d) AS mean_d, $dt AS dt FROM raw.sales WHERE dt = $dt GROUP BY k
-- spark: SELECT k, COUNT(*) AS orders, SUM(amount) AS revenue, AVG(d) AS mean_d, $dt AS dt FROM raw.sales WHERE dt = $dt GROUP BY k;
-- end

-- write: overwrite_day_floats
-- job: write = "overwrite_partition"
-- job: partition_by = "dt"
SELECT d, COUNT(*) AS n, MIN(id) AS first_id, $dt AS dt FROM raw.floats WHERE dt = $dt GROUP BY d
-- spark: SELECT d, COUNT(*) AS n, MIN(id) AS first_id, $dt AS dt FROM raw.floats WHERE dt = $dt GROUP BY d;
-- end

-- write: insert_overwrite
-- before: INSERT OVERWRITE TABLE out.insert_overwrite PARTITION (dt = $dt) SELECT 'stale' AS k, CAST(0 AS BIGINT) AS orders, CAST(0 AS DECIMAL(20,2)) AS revenue
INSERT OVERWRITE TABLE out.insert_overwrite PARTITION (dt = $dt)
SELECT k, COUNT(*) AS orders, SUM(amount) AS revenue FROM raw.sales WHERE dt = $dt GROUP BY k
-- spark: CREATE TABLE out.insert_overwrite (k STRING, orders BIGINT, revenue DECIMAL(20,2), dt DATE) USING parquet PARTITIONED BY (dt);
-- spark: INSERT OVERWRITE TABLE out.insert_overwrite PARTITION (dt = $dt) SELECT 'stale' AS k, CAST(0 AS BIGINT) AS orders, CAST(0 AS DECIMAL(20,2)) AS revenue;
-- spark: INSERT OVERWRITE TABLE out.insert_overwrite PARTITION (dt = $dt)
-- spark:   SELECT k, COUNT(*) AS orders, SUM(amount) AS revenue FROM raw.sales WHERE dt = $dt GROUP BY k;
-- spark: SELECT * FROM out.insert_overwrite;
-- end

-- write: insert_overwrite_values
INSERT OVERWRITE TABLE out.insert_overwrite_values PARTITION (dt = $dt)
SELECT id, s, upper(s) AS loud, length(s) AS chars FROM raw.texts WHERE dt = $dt
-- spark: CREATE TABLE out.insert_overwrite_values (id INT, s STRING, loud STRING, chars INT, dt DATE) USING parquet PARTITIONED BY (dt);
-- spark: INSERT OVERWRITE TABLE out.insert_overwrite_values PARTITION (dt = $dt)
-- spark:   SELECT id, s, upper(s) AS loud, length(s) AS chars FROM raw.texts WHERE dt = $dt;
-- spark: SELECT * FROM out.insert_overwrite_values;
-- end

-- write: delete_insert_day
-- job: write = "delete_insert"
-- job: predicate = "day = $dt OR day IS NULL"
-- before: SELECT CAST(NULL AS DATE) AS day, 'stale' AS k, CAST(0 AS BIGINT) AS total UNION ALL SELECT $dt, 'b', CAST(1 AS BIGINT)
SELECT $dt AS day, k, SUM(v) AS total FROM raw.sales WHERE dt = $dt GROUP BY k
-- spark: SELECT $dt AS day, k, SUM(v) AS total FROM raw.sales WHERE dt = $dt GROUP BY k;
-- end

-- write: append_once
-- job: write = "append"
SELECT id, k, amount, d, $dt AS dt FROM raw.sales WHERE dt = $dt
-- spark: SELECT id, k, amount, d, $dt AS dt FROM raw.sales WHERE dt = $dt;
-- end

-- write: insert_into
INSERT INTO out.insert_into SELECT id, k, amount, $dt AS dt FROM raw.sales WHERE dt = $dt
-- spark: CREATE TABLE out.insert_into (id INT, k STRING, amount DECIMAL(10,2), dt DATE) USING parquet;
-- spark: INSERT INTO out.insert_into SELECT id, k, amount, $dt AS dt FROM raw.sales WHERE dt = $dt;
-- spark: SELECT * FROM out.insert_into;
-- end

-- write: append_dedup_floats
-- job: write = "append_dedup"
-- job: key = ["d"]
-- before: SELECT d, id FROM raw.floats WHERE d IS NOT NULL AND id <= 6
SELECT d, id FROM raw.floats WHERE d IS NOT NULL
-- spark: SELECT d, id FROM (SELECT d, id, row_number() OVER (PARTITION BY d ORDER BY id DESC) AS rn
-- spark:                    FROM raw.floats WHERE d IS NOT NULL AND id <= 6) WHERE rn = 1
-- spark: UNION ALL
-- spark: SELECT d, id FROM (SELECT d, id, row_number() OVER (PARTITION BY d ORDER BY id DESC) AS rn
-- spark:                    FROM raw.floats WHERE d IS NOT NULL) s
-- spark: WHERE rn = 1 AND NOT EXISTS (SELECT 1 FROM raw.floats f WHERE f.id <= 6 AND f.d = s.d);
-- end

-- write: append_dedup_strings
-- job: write = "append_dedup"
-- job: key = ["s"]
-- before: SELECT s, k, id FROM raw.texts WHERE s IS NOT NULL AND id <= 5
SELECT s, k, id FROM raw.texts WHERE s IS NOT NULL
-- spark: SELECT s, k, id FROM raw.texts WHERE s IS NOT NULL AND id <= 5
-- spark: UNION ALL
-- spark: SELECT s, k, id FROM raw.texts x WHERE s IS NOT NULL
-- spark:   AND NOT EXISTS (SELECT 1 FROM raw.texts y WHERE y.id <= 5 AND y.s = x.s);
-- end

-- write: merge_floats
-- job: write = "merge"
-- job: key = ["d"]
-- job: newer_by = "id"
-- before: SELECT d, id, g FROM raw.floats WHERE d IS NOT NULL AND id <= 6
SELECT d, id, g FROM raw.floats WHERE d IS NOT NULL AND id > 4
-- spark: SELECT d, id, g FROM (SELECT d, id, g, row_number() OVER (PARTITION BY d ORDER BY id DESC) AS rn
-- spark:                       FROM raw.floats WHERE d IS NOT NULL) WHERE rn = 1;
-- end

-- write: merge_deletes
-- job: write = "merge"
-- job: key = ["id"]
-- job: newer_by = "version"
-- job: delete_when = "q = 0"
-- before: SELECT id, k, amount, q, 1 AS version FROM raw.sales WHERE id <= 20 AND q <> 0
SELECT id, k, amount, q, 2 AS version FROM raw.sales WHERE id > 10
-- spark: SELECT id, k, amount, q, 1 AS version, false AS _deleted FROM raw.sales WHERE id <= 10 AND q <> 0
-- spark: UNION ALL
-- spark: SELECT id, k, amount, q, 2 AS version, q = 0 AS _deleted FROM raw.sales WHERE id > 10;
-- end

-- write: merge_into
-- before: INSERT OVERWRITE TABLE out.merge_into PARTITION (dt = $dt) SELECT id, k, amount, 1 AS version FROM raw.sales WHERE id <= 20
MERGE INTO out.merge_into AS t
USING (SELECT id, k, amount, 2 AS version, $dt AS dt FROM raw.sales WHERE id > 10) AS s ON t.id = s.id
WHEN MATCHED AND s.version > t.version THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *
-- spark: SELECT id, k, amount, 1 AS version, $dt AS dt FROM raw.sales WHERE id <= 10
-- spark: UNION ALL
-- spark: SELECT id, k, amount, 2 AS version, $dt AS dt FROM raw.sales WHERE id > 10;
-- end

-- write: merge_into_floats
-- before: INSERT OVERWRITE TABLE out.merge_into_floats PARTITION (dt = $dt) SELECT d, id FROM raw.floats WHERE id IN (1, 3)
MERGE INTO out.merge_into_floats AS t
USING (SELECT d, id, $dt AS dt FROM raw.floats WHERE id IN (2, 4, 9)) AS s ON t.d = s.d
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *
-- spark: SELECT d, id, $dt AS dt FROM raw.floats WHERE id IN (2, 4, 9);
-- end

-- write: rebuild_all
-- job: write = "rebuild"
SELECT k, SUM(v) AS total, MAX(d) AS top, COUNT(DISTINCT day) AS days, AVG(amount) AS mean FROM raw.sales GROUP BY k
-- spark: SELECT k, SUM(v) AS total, MAX(d) AS top, COUNT(DISTINCT day) AS days, AVG(amount) AS mean FROM raw.sales GROUP BY k;
-- end

-- write: overwrite_day_zoned
-- job: write = "overwrite_partition"
-- job: partition_by = "dt"
SELECT id, paris, ny, CAST(paris AS DATE) AS dt FROM raw.zoned WHERE CAST(paris AS DATE) = $dt
-- spark: SELECT id, paris, ny, CAST(paris AS DATE) AS dt FROM raw.zoned WHERE CAST(paris AS DATE) = $dt;
-- end
