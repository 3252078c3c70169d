-- A session time zone other than UTC (`time_zone`, Spark's `spark.sql.session.timeZone`): a
-- timestamp's date, text, fields and truncation, a date and a wall-clock time as instants, text
-- read as times there, over the US daylight-saving days (a skipped and a repeated hour) and the
-- local mean time New York kept before 1883 (raw.times' first instant of the year 1 is a time of
-- the year 0 there, which Delta does not store: raw.zoned holds the same cases on later times).
-- time_zone: America/New_York

-- table: raw.times
ts
CAST(ts AS DATE)
CAST(ts AS STRING)
CAST(ts AS TIMESTAMP_NTZ)
CAST(ntz AS TIMESTAMP)
CAST(d AS TIMESTAMP)
CAST(CAST(d AS TIMESTAMP) AS STRING)
to_date(ts)
date_format(ts, 'yyyy-MM-dd HH:mm:ss XXX')
date_format(ts, 'X')
date_format(ts, 'Z')
date_format(d, 'yyyy-MM-dd HH:mm XXX')
hour(ts)
minute(ts)
dayofmonth(ts)
dayofweek(ts)
date_trunc('DAY', ts)
date_trunc('HOUR', ts)
date_trunc('MONTH', ts)
date_trunc('WEEK', ts)
date_trunc('DAY', d)
trunc(ts, 'MM')
unix_timestamp(d)
unix_timestamp(ts)
unix_seconds(CAST(d AS TIMESTAMP))
from_unixtime(unix_seconds(ts))
from_unixtime(unix_seconds(ts), 'yyyy-MM-dd HH:mm XXX')
ts >= CAST(d AS TIMESTAMP)
ts > DATE'2026-03-08'
months_between(ts, TIMESTAMP'2026-01-01 00:00:00')
from_utc_timestamp(ts, 'Europe/Paris')
to_utc_timestamp(ts, 'Europe/Paris')
timestamp_seconds(1772955000)
from_unixtime(0)
CAST('2026-03-08 02:30:00' AS TIMESTAMP)
CAST('2026-11-01 01:30:00' AS TIMESTAMP)
CAST('2026-03-08' AS TIMESTAMP)
CAST('2026-03-08 12:00:00Z' AS TIMESTAMP)
TIMESTAMP'2026-03-08 02:30:00'
CAST(TIMESTAMP_NTZ'2026-03-08 02:30:00' AS TIMESTAMP)
CAST(TIMESTAMP_NTZ'2026-11-01 01:30:00' AS TIMESTAMP)
date_trunc('HOUR', TIMESTAMP'2026-11-01 01:30:00-05:00')
date_trunc('HOUR', TIMESTAMP'2026-11-01 01:30:00-04:00')
date_trunc('DAY', TIMESTAMP'2026-11-01 01:30:00-05:00')
date_format(TIMESTAMP'2026-11-01 01:30:00-05:00', 'yyyy-MM-dd HH:mm XXX')
CAST(TIMESTAMP'2026-11-01 01:30:00-05:00' AS STRING)

-- table: raw.zoned
CAST(paris AS DATE)
CAST(utc AS STRING)
paris = utc
CAST(ny AS TIMESTAMP_NTZ)
hour(utc)
CAST(utc AS DATE) = DATE'2026-01-01'
CAST(utc AS TIMESTAMP_NTZ)
to_date(utc)
date_trunc('DAY', utc)
date_trunc('HOUR', utc)
date_trunc('MONTH', utc)
date_trunc('WEEK', utc)
trunc(utc, 'MM')
from_utc_timestamp(utc, 'Europe/Paris')
to_utc_timestamp(utc, 'Europe/Paris')
CAST(CAST(utc AS TIMESTAMP_NTZ) AS TIMESTAMP)
CAST(CAST(utc AS DATE) AS TIMESTAMP)
date_trunc('DAY', CAST(utc AS DATE))

-- write: overwrite_day_in_zone
-- job: write = "overwrite_partition"
-- job: partition_by = "dt"
SELECT id, utc, CAST(utc AS DATE) AS dt FROM raw.zoned WHERE CAST(utc AS DATE) = $dt
-- spark: SELECT id, utc, CAST(utc AS DATE) AS dt FROM raw.zoned WHERE CAST(utc AS DATE) = $dt;
-- end
