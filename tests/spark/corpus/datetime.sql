-- Dates and timestamps (session time zone UTC): Java DateTimeFormatter patterns, field
-- extraction, date arithmetic at the edges (years 1, 1582, 1969, 2262, 9999), truncation,
-- Unix time, and time-zone conversion over the European and US DST days.

-- table: raw.times
-- date_format with Java DateTimeFormatter patterns
date_format(ts, 'yyyy-MM-dd')
date_format(ts, 'yyyy-MM-dd HH:mm:ss')
date_format(ts, 'EEE')
date_format(ts, 'EEEE')
date_format(ts, 'MMM d, yyyy')
date_format(ts, 'MMMM')
date_format(ts, 'HH:mm:ss.SSS')
date_format(ts, 'HH:mm:ss.SSSSSS')
date_format(ts, 'D')
date_format(ts, 'DDD')
date_format(ts, 'yyyyMMdd')
date_format(ts, 'hh:mm a')
date_format(ts, 'yy')
date_format(ts, 'y')
date_format(ts, 'QQ')
date_format(ts, 'dd/MM/yyyy')
date_format(ts, 'yyyy-MM-dd\'T\'HH:mm:ssXXX')
date_format(ts, 'yyyy-MM-dd HH:mm:ss Z')
date_format(ts, 'G')
date_format(ntz, 'yyyy-MM-dd HH:mm')
date_format(d, 'yyyy/MM/dd EEE')
date_format(d, 'd MMM yyyy')
-- fields
year(ts)
month(ts)
day(ts)
dayofmonth(d)
hour(ts)
minute(ts)
second(ts)
hour(ntz)
year(d)
dayofweek(d)
weekday(d)
dayofyear(d)
weekofyear(d)
quarter(d)
extract(YEAR FROM ts)
extract(DOY FROM d)
extract(DAYOFWEEK_ISO FROM d)
extract(SECOND FROM ts)
date_part('week', d)
-- date arithmetic, also past year 9999 and before year 1
date_add(d, 1)
date_add(d, -1)
date_sub(d, 1)
date_add(d, 365)
d + 1
d - 1
add_months(d, 1)
add_months(d, -1)
add_months(d, 12)
add_months(d, -13)
last_day(d)
next_day(d, 'MON')
datediff(d, DATE'2026-01-01')
datediff(ts, d)
date_diff(d, DATE'1970-01-01')
months_between(ts, TIMESTAMP'2026-01-31 00:00:00')
months_between(d, DATE'2024-02-29')
months_between(d, DATE'2024-02-29', false)
months_between(DATE'2026-03-31', d)
-- truncation
trunc(d, 'MM')
trunc(d, 'YEAR')
trunc(d, 'QUARTER')
trunc(d, 'WEEK')
date_trunc('MONTH', ts)
date_trunc('HOUR', ts)
date_trunc('DAY', ts)
date_trunc('WEEK', ts)
date_trunc('QUARTER', ts)
date_trunc('YEAR', ts)
date_trunc('MINUTE', ts)
date_trunc('MILLISECOND', ts)
date_trunc('DAY', ntz)
-- conversions
CAST(ts AS DATE)
to_date(ts)
to_date(CAST(ts AS STRING))
to_timestamp(CAST(d AS STRING))
to_timestamp(date_format(ts, 'dd/MM/yyyy HH:mm'), 'dd/MM/yyyy HH:mm')
to_date(date_format(d, 'yyyyMMdd'), 'yyyyMMdd')
make_date(year(d), month(d), 1)
make_timestamp(year(d), month(d), day(d), 12, 30, 45.5)
-- Unix time
unix_timestamp(ts)
unix_timestamp(d)
unix_seconds(ts)
unix_millis(ts)
unix_micros(ts)
unix_date(d)
from_unixtime(unix_timestamp(ts))
from_unixtime(unix_timestamp(ts), 'yyyy-MM-dd HH:mm')
timestamp_seconds(unix_seconds(ts))
timestamp_millis(unix_millis(ts))
date_from_unix_date(unix_date(d))
-- time zones: from_utc_timestamp / to_utc_timestamp over the DST days
from_utc_timestamp(ts, 'Europe/Paris')
from_utc_timestamp(ts, 'America/New_York')
to_utc_timestamp(ts, 'Europe/Paris')
to_utc_timestamp(ts, 'America/New_York')
from_utc_timestamp(ts, 'Asia/Kolkata')
from_utc_timestamp(ts, '+05:30')
hour(from_utc_timestamp(ts, 'Europe/Paris'))
date_format(from_utc_timestamp(ts, 'America/New_York'), 'yyyy-MM-dd HH:mm')
convert_timezone('Europe/Paris', 'UTC', ntz)
-- interval arithmetic
ts + INTERVAL 1 DAY
ts + INTERVAL '1' HOUR
ts - INTERVAL 1 YEAR
d + INTERVAL 1 MONTH
ntz + INTERVAL 90 MINUTES
timestampadd(HOUR, 25, ts)
timestampdiff(DAY, TIMESTAMP'2026-01-01 00:00:00', ts)
timestampdiff(MONTH, d, DATE'2026-12-31')

