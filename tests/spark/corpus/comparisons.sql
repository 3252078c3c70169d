-- Comparisons across types: doubles against decimal literals, floats against doubles, integers
-- against decimals and strings, NaN, infinities and -0.0 against decimals, null-safe equality.

-- table: raw.numbers
-- a DOUBLE against a decimal literal
d = 0.1
d > 0.285
d = 0.285
d >= 0.285
d < 0.285
d = 7.0
d = 1e-7
d = 0.0000001
-- a FLOAT against literals and doubles
f = 0.1
f = CAST(0.1 AS FLOAT)
f > 0.1
f = d
CAST(f AS DOUBLE) = d
f = 1e10
-- integers against decimals, doubles and strings
i = 7.0
i = 7.00000000001
i > 6.5
l = 9876543210.0
i = d
x = 7.25
x = 7.250
x > i
x = d
x = y
l = i
t = s
t < 100
i = '7'
l > '100'
x = '7.25'
d = '0.1'
-- inequality, null-safe equality and NOT
i <> j
i != j
i <=> j
i <=> NULL
d <=> NULL
NOT (i > j)
i > j IS NULL
x <=> y

-- table: raw.extremes
-- sums of doubles against a decimal literal
CAST(0.1 AS DOUBLE) + CAST(0.2 AS DOUBLE) = 0.3
0.1D + 0.2D = 0.3D
0.1 + 0.2 = 0.3
0.1D + 0.2D > 0.3
1e300 > 99999999999999999999999999999999999999
lmax = 9223372036854775807
lmax = 9.223372036854775807E18
lmax - 1 = CAST(lmax AS DOUBLE)
lmax > 9223372036854775806.5
lmax = CAST(lmax AS DECIMAL(20,0))
zmax > 1e20
zmax < 100000000000000000000
zmin < -1e20
imax = 2147483647.0
tmax = 127.0
CAST(tmax AS FLOAT) = 127.0

-- table: raw.floats
-- NaN, infinities, -0.0 and extremes against decimal literals and doubles
d < 1.5
d <= 1.5
d = 1.5
d > 0
d = 0.0
d = -0.0
d = 0
d > 99999999999999999999.5
d < -99999999999999999999.5
d > 1e300
d = 1.7976931348623157E308
d = 5e-324
d > 0.0 OR d <= 0.0
d = CAST('NaN' AS DOUBLE)
d <=> CAST('NaN' AS DOUBLE)
d > CAST('Infinity' AS DOUBLE)
d = CAST('Infinity' AS DOUBLE)
d <> d
d = d
d <=> d
f = d
f < 1.5
f = CAST('NaN' AS FLOAT)
f > 1e38
d = '1.5'
d = 'NaN'

-- table: raw.texts
-- strings: binary (UTF-8 code unit) order
s = 'abcdef'
s < 'b'
s > 'Z'
s >= ''
s > 'Ünï'
s < '🙂'
s = '12345'
s > '9'
s <=> NULL

-- table: raw.times
-- dates and timestamps against literals and each other
d = '2026-03-29'
d > DATE'2000-01-01'
d < '1970-01-01'
ts > '2026-01-01'
ts >= TIMESTAMP'2026-03-29 01:00:00'
ts = TIMESTAMP'1970-01-01 00:00:00'
d = ts
d < ts
ntz = ts
ntz > TIMESTAMP_NTZ'2026-03-29 00:00:00'
d = CAST(ts AS DATE)
