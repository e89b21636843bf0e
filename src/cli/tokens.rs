//! Token commands: token add/list/rm, the identities `baton serve` accepts.

use std::io::Write;

use clap::Subcommand;
use serde::Serialize;

use baton::error::Error;
use baton::text::inline;
use baton::time::{self, Timestamp};
use baton::tokens::{self, TokenRow};

use super::{Context, output};

const TOKEN_ABOUT: &str = "\
Make, list and remove the tokens `baton serve` accepts.

A token is an identity: every request to `baton serve` but /healthz carries one as
`Authorization: Bearer TOKEN`, and acts as the agent the token was made for, whatever the
request says. `baton token add NAME` prints a new token once; baton keeps only its SHA-256
hash (in $BATON_HOME/tokens.json), so it cannot be shown again: a lost token is removed
with `baton token rm NAME` and made again.

Example:
  T=$(baton token add codex)
  curl -H \"Authorization: Bearer $T\" http://127.0.0.1:7878/api/v1/…";

#[derive(Debug, Subcommand)]
#[command(about = "Make, list and remove the tokens `baton serve` accepts", long_about = TOKEN_ABOUT)]
pub enum TokenCommand {
    /// Make a token that acts as agent NAME and print it, once, alone on stdout
    #[command(
        after_help = "The token is printed once and stored only as a hash. An agent has one \
                      token at a time: `baton token rm NAME` before making another.\n\n\
                      Example: T=$(baton token add codex)"
    )]
    Add {
        /// The agent the token acts as
        name: String,
    },
    /// The tokens: whom each acts as, when it was made and last used
    #[command(after_help = "Example: baton token list")]
    List,
    /// Remove every token of agent NAME; requests carrying one fail from the next on
    #[command(after_help = "Example: baton token rm codex")]
    Rm {
        /// The agent whose tokens go
        name: String,
    },
}

#[derive(Serialize)]
struct Added<'a> {
    name: &'a str,
    token: &'a str,
    created_at: Timestamp,
}

pub fn run(context: &Context, command: TokenCommand) -> Result<i32, Error> {
    let as_json = context.global.json;
    match command {
        TokenCommand::Add { name } => {
            let now = time::now();
            let token = tokens::add(&*context.hub.store, &name, now)?;
            let added = Added {
                name: &name,
                token: &token,
                created_at: now,
            };
            // The token alone on stdout, so `T=$(baton token add NAME)` holds just it.
            output::emit(as_json, &added, |added| added.token.to_string());
            let _ = writeln!(
                std::io::stderr(),
                "this token acts as {}; it is shown this once: baton stores only its hash",
                inline(&name)
            );
        }
        TokenCommand::List => {
            let rows = tokens::list(&*context.hub.store)?;
            output::emit(as_json, &rows, |rows| table(rows, time::now()));
        }
        TokenCommand::Rm { name } => {
            let removed = tokens::remove(&*context.hub.store, &name)?;
            let value = serde_json::json!({"name": name, "removed": removed});
            output::emit(as_json, &value, |_| {
                format!("removed {removed} token(s) of {}", inline(&name))
            });
        }
    }
    Ok(0)
}

fn table(rows: &[TokenRow], now: Timestamp) -> String {
    if rows.is_empty() {
        return "no tokens yet: `baton token add NAME` makes one".to_string();
    }
    let names: Vec<String> = rows
        .iter()
        .map(|row| inline(&row.name).to_string())
        .collect();
    let name_width = names
        .iter()
        .map(|name| name.chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    let mut text = format!(
        "{:<name_width$}  {:<8} {:<9}\n",
        "NAME", "CREATED", "LAST USED"
    );
    for (row, name) in rows.iter().zip(&names) {
        let last_used = match row.last_used_at {
            Some(at) => format!("{} ago", time::age(at, now)),
            None => "never".to_string(),
        };
        let line = format!(
            "{name:<name_width$}  {:<8} {last_used:<9} {}",
            format!("{} ago", time::age(row.created_at, now)),
            if row.login { "web login" } else { "" }
        );
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}
