//! Codex CLI: the MCP server as `[mcp_servers.baton]` in `$CODEX_HOME/config.toml`, hooks in
//! `$CODEX_HOME/hooks.json` (Claude Code's shape), and a block in `$CODEX_HOME/AGENTS.md`.
//! `CODEX_HOME` defaults to `~/.codex`. The TOML is edited with `toml_edit`, so the user's
//! comments and layout stay.

use std::path::Path;

use jsonc_parser::cst::CstInputValue;
use serde_json::Value;
use toml_edit::{Array, DocumentMut, Item, Table};

use crate::client::{Client, ClientHooks, HookEvent};
use crate::error::{Error, Result, SetupError};

use super::command::Launch;
use super::json::{KeyPath, Outcome, command_hook_group};
use super::{Environment, HookSlot, InstructionSlot, Layout, SERVER_NAME, ServerSlot};

const SERVERS: &str = "mcp_servers";

pub(super) fn layout(env: &Environment) -> Layout {
    let [start, prompt, stop] = HookEvent::ALL.map(|event| {
        Client::Codex
            .hooks()
            .map_or(event.name(), |hooks| hooks.event_name(event))
    });
    let config_dir = env
        .codex_home
        .clone()
        .unwrap_or_else(|| env.home.join(".codex"));
    Layout {
        server: ServerSlot::Toml {
            file: config_dir.join("config.toml"),
        },
        hooks: Some(HookSlot {
            file: config_dir.join("hooks.json"),
            group: hook_group,
        }),
        plugin: None,
        instructions: InstructionSlot::Block(config_dir.join("AGENTS.md")),
        config_dir,
        notes: vec![format!(
            "Codex runs hooks only once you trust them: start `codex`, open /hooks and trust \
             baton's {start}, {prompt}, {stop} and {guard} hooks (setup does not do that for \
             you; until then Codex skips them without a word, and baton's {guard} hook cannot \
             stop an edit of a path another agent reserved)",
            guard = Client::Codex.edit_guard().event_name,
        )],
    }
}

fn hook_group(
    _launch: &Launch,
    _event: &str,
    matcher: Option<&str>,
    command: String,
    hooks: &ClientHooks,
) -> CstInputValue {
    command_hook_group(matcher, command, None, None, hooks)
}

fn parse(path: &Path, text: Option<&str>) -> Result<DocumentMut> {
    text.unwrap_or("")
        .parse()
        .map_err(|error: toml_edit::TomlError| {
            SetupError::NotToml {
                path: path.to_path_buf(),
                cause: error.message().to_string(),
            }
            .into()
        })
}

fn not_a_table(path: &Path) -> Error {
    SetupError::NotTomlTable {
        path: path.to_path_buf(),
        table: SERVERS,
    }
    .into()
}

/// baton's server table as Codex reads it: `baton --as NAME mcp`, or a remote hub's MCP URL
/// with `bearer_token_env_var`, the variable Codex reads the token from when it connects.
fn server_table(launch: &Launch) -> Table {
    let mut table = Table::new();
    match launch.remote() {
        Some(hub) => {
            table["url"] = toml_edit::value(hub.mcp_url());
            table["bearer_token_env_var"] = toml_edit::value(hub.token_env());
        }
        None => {
            table["command"] = toml_edit::value(launch.baton.display().to_string());
            table["args"] = toml_edit::value(launch.mcp_args().into_iter().collect::<Array>());
        }
    }
    // `codex exec` (the wake command) runs with approvals off and then refuses every MCP
    // call that would need one; baton's tools only act on the board as this agent.
    table["default_tools_approval_mode"] = toml_edit::value("approve");
    if launch.remote().is_none() {
        // Codex gives its MCP servers a filtered environment without its home; the server
        // needs it to find the app-server socket it pushes work through (`mcp::codex`).
        table["env_vars"] = toml_edit::value(Array::from_iter(["CODEX_HOME"]));
    }
    let env = launch.mcp_env();
    if !env.is_empty() {
        let mut env_table = Table::new();
        for (key, value) in env {
            env_table[key.as_str()] = toml_edit::value(value);
        }
        table["env"] = Item::Table(env_table);
    }
    table
}

