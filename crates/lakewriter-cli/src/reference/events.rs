//! `docs/reference/events.md`, rendered from `schema/events.schema.json`: the line kinds (the
//! schema's top-level `oneOf`), a table of fields each, the shared types (the other `$defs`) and
//! the changes of each version (the schema's `changes`). Every field of a kind is required, so
//! the fields are listed in the order of `required` (the schema's own order).

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::BLESS;

/// The page for `schema` (the events schema, parsed).
pub fn render(schema: &Value) -> String {
    let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
    let kinds: Vec<&str> = referred(&schema["oneOf"]).collect();
    let mut out = String::from("# JSON Lines events: `--json`\n\n");
    let _ = writeln!(
        out,
        "<!-- Generated from schema/events.schema.json; a test checks it. Rewrite it with\n     {BLESS} -->\n"
    );
    let _ = writeln!(out, "{}\n", text(&schema["description"]));
    let _ = writeln!(
        out,
        "The schema is [`schema/events.schema.json`](../../schema/events.schema.json) (version {}); \
         `scripts/validate-events.py` checks lines against it, and `tests/e2e/commands/events_schema.rs` checks \
         every command's lines. Which fields each command prints, in words: [The command \
         line](../guide/command-line.md). What changed from one version to the next: [Changes](#changes).\n",
        schema["version"]
    );
    out.push_str("Line kinds:\n\n");
    for kind in &kinds {
        let _ = writeln!(out, "- [`{kind}`](#{kind}): {}", text(&defs[*kind]["description"]));
    }
    for kind in &kinds {
        let _ = write!(out, "\n## `{kind}`\n\n");
        section(&mut out, &defs[*kind], &defs);
    }
    out.push_str("\n## Shared types\n");
    for (name, def) in defs.iter().filter(|(name, _)| !kinds.contains(&name.as_str())) {
        let _ = write!(out, "\n### `{name}`\n\n");
        section(&mut out, def, &defs);
    }
    out.push_str("\n## Changes\n");
    for (version, changes) in schema["changes"].as_object().into_iter().flatten() {
        let _ = write!(out, "\n### Version {version}\n\n");
        for change in changes.as_array().into_iter().flatten() {
            let _ = writeln!(out, "- {}", text(change));
        }
    }
    out
}

/// A kind's or a shared type's description, then its fields, its values or its pattern.
fn section(out: &mut String, def: &Value, defs: &Map<String, Value>) {
    let _ = writeln!(out, "{}", text(&def["description"]));
    if def["properties"].is_object() {
        out.push_str("\n| field | type | meaning |\n|---|---|---|\n");
        rows(out, "", def);
    }
    let values = def["enum"].as_array().or_else(|| def["items"]["enum"].as_array());
    if let Some(values) = values {
        let _ = writeln!(out, "\nValues: {}.", listed(values.iter().map(|v| format!("`{}`", text(v)))));
    }
    if let Some(pattern) = def["pattern"].as_str() {
        let _ = writeln!(out, "\nPattern: `{pattern}`.");
    }
    for rule in referred(&def["allOf"]) {
        let _ = writeln!(out, "\nAlso: {}", text(&defs[rule]["description"]));
    }
}

/// The names of `object`'s properties, in the order of its `required`.
fn fields(object: &Value) -> impl Iterator<Item = &str> {
    object["required"].as_array().into_iter().flatten().filter_map(Value::as_str)
}

/// A row per property of `object`, and a row per property of an object written in place
/// (`summary.job`).
fn rows(out: &mut String, prefix: &str, object: &Value) {
    for name in fields(object) {
        let property = &object["properties"][name];
        let meaning = property["description"].as_str().unwrap_or_default();
        let _ = writeln!(out, "| `{prefix}{name}` | {} | {meaning} |", type_of(property));
        // An object written in place, or one of its alternatives (an object or null).
        let alternatives = property["anyOf"].as_array().into_iter().flatten();
        let object = std::iter::once(property)
            .chain(alternatives)
            .find(|p| p["type"] == "object" && p["properties"].is_object());
        if let Some(object) = object {
            rows(out, &format!("{prefix}{name}."), object);
        }
    }
}

/// A property's type in words: a shared type linked, `string or null`, `array of …`, the values
/// of an enum.
fn type_of(property: &Value) -> String {
    if let Some(name) = def_name(property) {
        return format!("[`{name}`](#{name})");
    }
    if let Some(choices) = property["anyOf"].as_array() {
        return alternatives(choices.iter().map(type_of));
    }
    if let Some(values) = property["enum"].as_array() {
        return listed(values.iter().map(|v| format!("`{}`", text(v))));
    }
    if let Some(value) = property.get("const") {
        return format!("`{value}`");
    }
    let types: Vec<&str> = match &property["type"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    alternatives(types.into_iter().map(|t| match t {
        "array" => match &property["items"] {
            item if item["properties"].is_object() => {
                format!("array of object ({})", listed(fields(item).map(|k| format!("`{k}`"))))
            }
            item => format!("array of {}", type_of(item)),
        },
        other => other.to_owned(),
    }))
}

/// The shared type `value` refers to (`{"$ref": "#/$defs/NAME"}`), by name.
fn def_name(value: &Value) -> Option<&str> {
    value["$ref"].as_str()?.strip_prefix("#/$defs/")
}

/// The shared types the items of the list `list` refer to (a `oneOf`, an `allOf`).
fn referred(list: &Value) -> impl Iterator<Item = &str> {
    list.as_array().into_iter().flatten().filter_map(def_name)
}

/// `a`, `a or b`, `a, b or c`.
fn alternatives(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "any".to_owned(),
    }
}

fn listed(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn text(value: &Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), ToOwned::to_owned)
}
