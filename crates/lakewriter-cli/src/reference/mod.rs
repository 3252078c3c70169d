//! The reference pages that follow from the code, checked by tests: `docs/reference/cli.md` is
//! rendered from the clap definition and must equal it (`LAKEWRITER_BLESS=1 cargo test -p
//! lakewriter-cli --bin lakewriter reference` rewrites it), `docs/reference/project-file.md` must
//! name every key the parser accepts, and `docs/reference/events.md` is rendered from
//! `schema/events.schema.json` (the same command rewrites it). The write modes those files and
//! the events schema list are the parser's (`WriteMode::ALL`), rewritten by the same command.

mod events;

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Arg, ArgAction, Command, CommandFactory};

use crate::cli::Cli;

/// The command that rewrites the generated pages.
const BLESS: &str = "LAKEWRITER_BLESS=1 cargo test -p lakewriter-cli --bin lakewriter reference";

/// `docs/reference/cli.md`: every command, its description, arguments and options.
fn render_cli() -> String {
    let mut cli = Cli::command();
    cli.build();
    let mut out = String::from("# Command-line reference\n\n");
    let _ = writeln!(
        out,
        "<!-- Generated from crates/lakewriter-cli/src/cli/; a test checks it. Rewrite it with\n     {BLESS} -->\n"
    );
    out.push_str(
        "The options, arguments and defaults of every command, as `lakewriter help` gives them. What \
         the commands print, their logs and exit codes: [The command line](../guide/command-line.md).\n",
    );
    render_command(&mut out, &cli, true);
    for sub in cli.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        render_command(&mut out, sub, false);
    }
    out
}

fn render_command(out: &mut String, cmd: &Command, top: bool) {
    let name = cmd.get_bin_name().unwrap_or(cmd.get_name());
    let _ = writeln!(out, "\n## `{name}`\n");
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        let _ = writeln!(out, "{}\n", sentence(&about.to_string()));
    }
    let usage = cmd.clone().render_usage().to_string();
    let _ = writeln!(out, "```text\n{}\n```", usage.trim_start_matches("Usage: "));
    if top {
        out.push_str("\nCommands:\n\n");
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
            let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
            let first = about.split(". ").next().unwrap_or_default().trim_end_matches('.');
            let _ = writeln!(out, "- [`{}`](#{}): {first}.", sub.get_name(), anchor(sub));
        }
    }
    // Global options, help and version are listed once, with the top command.
    let once = |a: &Arg| a.is_global_set() || ["help", "version"].contains(&a.get_id().as_str());
    let args: Vec<&Arg> = cmd.get_arguments().filter(|a| !a.is_hide_set() && (top || !once(a))).collect();
    for (title, positional) in [("Arguments", true), ("Options", false)] {
        let group: Vec<&&Arg> = args.iter().filter(|a| a.is_positional() == positional).collect();
        if !group.is_empty() {
            let _ = writeln!(out, "\n{title}:\n");
            for arg in group {
                let _ = writeln!(out, "- {}", render_arg(arg));
            }
        }
    }
}

/// The anchor GitHub gives the heading of `lakewriter NAME`.
fn anchor(sub: &Command) -> String {
    format!("lakewriter-{}", sub.get_name())
}