/// Sets `[mcp_servers.baton]`; returns the new text, what happened, and the tables created.
pub(super) fn set_server(
    path: &Path,
    text: Option<&str>,
    launch: &Launch,
) -> Result<(String, Outcome, Vec<KeyPath>)> {
    let mut document = parse(path, text)?;
    let wanted = server_table(launch);
    let existing = document
        .get(SERVERS)
        .and_then(|servers| servers.get(SERVER_NAME));
    if existing.map(to_json) == Some(to_json(&Item::Table(wanted.clone()))) {
        return Ok((document.to_string(), Outcome::Unchanged, Vec::new()));
    }
    let mut created = Vec::new();
    if !document.contains_key(SERVERS) {
        // Implicit: the file gets `[mcp_servers.baton]` without an empty `[mcp_servers]`.
        let mut servers = Table::new();
        servers.set_implicit(true);
        document.insert(SERVERS, Item::Table(servers));
        created.push(vec![SERVERS.to_string()]);
    }
    let servers = document
        .get_mut(SERVERS)
        .and_then(Item::as_table_mut)
        .ok_or_else(|| not_a_table(path))?;
    let outcome = if servers.contains_key(SERVER_NAME) {
        Outcome::Updated
    } else {
        Outcome::Added
    };
    servers.insert(SERVER_NAME, Item::Table(wanted));
    Ok((document.to_string(), outcome, created))
}

/// Removes `[mcp_servers.baton]`; `None` when it is not there.
pub(super) fn remove_server(path: &Path, text: Option<&str>) -> Result<Option<String>> {
    let mut document = parse(path, text)?;
    let removed = document
        .get_mut(SERVERS)
        .and_then(Item::as_table_like_mut)
        .and_then(|servers| servers.remove(SERVER_NAME))
        .is_some();
    Ok(removed.then(|| document.to_string()))
}

/// Drops the tables at `keys` that are empty; returns the text and whether the whole
/// document is now empty.
pub(super) fn prune(path: &Path, text: &str, keys: &[KeyPath]) -> Result<(String, bool)> {
    let mut document = parse(path, Some(text))?;
    for key in keys {
        if let [name] = key.as_slice()
            && document
                .get(name)
                .and_then(Item::as_table_like)
                .is_some_and(|table| table.is_empty())
        {
            document.remove(name);
        }
    }
    let is_empty = document.is_empty();
    Ok((document.to_string(), is_empty))
}

/// `[mcp_servers.baton]` as JSON, if it is there.
pub(super) fn server_entry(path: &Path, text: Option<&str>) -> Result<Option<Value>> {
    let document = parse(path, text)?;
    Ok(document
        .get(SERVERS)
        .and_then(|servers| servers.get(SERVER_NAME))
        .map(to_json))
}

/// A TOML item as JSON, to compare values whatever their layout (inline or not).
fn to_json(item: &Item) -> Value {
    match item {
        Item::None => Value::Null,
        Item::Value(value) => value_to_json(value),
        Item::Table(table) => Value::Object(
            table
                .iter()
                .map(|(key, item)| (key.to_string(), to_json(item)))
                .collect(),
        ),
        Item::ArrayOfTables(tables) => Value::Array(
            tables
                .iter()
                .map(|table| to_json(&Item::Table(table.clone())))
                .collect(),
        ),
    }
}

