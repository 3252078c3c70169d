-- Joins: inner, left, right, full, semi, anti, cross; NULL keys never match; joins on double
-- keys with NaN (NaN = NaN matches) and -0.0 (= 0.0), on decimal vs int keys, null-safe keys.

-- query: inner_join_sales_numbers_by_id
SELECT sa.id, sa.k, sa.amount, nu.x, sa.amount * nu.x AS product, sa.v + nu.l AS total
FROM raw.sales sa JOIN raw.numbers nu ON sa.id = nu.id
-- end

-- query: left_join_numbers_to_texts
SELECT nu.id, nu.i, tx.s, tx.k
FROM raw.numbers nu LEFT JOIN raw.texts tx ON nu.id = tx.id
-- end

-- query: right_join_texts_to_numbers
SELECT tx.id AS tid, nu.id AS nid, tx.s, nu.d
FROM raw.numbers nu RIGHT JOIN raw.texts tx ON nu.id = tx.id
-- end

-- query: full_join_times_and_numbers
SELECT coalesce(nu.id, tm.id) AS id, nu.x, tm.d
FROM raw.numbers nu FULL OUTER JOIN raw.times tm ON nu.id = tm.id
-- end

-- query: left_semi_join
SELECT sa.id, sa.k FROM raw.sales sa LEFT SEMI JOIN raw.texts tx ON sa.q = tx.k AND tx.s LIKE '%a%'
-- end

-- query: left_anti_join
SELECT sa.id, sa.k, sa.n FROM raw.sales sa LEFT ANTI JOIN raw.texts tx ON sa.n = tx.k
-- end

-- query: self_join_on_nullable_key
SELECT a.k, COUNT(*) AS pairs, SUM(a.v * b.v) AS dot
FROM raw.sales a JOIN raw.sales b ON a.k = b.k AND a.id < b.id
GROUP BY a.k
-- end

-- query: self_join_null_safe_key
SELECT a.k, COUNT(*) AS pairs
FROM raw.sales a JOIN raw.sales b ON a.k <=> b.k AND a.day = b.day AND a.id <> b.id
GROUP BY a.k
-- end

-- query: join_on_double_with_nan_and_negative_zero
SELECT a.id AS a_id, b.id AS b_id, a.d AS a_d, b.d AS b_d
FROM raw.floats a JOIN raw.floats b ON a.d = b.d
-- end

-- query: join_on_float_key
SELECT a.id AS a_id, b.id AS b_id, a.f
FROM raw.floats a JOIN raw.floats b ON a.f = b.f AND a.id < b.id
-- end

-- query: left_join_on_double_null_key
SELECT a.id, a.d, COUNT(b.id) AS matches
FROM raw.floats a LEFT JOIN raw.floats b ON a.d = b.d
GROUP BY a.id, a.d
-- end

-- query: join_float_to_double_key
SELECT a.id AS a_id, b.id AS b_id
FROM raw.floats a JOIN raw.floats b ON a.f = b.d
-- end

-- query: join_decimal_key_to_int_key
SELECT nu.id, nu.x, sa.id AS sid, sa.q
FROM raw.numbers nu JOIN raw.sales sa ON nu.x = sa.q
-- end

-- query: join_decimal_key_to_double_key
SELECT a.id, a.x, b.id AS bid, b.d
FROM raw.numbers a JOIN raw.numbers b ON a.x = b.d
-- end

-- query: join_bigint_key_to_decimal_38_key
SELECT a.id, b.id AS bid, a.l, b.z
FROM raw.numbers a JOIN raw.numbers b ON a.l = b.z
-- end

-- query: join_with_range_condition
SELECT sa.id, tm.id AS tid, sa.day, tm.d
FROM raw.sales sa JOIN raw.times tm ON tm.d BETWEEN sa.day - 1 AND sa.day + 100
-- end

-- query: cross_join_extremes_decimal_overflow
SELECT nu.id, nu.i + ex.tmax AS shifted, nu.x * ex.qmax AS huge
FROM raw.numbers nu CROSS JOIN raw.extremes ex
WHERE nu.x IS NOT NULL AND abs(nu.x) < 10
-- end

-- query: cross_join_extremes_widening
SELECT nu.id, nu.i + ex.tmax AS shifted, nu.l - ex.imin AS from_min, nu.x + ex.zmax AS near_max
FROM raw.numbers nu CROSS JOIN raw.extremes ex
WHERE nu.x < 1
-- end

-- query: join_then_aggregate_per_key
SELECT sa.k, COUNT(*) AS n, SUM(nu.d) AS sum_d, SUM(nu.x) AS sum_x, MAX(tx.s) AS max_s
FROM raw.sales sa
LEFT JOIN raw.numbers nu ON sa.id = nu.id
LEFT JOIN raw.texts tx ON sa.id = tx.id
GROUP BY sa.k
-- end

-- query: join_using_id
SELECT id, nu.d, fl.d AS fd, nu.d = fl.d AS same
FROM raw.numbers nu JOIN raw.floats fl USING (id)
-- end

-- query: exists_semi_join_with_nan
SELECT a.id, a.d FROM raw.floats a
WHERE EXISTS (SELECT 1 FROM raw.floats b WHERE b.d = a.d AND b.id <> a.id)
-- end
