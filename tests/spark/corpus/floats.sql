-- Floating-point edge values: NaN of both signs, ±0.0, ±Infinity, the smallest subnormal and
-- the greatest double, through arithmetic, functions and casts (values compared by bits).

-- table: raw.floats
-- arithmetic keeps or produces NaN, infinities and signed zeros
d + 1
d - d
d * 0
d * -1
-d
0.0 - d
d + 0.0
d / 2
d * 2
d * d
1 / d
d / 0.5
d % 1.5
d + f
typeof(d + f)
f + 1
f * 2
f - f
f / 3
-f
-- NaN tests and replacements
isnan(d)
isnan(f)
nanvl(d, -1.0)
nanvl(f, 0)
isnull(d)
d IS NULL
d IS NOT NULL
-- functions of the edge values
abs(d)
abs(f)
sign(d)
signum(f)
sqrt(d)
exp(d)
ln(d)
log10(d)
cbrt(d)
greatest(d, 0)
least(d, 0)
greatest(d, f)
floor(d)
ceil(d)
round(d)
round(d, 1)
typeof(floor(d))
-- overflow to infinity and underflow to zero
d * 1e308
d / 1e308
d * 5e-324
-- floats widened to doubles, doubles narrowed to floats
CAST(f AS DOUBLE)
CAST(d AS FLOAT)
CAST(d AS FLOAT) = f
-- NaN in IN lists and BETWEEN
d IN (CAST('NaN' AS DOUBLE), 0.0)
d NOT IN (1.5, 2.5)
d BETWEEN -1.5 AND 1.5
f BETWEEN -1.5 AND 1.5

-- table: raw.extremes
-- special values spelled as strings, and literal arithmetic
CAST('NaN' AS DOUBLE)
CAST('-NaN' AS DOUBLE)
CAST('Infinity' AS DOUBLE)
CAST('-Infinity' AS DOUBLE)
CAST('inf' AS DOUBLE)
CAST('-inf' AS FLOAT)
CAST('NaN' AS FLOAT)
CAST('Infinity' AS DOUBLE) - CAST('Infinity' AS DOUBLE)
CAST('NaN' AS DOUBLE) = CAST('NaN' AS DOUBLE)
CAST('NaN' AS DOUBLE) > CAST('Infinity' AS DOUBLE)
-0.0D = 0.0D
-0.0D
0.0D * -1
1.7976931348623157E308 * 2
4.9E-324 / 2
1e-320
0.1D + 0.2D
1D / 3
CAST(1 AS FLOAT) / 3
CAST(0.1 AS FLOAT) + CAST(0.2 AS FLOAT)
typeof(CAST(0.1 AS FLOAT) + CAST(0.2 AS FLOAT))
CAST(16777217 AS FLOAT)
CAST(lmax AS FLOAT)
CAST(lmax AS DOUBLE)