fn value_to_json(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as Toml;
    match value {
        Toml::String(text) => Value::String(text.value().clone()),
        Toml::Integer(number) => Value::from(*number.value()),
        Toml::Float(number) => Value::from(*number.value()),
        Toml::Boolean(flag) => Value::Bool(*flag.value()),
        Toml::Datetime(at) => Value::String(at.value().to_string()),
        Toml::Array(items) => Value::Array(items.iter().map(value_to_json).collect()),
        Toml::InlineTable(table) => Value::Object(
            table
                .iter()
                .map(|(key, value)| (key.to_string(), value_to_json(value)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::remote::RemoteHub;
    use crate::setup::{HubAccess, Platform};
    use std::path::PathBuf;

    fn launch() -> Launch {
        Launch {
            baton: PathBuf::from("/opt/bin/baton"),
            access: HubAccess::Local {
                agent: "codex".into(),
                home: Some(PathBuf::from("/tmp/hub")),
                store: None,
            },
            platform: Platform::Unix,
            baton_on_path: false,
        }
    }

    const ORIGINAL: &str = r#"# my Codex settings
model = "o4" # the one I like

[mcp_servers.docs]
command = "docs-server"   # keep this comment
args = ["--port", "0"]

[profiles.fast]
model = "o4-mini"
"#;

    #[test]
    fn adds_the_server_keeping_comments_and_removes_it_exactly() {
        let path = Path::new("config.toml");
        let (text, outcome, created) = set_server(path, Some(ORIGINAL), &launch()).unwrap();
        assert_eq!(outcome, Outcome::Added);
        assert!(created.is_empty());
        assert!(text.starts_with("# my Codex settings\nmodel = \"o4\" # the one I like\n"));
        assert!(text.contains("command = \"docs-server\"   # keep this comment\n"));
        assert!(text.contains(
            "[mcp_servers.baton]\ncommand = \"/opt/bin/baton\"\nargs = [\"--as\", \"codex\", \"mcp\"]\n\
             default_tools_approval_mode = \"approve\"\nenv_vars = [\"CODEX_HOME\"]\n"
        ), "{text}");
        assert!(text.contains("[mcp_servers.baton.env]\nBATON_HOME = \"/tmp/hub\"\n"));
        let entry = server_entry(path, Some(&text)).unwrap().unwrap();
        assert_eq!(entry["args"][1], "codex");

        let (again, outcome, _) = set_server(path, Some(&text), &launch()).unwrap();
        assert_eq!(outcome, Outcome::Unchanged);
        assert_eq!(again, text);

        let removed = remove_server(path, Some(&text)).unwrap().unwrap();
        assert_eq!(removed, ORIGINAL);
        assert_eq!(remove_server(path, Some(ORIGINAL)).unwrap(), None);
    }

    #[test]
    fn a_remote_hub_is_its_url_and_the_token_s_variable_and_replaces_a_local_server() {
        let path = Path::new("config.toml");
        let (local, _, _) = set_server(path, Some(ORIGINAL), &launch()).unwrap();
        let mut remote = launch();
        remote.access = HubAccess::Remote(RemoteHub::new("http://hub:7878/", "HUB_TOKEN").unwrap());
        let (text, outcome, _) = set_server(path, Some(&local), &remote).unwrap();
        assert_eq!(outcome, Outcome::Updated);
        assert!(
            text.contains(
                "[mcp_servers.baton]\nurl = \"http://hub:7878/mcp\"\n\
                 bearer_token_env_var = \"HUB_TOKEN\"\ndefault_tools_approval_mode = \"approve\"\n"
            ),
            "{text}"
        );
        assert!(!text.contains("command = \"/opt/bin/baton\""), "{text}");
        assert!(!text.contains("BATON_HOME"), "{text}");
        assert_eq!(remove_server(path, Some(&text)).unwrap().unwrap(), ORIGINAL);
    }

    #[test]
    fn a_new_servers_table_is_implicit_and_pruned_again() {
        let path = Path::new("config.toml");
        let original = "model = \"o4\"\n";
        let (text, _, created) = set_server(path, Some(original), &launch()).unwrap();
        assert!(!text.contains("[mcp_servers]\n"), "{text}");
        assert_eq!(created, vec![vec!["mcp_servers".to_string()]]);
        let removed = remove_server(path, Some(&text)).unwrap().unwrap();
        let (pruned, is_empty) = prune(path, &removed, &created).unwrap();
        assert_eq!(pruned, original);
        assert!(!is_empty);

        let (text, _, created) = set_server(path, None, &launch()).unwrap();
        let removed = remove_server(path, Some(&text)).unwrap().unwrap();
        assert_eq!(
            prune(path, &removed, &created).unwrap(),
            (String::new(), true)
        );
    }
}
