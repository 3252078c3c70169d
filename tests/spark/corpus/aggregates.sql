-- Aggregates: SUM/AVG/MIN/MAX/COUNT over every type (result types of SUM and AVG of decimals),
-- doubles with NaN and infinities, GROUP BY with NULL, NaN and -0.0 keys, HAVING, DISTINCT,
-- overflow of SUM over bigint and decimal(38,18), and try_sum/try_avg.

-- query: sum_by_key
SELECT k, SUM(v) AS total FROM raw.sales GROUP BY k
-- end

-- query: sales_per_key_and_day
SELECT k, day, COUNT(*) AS n, SUM(q) AS q, SUM(v) AS v, SUM(amount) AS amount, AVG(amount) AS avg_amount,
       MIN(d) AS min_d, MAX(d) AS max_d
FROM raw.sales
GROUP BY k, day
-- end

-- query: sum_avg_types_over_sales
SELECT SUM(q) AS sum_q, AVG(q) AS avg_q, SUM(v) AS sum_v, AVG(v) AS avg_v, SUM(d) AS sum_d, AVG(d) AS avg_d,
       SUM(amount) AS sum_amount, AVG(amount) AS avg_amount, SUM(n) AS sum_n, AVG(n) AS avg_n
FROM raw.sales
-- end

-- query: result_types_of_aggregates
SELECT typeof(SUM(t)) AS st, typeof(SUM(s)) AS ss, typeof(SUM(i)) AS si, typeof(SUM(l)) AS sl,
       typeof(SUM(f)) AS sf, typeof(SUM(x)) AS sx, typeof(SUM(z)) AS sz, typeof(SUM(w)) AS sw,
       typeof(AVG(i)) AS ai, typeof(AVG(x)) AS ax, typeof(AVG(z)) AS az, typeof(AVG(w)) AS aw,
       typeof(MIN(x)) AS mx, typeof(COUNT(*)) AS c
FROM raw.numbers
-- end

-- query: aggregates_over_every_number_type
SELECT SUM(t) AS st, SUM(s) AS ss, SUM(i) AS si, SUM(l) AS sl, SUM(f) AS sf, SUM(d) AS sd,
       SUM(x) AS sx, SUM(z) AS sz, SUM(w) AS sw,
       AVG(t) AS at, AVG(i) AS ai, AVG(l) AS al, AVG(f) AS af, AVG(d) AS ad,
       AVG(x) AS ax, AVG(z) AS az, AVG(w) AS aw
FROM raw.numbers
-- end

-- query: min_max_count_every_type
SELECT MIN(t) AS mint, MAX(t) AS maxt, MIN(s) AS mins, MAX(l) AS maxl, MIN(f) AS minf, MAX(f) AS maxf,
       MIN(d) AS mind, MAX(d) AS maxd, MIN(x) AS minx, MAX(z) AS maxz, MIN(w) AS minw,
       COUNT(*) AS n, COUNT(i) AS ni, COUNT(j) AS nj, COUNT(DISTINCT j) AS dj
FROM raw.numbers
-- end

-- query: avg_of_small_decimals
SELECT AVG(CAST(0.02 AS DECIMAL(3,2))) AS a, typeof(AVG(CAST(0.02 AS DECIMAL(3,2)))) AS t,
       SUM(CAST(0.02 AS DECIMAL(3,2))) / 3 AS by_hand, AVG(y) AS avg_y, typeof(AVG(y)) AS type_y
FROM raw.numbers
-- end

-- query: doubles_with_nan_and_infinities
SELECT SUM(d) AS sum_d, AVG(d) AS avg_d, MIN(d) AS min_d, MAX(d) AS max_d, COUNT(d) AS n,
       COUNT(DISTINCT d) AS distinct_d, SUM(f) AS sum_f, MAX(f) AS max_f, COUNT(DISTINCT f) AS distinct_f
FROM raw.floats
-- end

-- query: finite_doubles_by_group
SELECT g, SUM(d) AS sum_d, MIN(d) AS min_d, MAX(d) AS max_d, COUNT(*) AS n
FROM raw.floats
WHERE NOT isnan(d) AND abs(d) < 1e300
GROUP BY g
-- end

-- query: group_by_double_with_nan_and_negative_zero
SELECT d, COUNT(*) AS n, MIN(id) AS first_id FROM raw.floats GROUP BY d
-- end

-- query: group_by_float_with_nan_and_negative_zero
SELECT f, COUNT(*) AS n FROM raw.floats GROUP BY f
-- end

-- query: distinct_doubles
SELECT DISTINCT d FROM raw.floats
-- end

-- query: distinct_floats_and_groups
SELECT DISTINCT f, g FROM raw.floats
-- end

-- query: group_by_null_key
SELECT k, COUNT(*) AS n, COUNT(n) AS with_n, SUM(n) AS sum_n, MAX(day) AS last_day
FROM raw.sales
GROUP BY k
-- end

-- query: having_count
SELECT k, COUNT(*) AS n, SUM(amount) AS amount
FROM raw.sales
GROUP BY k
HAVING COUNT(*) >= 6 AND SUM(amount) > 10
-- end

-- query: distinct_and_count_distinct
SELECT day, COUNT(DISTINCT k) AS keys, COUNT(DISTINCT q) AS qs, COUNT(*) AS rows_
FROM raw.sales
GROUP BY day
-- end

