-- String functions over ASCII, empty, NULL, non-ASCII letters, CJK, an emoji, padding,
-- separators and digits: lengths count characters, not bytes; 1-based positions.

-- table: raw.texts
-- case
upper(s)
lower(s)
initcap(s)
ucase(s)
-- lengths: characters, bytes, bits
length(s)
char_length(s)
character_length(s)
octet_length(s)
bit_length(s)
-- concatenation: NULL propagates through concat and ||, concat_ws skips NULLs
concat(s, '!')
concat(s, NULL)
concat(s, '-', k)
s || '|' || s
concat_ws('|', s, k)
concat_ws(',', s, NULL, 'z')
concat_ws('', s, s)
-- trimming
trim(s)
ltrim(s)
rtrim(s)
trim(BOTH 'a' FROM s)
trim(LEADING ' ' FROM s)
btrim(s, ' ad')
length(trim(s))
-- padding, also to lengths shorter than the string (which truncate)
lpad(s, 10, '*')
rpad(s, 10, '*')
lpad(s, 3, '*')
rpad(s, 3, 'xy')
lpad(s, 9, 'xy')
lpad(s, 8)
lpad(s, 0, '*')
lpad(s, k, '0')
-- replacing and translating
replace(s, 'a', 'A')
replace(s, ',', '')
replace(s, '', 'x')
translate(s, 'abc', 'xy')
translate(s, 'ïö', 'io')
overlay(s PLACING '__' FROM 2 FOR 3)
-- searching: 1-based, 0 when not found
instr(s, 'b')
instr(s, 'テ')
locate('b', s)
locate('a', s, 2)
position('e' IN s)
contains(s, ',')
startswith(s, 'a')
endswith(s, 'e')
find_in_set('b', s)
-- splitting
split_part(s, ',', 2)
split_part(s, ',', -1)
split_part(s, ',', 5)
split(s, ',')
split(s, ',', 2)
size(split(s, ','))
substring_index(s, ',', 2)
substring_index(s, ',', -2)
-- regular expressions (Java syntax)
regexp_replace(s, '[0-9]', '#')
regexp_replace(s, '\\s+', '_')
regexp_replace(s, '(\\w)(\\w)', '$2$1')
regexp_extract(s, '([a-z]+)', 1)
regexp_extract(s, '(\\d+)\\.?(\\d*)', 2)
regexp_extract(s, '^(.)', 0)
regexp_like(s, '^[0-9-]+$')
s RLIKE '[A-Z]'
regexp_count(s, '[a-z]')
regexp_instr(s, '[0-9]')
-- LIKE and ILIKE
s LIKE 'a%'
s LIKE '%_%'
s LIKE '__'
s LIKE '%,,%'
s ILIKE 'spark%'
s ILIKE 'ü%'
s NOT LIKE '%e%'
s LIKE '🙂%'
-- substrings: position 0 acts as 1, negative counts from the end
substring(s, 0, 3)
substring(s, 1, 3)
substring(s, 2)
substring(s, -2, 2)
substring(s, -3)
substring(s, -100, 3)
substring(s, 3, 0)
substring(s, 5, -1)
substr(s, 3, 100)
substring(s FROM 2 FOR 2)
left(s, 3)
right(s, 3)
left(s, 0)
right(s, -1)
-- reverse, repeat, characters and code points
reverse(s)
repeat(s, 2)
repeat(s, 0)
ascii(s)
chr(k + 65)
char(k + 233)
space(k)
-- formatting
format_string('%s-%05d', s, k)
format_string('%.2f', CAST(k AS DOUBLE))
format_string('[%8s]', s)
printf('%d%%', k)
format_number(k * 1234.5678, 2)
-- hashes and encodings (over UTF-8 bytes)
md5(s)
sha1(s)
sha2(s, 256)
sha2(s, 512)
sha2(s, 224)
crc32(s)
base64(s)
hex(s)
unhex(hex(s))
decode(unbase64(base64(s)), 'UTF-8')
encode(s, 'UTF-8')
-- string comparisons and max/min-like functions
s = upper(s)
lower(s) = s
greatest(s, 'm')
least(s, 'b')
levenshtein(s, 'abc')
soundex(s)
