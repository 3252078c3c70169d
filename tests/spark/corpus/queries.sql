-- Whole queries: CTEs, set operations with type widening, scalar/IN/EXISTS subqueries,
-- ORDER BY with NULLs and NaN, LIMIT after a total ORDER BY.

-- query: cte_daily_totals_and_share
WITH daily AS (
  SELECT day, SUM(amount) AS amount, COUNT(*) AS n FROM raw.sales GROUP BY day
), total AS (
  SELECT SUM(amount) AS amount FROM daily
)
SELECT daily.day, daily.amount, daily.n, daily.amount / total.amount AS share
FROM daily CROSS JOIN total
-- end

-- query: cte_chain_dedup_then_aggregate
WITH ranked AS (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k, day ORDER BY id DESC) AS rn FROM raw.sales
), latest AS (
  SELECT * FROM ranked WHERE rn = 1
)
SELECT coalesce(k, '(none)') AS key, COUNT(*) AS days, SUM(v) AS v, MAX(amount) AS max_amount
FROM latest
GROUP BY coalesce(k, '(none)')
-- end

-- query: union_int_and_bigint
SELECT i AS v FROM raw.numbers UNION SELECT l FROM raw.numbers
-- end

-- query: union_all_decimal_and_double
SELECT x AS v FROM raw.numbers UNION ALL SELECT d FROM raw.numbers
-- end

-- query: union_tinyint_and_decimal
SELECT t AS v FROM raw.numbers UNION SELECT x FROM raw.numbers
-- end

-- query: union_decimals_of_different_scales
SELECT x AS v FROM raw.numbers UNION ALL SELECT w FROM raw.numbers UNION ALL SELECT z FROM raw.numbers
-- end

-- query: union_types_pinned
SELECT typeof(v) AS t, COUNT(*) AS n FROM (
  SELECT x AS v FROM raw.numbers UNION ALL SELECT w FROM raw.numbers UNION ALL SELECT i FROM raw.numbers
) GROUP BY typeof(v)
-- end

-- query: union_int_and_string
SELECT CAST(k AS STRING) AS v FROM raw.texts UNION SELECT s FROM raw.texts
-- end

-- query: union_date_and_timestamp
SELECT d AS v FROM raw.times UNION ALL SELECT ts FROM raw.times
-- end

-- query: union_distinct_doubles_with_nan_and_negative_zero
SELECT d FROM raw.floats UNION SELECT CAST(f AS DOUBLE) FROM raw.floats
-- end

-- query: intersect_with_widening
SELECT i FROM raw.numbers INTERSECT SELECT q FROM raw.sales
-- end

-- query: intersect_all
SELECT q FROM raw.sales WHERE id <= 15 INTERSECT ALL SELECT q FROM raw.sales WHERE id > 10
-- end

-- query: except_distinct
SELECT k, n FROM raw.sales EXCEPT SELECT k, n FROM raw.sales WHERE q > 2
-- end

-- query: except_all
SELECT n FROM raw.sales EXCEPT ALL SELECT k FROM raw.texts
-- end

-- query: intersect_doubles_nan
SELECT d FROM raw.floats WHERE id <= 7 INTERSECT SELECT d FROM raw.floats WHERE id > 7
-- end

-- query: scalar_subquery_deviation
SELECT id, v, v - (SELECT AVG(v) FROM raw.sales) AS deviation,
       amount > (SELECT AVG(amount) FROM raw.sales) AS above_avg
FROM raw.sales
-- end

-- query: correlated_scalar_subquery
SELECT a.id, a.k, a.amount, (SELECT MAX(b.amount) FROM raw.sales b WHERE b.k = a.k) AS key_max
FROM raw.sales a
-- end

-- query: in_subquery
SELECT id, k, q FROM raw.sales WHERE q IN (SELECT k FROM raw.texts WHERE s LIKE '%a%')
-- end

-- query: not_in_subquery_with_nulls_is_empty
SELECT id FROM raw.sales WHERE q NOT IN (SELECT n FROM raw.sales)
-- end

-- query: not_in_subquery_without_nulls
SELECT id, q FROM raw.sales WHERE q NOT IN (SELECT n FROM raw.sales WHERE n IS NOT NULL)
-- end

-- query: in_subquery_decimal_vs_int
SELECT id, x FROM raw.numbers WHERE x IN (SELECT q FROM raw.sales)
-- end

-- query: exists_and_not_exists
SELECT tx.id, tx.s FROM raw.texts tx
WHERE EXISTS (SELECT 1 FROM raw.sales sa WHERE sa.n = tx.k AND sa.q = 6) AND NOT EXISTS (SELECT 1 FROM raw.numbers nu WHERE nu.id = tx.id)
-- end

-- query: derived_table_with_filter_on_aggregate
SELECT key, total FROM (
  SELECT k AS key, SUM(v) AS total FROM raw.sales GROUP BY k
) WHERE total > 30 OR key IS NULL
-- end

-- query: order_by_nulls_first_limit
SELECT id, n FROM raw.sales ORDER BY n NULLS FIRST, id LIMIT 5
-- end

-- query: order_by_desc_nulls_default_limit
SELECT id, n FROM raw.sales ORDER BY n DESC, id LIMIT 10
-- end

-- query: order_by_double_nan_greatest_limit
SELECT id, d FROM raw.floats ORDER BY d DESC, id LIMIT 5
-- end

-- query: order_by_double_ascending_limit
SELECT id, d FROM raw.floats ORDER BY d ASC NULLS LAST, id LIMIT 6
-- end

-- query: order_by_float_desc_nulls_first_limit
SELECT id, f FROM raw.floats ORDER BY f DESC NULLS FIRST, id DESC LIMIT 7
-- end

-- query: order_by_string_limit
SELECT id, s FROM raw.texts ORDER BY s DESC NULLS LAST, id LIMIT 5
-- end

-- query: top_amount_per_key_via_limit_in_cte
WITH ordered AS (SELECT id, k, amount FROM raw.sales ORDER BY amount DESC, id LIMIT 8)
SELECT k, COUNT(*) AS n, SUM(amount) AS amount FROM ordered GROUP BY k
-- end

-- query: order_by_timestamp_offset
SELECT id, ts FROM raw.times ORDER BY ts, id LIMIT 4 OFFSET 2
-- end

-- query: case_in_group_by
SELECT CASE WHEN v < 0 THEN 'neg' WHEN v < 20 THEN 'small' ELSE 'big' END AS bucket, COUNT(*) AS n, SUM(amount) AS amount
FROM raw.sales
GROUP BY CASE WHEN v < 0 THEN 'neg' WHEN v < 20 THEN 'small' ELSE 'big' END
-- end

-- query: values_joined_to_sales
SELECT sa.id, lb.label FROM raw.sales sa JOIN (VALUES ('a', 'alpha'), ('b', 'beta'), ('Ünï', 'unicode')) AS lb(k, label) ON sa.k = lb.k
-- end

-- query: pipeline_daily_kpis
SELECT day,
       COUNT(DISTINCT k) AS keys,
       SUM(CASE WHEN d > 0 THEN amount ELSE 0 END) AS positive_amount,
       ROUND(AVG(d), 3) AS avg_d,
       SUM(v) / COUNT(*) AS mean_v,
       MAX(v) - MIN(v) AS spread
FROM raw.sales
GROUP BY day
-- end

-- query: distinct_on_expressions
SELECT DISTINCT upper(k) AS key, n % 2 AS parity FROM raw.sales
-- end
