"""An independent reader of lakewriter's tables: delta-rs Python (deltalake) and pyarrow.

    delta-reader.py read URI[@VERSION]…        one JSON line a table: its version, rows, distinct
                                              rows, active files and a digest of its sorted rows
    delta-reader.py unreferenced URI           the data files below the table that its latest
                                              version does not reference
    delta-reader.py vacuum URI                 removes them (a full vacuum, no retention); prints
                                              the files removed
    delta-reader.py checkpoint-every N URI     sets delta.checkpointInterval (a metadata commit)
    delta-reader.py set-property KEY VALUE URI sets a table property (a metadata commit, with no
                                              checkpoint or log clean-up after it)
    delta-reader.py rows URI                   the table's rows as JSON objects, sorted
    delta-reader.py tables URI…                one JSON line a table: its rows as objects (values
                                              JSON has no type for as Python's str prints them), or
                                              the error that kept it from being read
    delta-reader.py tree URI                   every file and folder below URI (a lakehouse
                                              root): path, size, modification time, SHA-256
    delta-reader.py delete PREDICATE URI       deletes the rows PREDICATE (SQL) matches: an edit by
                                              hand, by another writer; prints the rows deleted
    delta-reader.py interop URI [READER…] < ROWS
                                              the table read by delta-rs (deltalake), polars and a
                                              pyarrow dataset through delta-rs (or the READERs named),
                                              and ROWS (JSON Lines: the rows lakewriter reads), each
                                              as its row count and a digest of its rows in one
                                              canonical form
    delta-reader.py protocol URI               the table's protocol: reader and writer versions and
                                              table features
    delta-reader.py add-feature NAME URI       enables a table feature (deltalake's TableFeatures
                                              name, e.g. DeletionVectors), as another engine would
    delta-reader.py schema URI                 the table's columns as its log holds them: name, Delta
                                              type (JSON for nested ones) and whether it is nullable
    delta-reader.py write URI COLUMN < ROWS    appends ROWS (JSON Lines) to the table at URI,
                                              partitioned by COLUMN (a table delta-rs writes)

URIs are local paths or s3:// URLs; S3 options come from the standard AWS_* environment.
"""

import hashlib
import json
import os
import sys

from deltalake import DeltaTable


def options(uri):
    if not uri.startswith("s3://"):
        return None
    keys = ["AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ALLOW_HTTP"]
    return {k: os.environ[k] for k in keys if k in os.environ}


def table(uri, version=None):
    return DeltaTable(uri, version=version, storage_options=options(uri))


def filesystem(uri):
    """The filesystem of `uri` and the table's path on it."""
    from pyarrow import fs

    if not uri.startswith("s3://"):
        return fs.LocalFileSystem(), os.path.abspath(uri)
    endpoint = os.environ.get("AWS_ENDPOINT_URL", "")
    s3 = fs.S3FileSystem(
        access_key=os.environ.get("AWS_ACCESS_KEY_ID"),
        secret_key=os.environ.get("AWS_SECRET_ACCESS_KEY"),
        region=os.environ.get("AWS_REGION", "us-east-1"),
        endpoint_override=endpoint.split("://", 1)[-1] or None,
        scheme=endpoint.split("://", 1)[0] if "://" in endpoint else "https",
    )
    return s3, uri[len("s3://"):].rstrip("/")


def unreferenced(uri):
    """The data files below the table that its latest version does not reference."""
    from pyarrow import fs

    filesystem_, root = filesystem(uri)
    referenced = {u.split(uri.rstrip("/") + "/", 1)[-1] for u in table(uri).file_uris()}
    referenced = {r.split(root + "/", 1)[-1] for r in referenced}
    found = filesystem_.get_file_info(fs.FileSelector(root, recursive=True))
    files = [f.path.split(root + "/", 1)[-1] for f in found if f.type == fs.FileType.File]
    return sorted(f for f in files if not f.startswith("_delta_log/") and f not in referenced)


def read(spec):
    uri, _, version = spec.rpartition("@") if "@" in spec.rsplit("/", 1)[-1] else (spec, "", "")
    dt = table(uri, int(version) if version else None)
    rows = [json.dumps(row, sort_keys=True, default=str) for row in dt.to_pyarrow_table().to_pylist()]
    rows.sort()
    digest = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    files = len(dt.file_uris())
    return {"uri": uri, "version": dt.version(), "rows": len(rows), "distinct_rows": len(set(rows)), "files": files, "digest": digest}


def canonical(value):
    """A value as text, the same whichever reader gave it: decimals without trailing zeros,
    timestamps in ISO form with `Z` for UTC, dates in ISO form, NULL left out (by the caller)."""
    import datetime
    import decimal

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, float):
        return format(decimal.Decimal(repr(value)).normalize(), "f")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return json.dumps([canonical(v) for v in value])
    if isinstance(value, dict):
        return json.dumps({k: canonical(v) for k, v in sorted(value.items()) if v is not None})
    return str(value)


def summary(rows):
    """Row count and digest of `rows` (dicts), each row canonical and the rows sorted."""
    lines = sorted(json.dumps({k: canonical(v) for k, v in row.items() if v is not None}, sort_keys=True) for row in rows)
    return {"rows": len(lines), "digest": hashlib.sha256("\n".join(lines).encode()).hexdigest()}