-- query: aggregate_filter_clause
SELECT k, SUM(v) FILTER (WHERE q > 3) AS big_q, COUNT(*) FILTER (WHERE n IS NULL) AS no_n,
       AVG(d) FILTER (WHERE d > 0) AS avg_positive
FROM raw.sales
GROUP BY k
-- end

-- query: group_by_expression
SELECT pmod(v, 3) AS bucket, day >= DATE'2026-01-06' AS late, COUNT(*) AS n, SUM(amount) AS amount
FROM raw.sales
GROUP BY pmod(v, 3), day >= DATE'2026-01-06'
-- end

-- query: empty_input_aggregates
SELECT SUM(v) AS s, COUNT(*) AS n, COUNT(v) AS nv, AVG(amount) AS a, MAX(k) AS mk, MIN(day) AS md
FROM raw.sales
WHERE id > 100
-- end

-- query: empty_input_grouped
SELECT k, SUM(v) AS s FROM raw.sales WHERE id > 100 GROUP BY k
-- end

-- query: sum_bigint_overflow
SELECT SUM(lmax) AS s FROM (SELECT lmax FROM raw.extremes UNION ALL SELECT lmax FROM raw.extremes)
-- end

-- query: sum_bigint_overflow_in_one_group
SELECT g, SUM(lmax) AS s, SUM(lmin) AS low, COUNT(*) AS n
FROM (SELECT 1 AS g, lmax, lmin FROM raw.extremes UNION ALL SELECT 1, lmax, lmin FROM raw.extremes
      UNION ALL SELECT 2, lmax, lmin FROM raw.extremes)
GROUP BY g
-- end

-- query: sum_and_avg_decimal_overflow_in_one_group
SELECT g, SUM(zmax) AS s, AVG(zmax) AS a, SUM(qmax) AS q
FROM (SELECT 1 AS g, zmax, qmax FROM raw.extremes UNION ALL SELECT 1, zmax, qmax FROM raw.extremes
      UNION ALL SELECT 2, zmax, qmax FROM raw.extremes)
GROUP BY g
-- end

-- query: try_sum_bigint_overflow
SELECT try_sum(lmax) AS s, try_avg(lmax) AS a FROM (SELECT lmax FROM raw.extremes UNION ALL SELECT lmax FROM raw.extremes)
-- end

-- query: avg_bigint_near_max
SELECT AVG(lmax) AS a, typeof(AVG(lmax)) AS t FROM (SELECT lmax FROM raw.extremes UNION ALL SELECT lmax FROM raw.extremes)
-- end

-- query: sum_int_widens_to_bigint
SELECT SUM(imax) AS s, typeof(SUM(imax)) AS t FROM (SELECT imax FROM raw.extremes UNION ALL SELECT imax FROM raw.extremes)
-- end

-- query: sum_decimal_38_18_overflow
SELECT SUM(zmax) AS s FROM (SELECT zmax FROM raw.extremes UNION ALL SELECT zmax FROM raw.extremes)
-- end

-- query: try_sum_decimal_38_18_overflow
SELECT try_sum(zmax) AS s, try_avg(zmax) AS a FROM (SELECT zmax FROM raw.extremes UNION ALL SELECT zmax FROM raw.extremes)
-- end

-- query: avg_decimal_38_18_edges
SELECT AVG(zmax) AS a, typeof(AVG(zmax)) AS t FROM (SELECT zmax FROM raw.extremes UNION ALL SELECT zmax FROM raw.extremes)
-- end

-- query: sum_decimal_36_2_no_overflow
SELECT SUM(qmax) AS s, typeof(SUM(qmax)) AS t FROM (SELECT qmax FROM raw.extremes UNION ALL SELECT qmax FROM raw.extremes UNION ALL SELECT qmax FROM raw.extremes)
-- end

-- query: try_sum_and_try_avg_per_key
SELECT k, try_sum(v) AS s, try_avg(v) AS a, try_sum(amount) AS sa, try_avg(amount) AS aa
FROM raw.sales
GROUP BY k
-- end

-- query: string_min_max_and_counts
SELECT k, MIN(s) AS min_s, MAX(s) AS max_s, COUNT(s) AS n, COUNT(DISTINCT s) AS dn, MAX(length(s)) AS longest
FROM raw.texts
GROUP BY k
-- end

-- query: min_max_of_dates_and_timestamps
SELECT MIN(d) AS min_d, MAX(d) AS max_d, MIN(ts) AS min_ts, MAX(ts) AS max_ts, MAX(ntz) AS max_ntz, COUNT(ts) AS n
FROM raw.times
-- end

-- query: variance_and_stddev_per_key
SELECT k, var_samp(d) AS vs, var_pop(d) AS vp, stddev_samp(v) AS ss, stddev_pop(q) AS sp
FROM raw.sales
GROUP BY k
-- end

-- query: min_by_max_by_bool_and_count_if
SELECT k, min_by(id, v) AS id_of_min_v, max_by(day, amount) AS day_of_max_amount, bool_and(q > 0) AS all_q,
       bool_or(n = 3) AS any_3, count_if(d > 0) AS positives
FROM raw.sales
GROUP BY k
-- end

-- query: rollup_key_day
SELECT k, day, SUM(amount) AS amount, COUNT(*) AS n, grouping(k) AS gk
FROM raw.sales
WHERE day <= DATE'2026-01-04'
GROUP BY ROLLUP(k, day)
-- end
