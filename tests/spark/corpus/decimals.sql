-- Decimal arithmetic: result precision and scale of + - * / % div, rounding of division,
-- decimals with integer literals and columns, doubles, and overflow of decimal(38,18).

-- table: raw.numbers
-- decimal(10,2) with decimal(10,2)
x + y
typeof(x + y)
x - y
x * y
typeof(x * y)
x / y
typeof(x / y)
x % y
typeof(x % y)
x div y
typeof(x div y)
pmod(x, y)
-- decimal(38,18) with decimal(10,2): precision capped at 38, scale reduced
z + x
typeof(z + x)
z - x
z * x
typeof(z * x)
z / x
typeof(z / x)
z / y
typeof(z / y)
z % y
typeof(z % y)
z * z
typeof(z * z)
-- decimal(5,3) mixes
w * w
typeof(w * w)
w / y
typeof(w / y)
w + z
typeof(w + z)
x * w
typeof(x * w)
-- decimals with integer literals and integer columns
x + 1
typeof(x + 1)
x * 2
x / 3
typeof(x / 3)
x / 7
x + i
typeof(x + i)
x * l
typeof(x * l)
x + t
typeof(x + t)
x - s
typeof(x - s)
x div 2
l / y
typeof(l / y)
-- decimals with decimal literals
x + 0.005
typeof(x + 0.005)
x * 1.0000000001
typeof(x * 1.0000000001)
z + 0.5
w * 1000
-- decimals with doubles and floats become doubles
x + d
typeof(x + d)
x * f
typeof(x * f)
-- unary and sign
-x
-z
x * -1
typeof(-x)

-- table: raw.extremes
-- literal decimals: 0.02 / 3 is decimal(6,6)
0.02 / 3
typeof(0.02 / 3)
1 / 3.0
typeof(1 / 3.0)
1.0 / 3
typeof(1.0 / 3)
10.5 + 1
typeof(10.5 + 1)
0.1 + 0.2
typeof(0.1 + 0.2)
2.00 * 3.000
typeof(2.00 * 3.000)
typeof(123456789012345678901234567890.5)
typeof(99999999999999999999999999999999999999)
typeof(0.000000000000000000000000000000000001)
1.0 / 7 * 7
CAST(1 AS DECIMAL(38,18)) * CAST(1 AS DECIMAL(10,2))
typeof(CAST(1 AS DECIMAL(38,18)) * CAST(1 AS DECIMAL(10,2)))
CAST(1 AS DECIMAL(38,18)) / CAST(3 AS DECIMAL(10,2))
typeof(CAST(1 AS DECIMAL(38,18)) / CAST(3 AS DECIMAL(10,2)))
CAST(2 AS DECIMAL(38,0)) / CAST(3 AS DECIMAL(38,0))
typeof(CAST(2 AS DECIMAL(38,0)) / CAST(3 AS DECIMAL(38,0)))
-- decimal(38,18) at its edges
zmax * 10
zmax + zmax
zmin - zmax
zmax * zmax
zmax / 3
typeof(zmax / 3)
zmax / 0.1
zmax + 0.000000000000000001
zmax * 1
zmax - zmax
qmax + 1
qmax * 100
qmax + qmax
qmax / 7
typeof(qmax / 7)
try_add(zmax, zmax)
try_multiply(zmax, 10)
try_divide(zmax, 0)
try_divide(zmax, 0.1)
lmax * 1.5
typeof(lmax * 1.5)
lmax * 10.5