READERS = ("deltalake", "polars", "pyarrow_dataset")


def interop(uri, lakewriter_rows, readers=READERS):
    """The table as each of `readers` reads it, and as lakewriter read it (`lakewriter_rows`: the
    lines of `lakewriter --json sql` for one query, each row a `{"statement": 1, "row": {…}}`)."""
    import decimal

    def polars_read():
        import polars

        return polars.read_delta(uri, storage_options=options(uri)).to_arrow()

    dt = table(uri)
    read_by = {
        "deltalake": dt.to_pyarrow_table,
        "polars": polars_read,
        "pyarrow_dataset": lambda: dt.to_pyarrow_dataset().to_table(),
    }
    read = {name: read_by[name]() for name in readers}
    out = {name: dict(summary(t.to_pylist()), columns=sorted(t.column_names)) for name, t in read.items()}
    lines = [json.loads(line, parse_float=decimal.Decimal) for line in lakewriter_rows if line.strip()]
    rows = [line["row"] for line in lines if "row" in line]
    out["lakewriter"] = summary(rows)
    return out


def rows(uri):
    """The table's rows, each as JSON with sorted keys (values JSON has no type for as text)."""
    return sorted(json.dumps(row, sort_keys=True, default=str) for row in table(uri).to_pyarrow_table().to_pylist())


def tables(uris):
    """Each table's rows (as objects), or why it could not be read: one line a table, so that a
    table that cannot be read does not hide the others."""
    for uri in uris:
        try:
            line = {"uri": uri, "rows": table(uri).to_pyarrow_table().to_pylist()}
        except Exception as error:  # the reader's own words, whatever failed
            line = {"uri": uri, "error": f"{type(error).__name__}: {error}"}
        print(json.dumps(line, default=str, sort_keys=True), flush=True)


def tree(uri):
    """Every file and folder below uri, Delta or not: its path, size, modification time and
    SHA-256 (a folder's is "folder")."""
    from pyarrow import fs

    filesystem_, root = filesystem(uri)
    found = filesystem_.get_file_info(fs.FileSelector(root, recursive=True, allow_not_found=True))
    entries = []
    for f in sorted(found, key=lambda f: f.path):
        if f.type == fs.FileType.File:
            with filesystem_.open_input_stream(f.path) as stream:
                sha = hashlib.sha256(stream.read()).hexdigest()
        else:
            sha = "folder"
        entries.append([f.path.split(root + "/", 1)[-1], f.size or 0, str(f.mtime), sha])
    return entries


def schema(uri):
    """The table's columns: [name, type, nullable], the type as Delta writes it (nested: JSON)."""
    fields = json.loads(table(uri).schema().to_json())["fields"]
    kind = lambda t: t if isinstance(t, str) else json.dumps(t, sort_keys=True)
    return [[f["name"], kind(f["type"]), f["nullable"]] for f in fields]


def main(argv):
    command, args = argv[0], argv[1:]
    if command == "read":
        for spec in args:
            print(json.dumps(read(spec)), flush=True)
    elif command == "schema":
        print(json.dumps(schema(args[0])))
    elif command == "rows":
        print(json.dumps(rows(args[0])))
    elif command == "tables":
        tables(args)
    elif command == "tree":
        print(json.dumps(tree(args[0])))
    elif command == "unreferenced":
        print(json.dumps(unreferenced(args[0])))
    elif command == "vacuum":
        files = table(args[0]).vacuum(retention_hours=0, dry_run=False, enforce_retention_duration=False, full=True)
        print(json.dumps(sorted(files)))
    elif command == "checkpoint-every":
        table(args[1]).alter.set_table_properties({"delta.checkpointInterval": args[0]})
    elif command == "set-property":
        from deltalake import PostCommitHookProperties

        hooks = PostCommitHookProperties(create_checkpoint=False, cleanup_expired_logs=False)
        table(args[2]).alter.set_table_properties({args[0]: args[1]}, post_commithook_properties=hooks)
    elif command == "interop":
        print(json.dumps(interop(args[0], sys.stdin.read().splitlines(), args[1:] or READERS)))
    elif command == "protocol":
        p = table(args[0]).protocol()
        print(json.dumps({
            "min_reader_version": p.min_reader_version,
            "min_writer_version": p.min_writer_version,
            "reader_features": sorted(p.reader_features or []),
            "writer_features": sorted(p.writer_features or []),
        }))
    elif command == "add-feature":
        from deltalake import TableFeatures

        table(args[1]).alter.add_feature(getattr(TableFeatures, args[0]), allow_protocol_versions_increase=True)
    elif command == "write":
        import pyarrow
        from deltalake import write_deltalake

        records = [json.loads(line) for line in sys.stdin.read().splitlines() if line.strip()]
        write_deltalake(
            args[0], pyarrow.Table.from_pylist(records), partition_by=[args[1]], mode="append", storage_options=options(args[0])
        )
    elif command == "delete":
        metrics = table(args[1]).delete(args[0])
        print(json.dumps(metrics.get("num_deleted_rows")))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
    # Leave without the interpreter's shutdown, where delta-rs's runtime threads can abort it
    # ("terminate called without an active exception") after the work is done.
    sys.stdout.flush()
    os._exit(0)
