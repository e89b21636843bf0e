//! Every command's `--help` ends with an example of it, as the README promises: walked
//! over the whole command tree, so a command added without one fails here.

use clap::{CommandFactory, Parser};

use super::Cli;

/// The commands under `command` that a user runs (a group's leaves, hidden ones left out),
/// each with the words that name it: `["project", "init"]`.
fn runnable(command: &clap::Command, path: Vec<String>, found: &mut Vec<(Vec<String>, String)>) {
    let subcommands: Vec<&clap::Command> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
        .collect();
    if subcommands.is_empty() {
        found.push((path, command.clone().render_long_help().to_string()));
        return;
    }
    for sub in subcommands {
        let mut words = path.clone();
        words.push(sub.get_name().to_string());
        runnable(sub, words, found);
    }
}

/// The words of a shell command line from `baton` on, as the shell would pass them: quotes
/// taken off, and cut where the command ends (`&&`, `;`, `|`, `)`, a comment, a
/// continuation). `None` when the line runs no `baton`.
fn baton_words(line: &str) -> Option<Vec<String>> {
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, ' ' | '\t') => words.extend(word.take()),
            // `T=$(baton …)`: the command starts inside; `--to dir-$(date)` ends it.
            (None, '(') => {
                if words.iter().any(|word| word == "baton") {
                    break;
                }
                word = None;
                words.clear();
            }
            // Another command starts: the one before ends baton's, or was not baton.
            (None, ';' | '|' | '&') => {
                words.extend(word.take());
                if words.iter().any(|word| word == "baton") {
                    break;
                }
                words.clear();
            }
            (None, ')' | '#' | '\\') => break,
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word.take());
    // From the last `baton`: `claude mcp add baton -- baton mcp` runs the second.
    let start = words.iter().rposition(|word| word == "baton")?;
    Some(words.split_off(start))
}

#[test]
fn every_command_s_help_shows_an_example_of_it() {
    let mut root = Cli::command();
    root.build();
    let mut found = Vec::new();
    runnable(&root, Vec::new(), &mut found);
    assert!(
        found.len() > 40,
        "the walk found the commands: {}",
        found.len()
    );
    let mut missing = Vec::new();
    let mut unparsed = Vec::new();
    for (words, help) in &found {
        // An `Example` heading, and after it a line that runs this very command.
        let example = help
            .lines()
            .skip_while(|line| !line.starts_with("Example"))
            .filter(|line| !line.starts_with("Usage:"))
            .collect::<Vec<_>>()
            .join("\n");
        let command: Vec<&str> = std::iter::once("baton")
            .chain(words.iter().map(String::as_str))
            .collect();
        let runs_it = example.lines().filter_map(baton_words).any(|words| {
            // `baton --as boss watch`: the global flags may stand before the command.
            let mut said = Vec::new();
            let mut words = words.iter().map(String::as_str);
            while let Some(word) = words.next() {
                match word {
                    "--as" | "--project" => {
                        words.next();
                    }
                    "--json" | "--no-wake" => {}
                    word => said.push(word),
                }
            }
            said.starts_with(&command)
        });
        // The example is a command line baton takes as it is written.
        let parses = example
            .lines()
            .filter_map(baton_words)
            .filter(|words| words.len() > 1)
            .all(|words| match Cli::try_parse_from(&words) {
                Ok(_) => true,
                Err(error) => {
                    unparsed.push(format!("{}: {error}", words.join(" ")));
                    false
                }
            });
        if !runs_it || !parses {
            missing.push(command.join(" "));
        }
    }
    assert!(
        missing.is_empty(),
        "--help without an example that runs the command: {missing:?}\n{}",
        unparsed.join("\n")
    );
}
