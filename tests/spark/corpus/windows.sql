-- Window functions: ROW_NUMBER dedup, RANK/DENSE_RANK with ties, LAG/LEAD with defaults,
-- running and moving sums over ROWS and RANGE frames, PARTITION BY a double with NaN and -0.0.

-- query: dedup_latest_per_key
SELECT id, k, day, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY day DESC, id DESC) AS rn FROM raw.sales
) WHERE rn = 1
-- end

-- query: row_number_rank_dense_rank_with_ties
SELECT id, k, q,
       ROW_NUMBER() OVER (PARTITION BY k ORDER BY q, id) AS rn,
       RANK() OVER (PARTITION BY k ORDER BY day) AS rk,
       DENSE_RANK() OVER (PARTITION BY k ORDER BY day) AS drk
FROM raw.sales
-- end

-- query: rank_over_whole_table_with_nulls
SELECT id, n, RANK() OVER (ORDER BY n) AS rk_nulls_first, RANK() OVER (ORDER BY n DESC) AS rk_desc,
       DENSE_RANK() OVER (ORDER BY n NULLS LAST) AS drk_nulls_last
FROM raw.sales
-- end

-- query: lag_lead_with_defaults
SELECT id, k, v,
       LAG(v) OVER (PARTITION BY k ORDER BY id) AS prev_v,
       LEAD(v, 2) OVER (PARTITION BY k ORDER BY id) AS next2_v,
       LAG(v, 1, 0) OVER (PARTITION BY k ORDER BY id) AS prev_or_zero,
       v - LAG(v) OVER (PARTITION BY k ORDER BY id) AS delta
FROM raw.sales
-- end

-- query: running_sum_rows_frame
SELECT id, k, amount,
       SUM(amount) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running,
       COUNT(*) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS n
FROM raw.sales
-- end

-- query: default_frame_is_range_with_ties
SELECT id, k, day, v, SUM(v) OVER (PARTITION BY k ORDER BY day) AS running_by_day,
       typeof(SUM(amount) OVER (PARTITION BY k ORDER BY day)) AS t
FROM raw.sales
-- end

-- query: moving_average_three_rows
SELECT id, k, d,
       AVG(d) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS moving_avg,
       SUM(q) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS centered
FROM raw.sales
-- end

-- query: range_frame_over_int_values
SELECT id, q, SUM(v) OVER (ORDER BY q RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS near_q,
       COUNT(*) OVER (ORDER BY q RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS at_least_q
FROM raw.sales
-- end

-- query: partition_totals_and_shares
SELECT id, k, amount, SUM(amount) OVER (PARTITION BY k) AS key_total,
       amount / SUM(amount) OVER (PARTITION BY k) AS share,
       MAX(v) OVER (PARTITION BY day) AS day_max
FROM raw.sales
-- end

-- query: first_last_value_frames
SELECT id, k,
       FIRST_VALUE(v) OVER (PARTITION BY k ORDER BY id) AS first_v,
       LAST_VALUE(v) OVER (PARTITION BY k ORDER BY id) AS last_v_default_frame,
       LAST_VALUE(v) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS last_v,
       FIRST_VALUE(n, true) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS next_non_null_n
FROM raw.sales
-- end

-- query: ntile_percent_rank_cume_dist
SELECT id, v, NTILE(4) OVER (ORDER BY v, id) AS quartile,
       PERCENT_RANK() OVER (ORDER BY q) AS pr, CUME_DIST() OVER (ORDER BY q) AS cd
FROM raw.sales
-- end

-- query: partition_by_double_with_nan_and_negative_zero
SELECT id, d, COUNT(*) OVER (PARTITION BY d) AS n,
       ROW_NUMBER() OVER (PARTITION BY d ORDER BY id) AS rn,
       MIN(id) OVER (PARTITION BY d) AS first_id
FROM raw.floats
-- end

-- query: partition_by_float_with_nan
SELECT id, f, COUNT(*) OVER (PARTITION BY f) AS n, SUM(id) OVER (PARTITION BY f) AS ids
FROM raw.floats
-- end

-- query: order_by_double_with_nan_in_window
SELECT id, d, RANK() OVER (ORDER BY d) AS rk, DENSE_RANK() OVER (ORDER BY d DESC) AS drk,
       ROW_NUMBER() OVER (ORDER BY d, id) AS rn
FROM raw.floats
-- end

-- query: running_sum_of_doubles_with_infinities
SELECT id, d, SUM(d) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running,
       MAX(d) OVER (PARTITION BY g ORDER BY id) AS running_max
FROM raw.floats
WHERE NOT isnan(d) OR d IS NULL
-- end

-- query: window_over_aggregate
SELECT k, day, SUM(amount) AS amount,
       SUM(SUM(amount)) OVER (PARTITION BY k ORDER BY day) AS cumulative,
       RANK() OVER (ORDER BY SUM(amount) DESC) AS rank_overall
FROM raw.sales
GROUP BY k, day
-- end

-- query: window_sum_of_decimals_and_int_overflow_safe
SELECT id, k, SUM(q) OVER (PARTITION BY k) AS total_q, typeof(SUM(q) OVER (PARTITION BY k)) AS tq,
       AVG(amount) OVER (PARTITION BY k) AS avg_amount
FROM raw.sales
-- end
