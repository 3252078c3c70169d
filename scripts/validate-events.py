#!/usr/bin/env python3
"""Validates lakewriter's JSON Lines events against the events schema.

    scripts/validate-events.py SCHEMA [--kinds] < lines

Reads JSON Lines on stdin and validates each line against SCHEMA (JSON Schema draft 2020-12,
e.g. schema/events.schema.json). Prints nothing and exits 0 when every line is valid; else prints
each invalid line's number with the validator's messages and exits 1. Exits 2 on a usage error or
an invalid schema. With --kinds, also prints the kind of each valid line (the `$defs` entry of the
schema's top-level `oneOf` that it matches), one per line: `LINE KIND`.

Needs the standard library and jsonschema only (scripts/test installs it into .venv).
"""

import json
import sys

import jsonschema
from jsonschema.exceptions import best_match


def kind_validators(schema):
    """(kind, validator) for each `{"$ref": "#/$defs/KIND"}` of the schema's top-level `oneOf`."""
    kinds = []
    for branch in schema.get("oneOf", []):
        ref = branch.get("$ref", "")
        if ref.startswith("#/$defs/"):
            alone = {key: value for key, value in schema.items() if key != "oneOf"}
            kinds.append((ref[len("#/$defs/"):], jsonschema.Draft202012Validator({**alone, "$ref": ref})))
    return kinds


def messages(validator, kinds, value):
    """The validator's messages for an invalid `value`: the best match, and where the line has the
    shape of one kind, that kind's own errors (a `oneOf` alone says only that none matched)."""
    errors = list(validator.iter_errors(value))
    if not errors:
        return []
    scored = sorted((len(list(v.iter_errors(value))), kind, v) for kind, v in kinds)
    if scored and scored[0][0] > 0:
        count, kind, closest = scored[0]
        found = sorted(closest.iter_errors(value), key=lambda e: list(e.absolute_path))
        return [f"closest kind {kind}: {where(e)}{e.message}" for e in found]
    best = best_match(errors)
    return [f"{where(best)}{best.message}"]


def where(error):
    path = "/".join(str(p) for p in error.absolute_path)
    return f"at /{path}: " if path else ""


def main(argv):
    args = argv[1:]
    show_kinds = "--kinds" in args
    args = [a for a in args if a != "--kinds"]
    if len(args) != 1:
        print("usage: validate-events.py SCHEMA [--kinds] < lines", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as f:
        schema = json.load(f)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        print(f"{args[0]}: not a valid JSON Schema: {e.message}", file=sys.stderr)
        return 2
    validator = jsonschema.Draft202012Validator(schema)
    kinds = kind_validators(schema)
    invalid = 0
    for number, line in enumerate(sys.stdin, start=1):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            print(f"line {number}: not JSON: {e}")
            invalid += 1
            continue
        found = messages(validator, kinds, value)
        for message in found:
            print(f"line {number}: {message}")
        invalid += bool(found)
        if show_kinds and not found:
            matched = [kind for kind, v in kinds if v.is_valid(value)]
            print(f"{number} {','.join(matched)}")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
