-- CASE, IF, COALESCE, NULLIF, NVL, IN, BETWEEN and three-valued boolean logic with NULLs;
-- result types of branches of different types; guarded division is not evaluated.

-- table: raw.numbers
CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' ELSE 'zero' END
CASE i WHEN 7 THEN 'seven' WHEN 0 THEN 'zero' END
CASE WHEN i > 0 THEN x ELSE d END
typeof(CASE WHEN i > 0 THEN x ELSE d END)
CASE WHEN i > 0 THEN i ELSE l END
typeof(CASE WHEN i > 0 THEN 1 ELSE 1.5 END)
CASE WHEN i > 0 THEN x ELSE z END
typeof(CASE WHEN i > 0 THEN x ELSE z END)
CASE WHEN j = 0 THEN 0 ELSE i / j END
-- the division by zero in an untaken branch is not an error
IF(i = 0, NULL, 100 / i)
CASE WHEN i = 0 THEN 0 ELSE 100 div i END
IF(i > j, i, j)
IF(i IS NULL, -1, i)
IF(i > 0, 'a', NULL)
IF(NULL, 1, 2)
coalesce(i, l, 0)
coalesce(x, d)
typeof(coalesce(i, x))
coalesce(t, s)
typeof(coalesce(t, s))
coalesce(i, j / 0)
nullif(i, 0)
nullif(j, 2)
nvl(i, -1)
nvl2(i, 'y', 'n')
ifnull(x, 0)
zeroifnull(i)
nullifzero(i)
-- IN and NOT IN with NULL in the list
i IN (1, 7, NULL)
i NOT IN (1, 7, NULL)
i IN (1, 7)
i IN (1.0, 7.5)
x IN (7.25, 3)
d IN (0.1, 0.285)
-- BETWEEN is inclusive; the bounds are widened with the value
i BETWEEN 0 AND 10
i NOT BETWEEN 0 AND 10
d BETWEEN 0.1 AND 0.285
x BETWEEN 0 AND i
-- three-valued logic
(i > 0) AND (j > 2)
(i > 0) OR (j > 100)
NOT (i > 0)
(i > 0) AND NULL
(i > 0) OR NULL
(i > 0) IS NULL
(i > 0) = true
(i > 0) IS TRUE
(i > 0) IS NOT FALSE
(i > 0) <=> NULL

-- table: raw.texts
CASE WHEN s = '' THEN 'empty' WHEN s IS NULL THEN 'null' ELSE s END
coalesce(nullif(s, ''), 'n/a')
s IN ('x', 'abcdef', NULL)
IF(s LIKE '%,%', 1, 0)
CASE k WHEN 0 THEN s WHEN 1 THEN upper(s) ELSE NULL END

-- table: raw.floats
d IN (CAST('NaN' AS DOUBLE), 0.0)
CASE WHEN isnan(d) THEN 'nan' WHEN d = 0 THEN 'zero' WHEN d IS NULL THEN 'null' ELSE 'other' END
coalesce(d, 0)
CASE d WHEN 0 THEN 'zero' WHEN CAST('NaN' AS DOUBLE) THEN 'nan' END
nullif(d, 0)