/// One argument: its name and value, its help, and what clap knows of its values.
fn render_arg(arg: &Arg) -> String {
    let values = arg.get_value_names().unwrap_or_default();
    let value = values.iter().map(|v| format!("<{v}>")).collect::<Vec<_>>().join(" ");
    let value = if value.is_empty() { format!("<{}>", arg.get_id().as_str().to_uppercase()) } else { value };
    let multiple =
        if matches!(arg.get_action(), ArgAction::Append) || arg.get_num_args().is_some_and(|n| n.max_values() > 1) {
            "…"
        } else {
            ""
        };
    let mut line = match (arg.get_short(), arg.get_long()) {
        _ if arg.is_positional() => format!("`{value}{multiple}`"),
        (short, Some(long)) => {
            let short = short.map(|s| format!("-{s}, ")).unwrap_or_default();
            let value = if arg.get_action().takes_values() { format!(" {value}{multiple}") } else { String::new() };
            format!("`{short}--{long}{value}`")
        }
        (Some(short), None) => format!("`-{short}`"),
        (None, None) => format!("`{}`", arg.get_id()),
    };
    let help = arg.get_long_help().or(arg.get_help()).map(ToString::to_string).unwrap_or_default();
    if !help.is_empty() {
        let _ = write!(line, ": {}", sentence(&help.replace('\n', " ")));
    }
    let possible: Vec<String> =
        arg.get_possible_values().iter().filter(|v| !v.is_hide_set()).map(|v| format!("`{}`", v.get_name())).collect();
    if !possible.is_empty() && arg.get_action().takes_values() {
        let _ = write!(line, " Values: {}.", possible.join(", "));
    }
    let defaults: Vec<String> = arg.get_default_values().iter().map(|v| format!("`{}`", v.to_string_lossy())).collect();
    if !defaults.is_empty() && arg.get_action().takes_values() {
        let _ = write!(line, " Default: {}.", defaults.join(", "));
    }
    if let Some(env) = arg.get_env() {
        let _ = write!(line, " Environment: `{}`.", env.to_string_lossy());
    }
    if arg.is_positional() && !arg.is_required_set() {
        line.push_str(" Optional.");
    } else if !arg.is_positional() && arg.is_required_set() {
        line.push_str(" Required.");
    }
    line
}

/// `text` ending with a full stop: clap drops the one of a one-line doc comment.
fn sentence(text: &str) -> String {
    let text = text.trim_end();
    if text.ends_with('.') { text.to_owned() } else { format!("{text}.") }
}

/// A list of the write modes in a file of the docs: after `heading`, up to `end`, each mode
/// between two `quote`s.
struct ModeList {
    path: &'static str,
    heading: &'static str,
    end: &'static str,
    quote: char,
}

/// The events schema's `write_mode` enum and the project file's `write` row.
const WRITE_MODE_LISTS: [ModeList; 2] = [
    ModeList { path: "schema/events.schema.json", heading: "\"write_mode\": {\n", end: "]", quote: '"' },
    ModeList { path: "docs/reference/project-file.md", heading: "| `write` | `[jobs.NAME]` | ", end: " |", quote: '`' },
];

impl ModeList {
    /// `text` with this list made the parser's ([`lakewriter_core::WriteMode::ALL`]).
    fn listed(&self, text: &str) -> String {
        let quote = self.quote;
        let modes: Vec<String> =
            lakewriter_core::WriteMode::ALL.iter().map(|m| format!("{quote}{}{quote}", m.as_str())).collect();
        let Some(start) = text.find(self.heading).and_then(|h| text[h..].find(&modes[0]).map(|i| h + i)) else {
            return text.to_owned();
        };
        let stop = text[start..].find(self.end).map_or(text.len(), |i| start + i);
        format!("{}{}{}", &text[..start], modes.join(", "), &text[stop..])
    }
}