-- table: raw.texts
-- parsing strings: only '2026-03-29' is a date; the rest fail under ANSI
to_date(s)
to_timestamp(s)
to_date(s, 'yyyy-MM-dd')
try_to_timestamp(s)
to_date(s, 'yyyyMMdd')
unix_timestamp(s, 'yyyy-MM-dd')

-- table: raw.extremes
-- literals, invalid dates, and the edges of the calendar
make_date(2026, 2, 30)
make_date(2024, 2, 29)
make_date(10000, 1, 1)
to_date('2026-02-30')
to_date('2026-13-01', 'yyyy-MM-dd')
to_timestamp('2026-03-29 02:30:00')
to_timestamp('29.03.2026 02:30', 'dd.MM.yyyy HH:mm')
to_timestamp('2026-03-29T02:30:00.5+01:00')
date_add(DATE'9999-12-31', 1)
date_sub(DATE'0001-01-01', 1)
add_months(DATE'9999-12-31', 1)
DATE'2024-02-29' + INTERVAL 1 YEAR
add_months(DATE'2024-01-31', 1)
add_months(DATE'2026-01-31', 1)
last_day(DATE'2024-02-01')
datediff(DATE'9999-12-31', DATE'0001-01-01')
from_unixtime(0)
from_unixtime(1774747800, 'yyyy-MM-dd HH:mm')
from_unixtime(-62135596800)
timestamp_seconds(253402300800)
to_utc_timestamp(TIMESTAMP'2026-03-29 02:30:00', 'Europe/Paris')
to_utc_timestamp(TIMESTAMP'2026-03-08 02:30:00', 'America/New_York')
to_utc_timestamp(TIMESTAMP'2026-10-25 02:30:00', 'Europe/Paris')
from_utc_timestamp(TIMESTAMP'2026-10-25 00:30:00', 'Europe/Paris')
from_utc_timestamp(TIMESTAMP'2026-10-25 01:30:00', 'Europe/Paris')
TIMESTAMP'2026-03-29 01:30:00' + INTERVAL 1 HOUR
DATE'1582-10-04' + 1
DATE'1582-10-15' - 1
datediff(DATE'1582-10-15', DATE'1582-10-04')
dayofweek(DATE'1582-10-04')

-- table: raw.zoned
-- timestamps whose Parquet files name another zone (Europe/Paris, America/New_York): the same
-- instants as a UTC column, read in the session time zone
paris
CAST(paris AS DATE)
CAST(ny AS DATE)
to_date(paris)
CAST(paris AS STRING)
CAST(ny AS STRING)
CAST(paris AS TIMESTAMP_NTZ)
paris = ny
paris = utc
paris >= DATE'2026-01-01'
ny < DATE'2026-03-29'
CAST(paris AS DATE) = DATE'2026-01-01'
date_trunc('DAY', paris)
date_trunc('HOUR', ny)
hour(paris)
dayofmonth(ny)
date_format(paris, 'yyyy-MM-dd HH:mm')
unix_timestamp(ny)
datediff(paris, DATE'2026-01-01')
unix_seconds(paris)
unix_millis(ny)
