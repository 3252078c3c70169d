-- Arithmetic operators on each integer and floating type, result types, integer literal typing,
-- division (fractional `/`, integral `div`, by zero), and overflow at the types' edges.

-- table: raw.numbers
-- int operators; `/` is always fractional (a double), `div` integral (a bigint)
i + j
i - j
i * j
i / j
i div j
i % j
typeof(i / j)
typeof(i div j)
typeof(i % j)
-- bigint operators
l + m
l - m
l * m
l / m
l div m
l % m
typeof(l / m)
-- tinyint and smallint keep their type with each other, widen with an int literal
t + t
typeof(t + t)
t + 1
typeof(t + 1)
s * s
typeof(s * s)
t div 2
typeof(t div 2)
-- mixed integer widths, and integers with floats and doubles
i + l
typeof(i + l)
t + s + i + l
i + d
typeof(i + f)
f + d
typeof(f + d)
f * 2
typeof(f * 2)
f / 3
typeof(f / 3)
d / e
d % e
-i
-t
i * 1.5
typeof(i * 1.5)
-- overflow inside ordinary data: int * int and bigint * bigint literal (row 5 overflows)
i * 100000
l * 1000000000000
-- division and remainder by zero: fail under ANSI, NULL otherwise
i / 0
i div 0
i % 0
l div 0
d / 0
f / 0
d % 0
x / 0
x div 0
-- 0 / -3 as a double is -0.0
i / j * 0

-- table: raw.extremes
-- literal arithmetic: 7 / 2 is 3.5; div truncates toward zero; % takes the dividend's sign
7 / 2
7 div 2
-7 div 2
-7 % 2
7 % -2
typeof(7 / 2)
-- integer literal typing
typeof(1)
typeof(2147483647)
typeof(2147483648)
typeof(-2147483648)
typeof(9223372036854775807)
typeof(9223372036854775808)
typeof(1L)
typeof(1S)
typeof(1Y)
typeof(1.5)
typeof(1.50)
typeof(1e300)
typeof(1.5e0)
typeof(1.5D)
typeof(1.5F)
typeof(1.5BD)
1e300
1e300 * 1e10
-- overflow at each integer type's edges
imax + 1
imin - 1
imax * 2
imax * imax
-imin
lmax + 1
lmin - 1
lmax * 2
-lmin
lmin div -1
imin div -1
lmin % -1
tmax + tmax
typeof(tmax + tmax)
tmin - tmax
tmax * tmax
-tmin
smax + smax
-smin
smax * 2
tmax + 1
CAST(imax AS BIGINT) * imax
lmax + 1.0
typeof(lmax + 1.0)
lmax + 1e0
-- the try_ functions return NULL where the operator fails
try_add(imax, 1)
try_add(lmax, 1)
try_subtract(imin, 1)
try_subtract(lmin, 1)
try_multiply(lmax, 2)
try_multiply(imax, imax)
try_divide(imax, 0)
try_divide(7, 2)
typeof(try_divide(7, 2))
try_add(tmax, tmax)
try_mod(imax, 0)

-- table: raw.numbers
try_divide(i, j)
try_divide(i, 0)
try_divide(x, 0)
try_multiply(l, 1000000000000)
try_add(i, j)