/// The repository's root, where `docs/` is.
fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repository().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::{BLESS, WRITE_MODE_LISTS, read, render_cli, repository};

    #[test]
    fn reference_cli_md_is_the_clap_definition_rendered() {
        same_as_rendered("docs/reference/cli.md", &render_cli(), "the command line (crates/lakewriter-cli/src/cli/)");
    }

    #[test]
    fn reference_events_md_is_the_events_schema_rendered() {
        let schema: serde_json::Value = serde_json::from_str(&read("schema/events.schema.json")).expect("the schema");
        same_as_rendered("docs/reference/events.md", &super::events::render(&schema), "schema/events.schema.json");
    }

    #[test]
    fn every_field_of_every_kind_of_the_events_schema_is_required() {
        /// The closed objects below `value` whose properties are not all required, by where they are.
        fn optional(value: &serde_json::Value, at: &str, found: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => {
                    let closed = map.get("additionalProperties") == Some(&serde_json::Value::Bool(false));
                    if let Some(properties) = map.get("properties").and_then(|p| p.as_object()).filter(|_| closed) {
                        let required: Vec<&str> = map["required"]
                            .as_array()
                            .map_or_else(Vec::new, |r| r.iter().filter_map(|k| k.as_str()).collect());
                        let mut listed = required.clone();
                        listed.sort_unstable();
                        let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
                        if listed != keys {
                            found.push(format!("{at}: required {required:?}, properties {keys:?}"));
                        }
                    }
                    for (key, inner) in map {
                        optional(inner, &format!("{at}/{key}"), found);
                    }
                }
                serde_json::Value::Array(items) => {
                    for (i, inner) in items.iter().enumerate() {
                        optional(inner, &format!("{at}/{i}"), found);
                    }
                }
                _ => {}
            }
        }
        let schema: serde_json::Value = serde_json::from_str(&read("schema/events.schema.json")).expect("the schema");
        let mut found = Vec::new();
        optional(&schema, "", &mut found);
        assert!(found.is_empty(), "fields a line may leave out:\n{}", found.join("\n"));
    }

    /// The file at `path` is `rendered` (from `source`); with `LAKEWRITER_BLESS` it is rewritten.
    fn same_as_rendered(path: &str, rendered: &str, source: &str) {
        if std::env::var_os("LAKEWRITER_BLESS").is_some() {
            std::fs::write(repository().join(path), rendered).expect("write the reference");
            return;
        }
        let written = std::fs::read_to_string(repository().join(path)).unwrap_or_default();
        if written != rendered {
            let (rendered, written): (Vec<&str>, Vec<&str>) = (rendered.lines().collect(), written.lines().collect());
            let line = (0..rendered.len().max(written.len())).find(|&i| rendered.get(i) != written.get(i)).unwrap_or(0);
            let end = "(the end of the file)";
            let (expected, found) = (rendered.get(line).unwrap_or(&end), written.get(line).unwrap_or(&end));
            let line = line + 1;
            panic!(
                "{path} does not match {source}: first at line {line}:\n  \
                 rendered: {expected}\n  in file:  {found}\nrewrite it with `{BLESS}`"
            );
        }
    }

    #[test]
    fn reference_project_file_md_names_every_key_the_parser_accepts() {
        let page = read("docs/reference/project-file.md");
        for (table, keys) in lakewriter_core::project::KEYS {
            for key in *keys {
                let table = if table.is_empty() { "(top)".to_owned() } else { format!("`[{table}]`") };
                let row = format!("| `{key}` | {table} |");
                assert!(page.contains(&row), "docs/reference/project-file.md has no row starting `{row}`");
            }
        }
    }

    #[test]
    fn the_write_modes_the_docs_list_are_the_parsers() {
        for list in WRITE_MODE_LISTS {
            let (path, heading) = (list.path, list.heading);
            let written = read(path);
            let listed = list.listed(&written);
            if std::env::var_os("LAKEWRITER_BLESS").is_some() {
                std::fs::write(repository().join(path), &listed).expect("write the list");
            } else {
                assert!(written.contains(heading), "{path} has no `{}`", heading.trim_end());
                assert!(
                    listed == written,
                    "{path}: the write modes after `{}` are not WriteMode::ALL; rewrite them with `{BLESS}`",
                    heading.trim_end()
                );
            }
        }
        let guide = read("docs/guide/write-modes.md");
        for mode in lakewriter_core::WriteMode::ALL.iter().filter(|m| **m != lakewriter_core::WriteMode::Statement) {
            assert!(guide.contains(&format!("\n| `{mode}` |")), "docs/guide/write-modes.md has no row for `{mode}`");
        }
    }

    #[test]
    fn reference_project_file_md_example_parses() {
        let page = read("docs/reference/project-file.md");
        let example = page.split("```toml\n").nth(1).and_then(|rest| rest.split("```").next()).expect("a toml block");
        let file = std::path::Path::new("lakewriter.toml");
        let project = lakewriter_core::Project::parse(example, file).unwrap_or_else(|e| panic!("the example: {e}"));
        assert_eq!(project.jobs.keys().collect::<Vec<_>>(), ["customers"]);
    }
}
