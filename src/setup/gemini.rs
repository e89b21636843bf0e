//! Gemini CLI: the MCP server and the hooks both in `~/.gemini/settings.json` (hook timeouts
//! in milliseconds), and a block in `~/.gemini/GEMINI.md`. `GEMINI_CLI_HOME` moves `.gemini`.

use jsonc_parser::cst::CstInputValue;

use crate::client::ClientHooks;

use super::command::Launch;
use super::json::{command_hook_group, object, string_map, strings};
use super::remote::TokenSyntax;
use super::{Environment, HookSlot, InstructionSlot, Layout, ServerSlot};

pub(super) fn layout(env: &Environment) -> Layout {
    let config_dir = env
        .gemini_cli_home
        .as_ref()
        .unwrap_or(&env.home)
        .join(".gemini");
    let settings = config_dir.join("settings.json");
    Layout {
        server: ServerSlot::Json {
            file: settings.clone(),
            container: "mcpServers",
            entry: server_entry,
            args_key: "args",
        },
        hooks: Some(HookSlot {
            file: settings,
            group: hook_group,
        }),
        plugin: None,
        instructions: InstructionSlot::Block(config_dir.join("GEMINI.md")),
        config_dir,
        notes: Vec::new(),
    }
}

/// `trust` spares the user a confirmation for every baton tool call: the server is baton's
/// own and only touches the board. A remote hub's server is its Streamable HTTP URL
/// (`httpUrl`), the token in the header as `${VAR}`: Gemini CLI replaces `$VAR` and
/// `${VAR}` in every string of its settings with the variable's value when it loads them
/// (and keeps the text as written, never the value, when it saves them).
fn server_entry(launch: &Launch) -> CstInputValue {
    let mut members = match launch.remote() {
        Some(hub) => vec![
            ("httpUrl", hub.mcp_url().into()),
            (
                "headers",
                string_map(vec![(
                    "Authorization".to_string(),
                    hub.bearer_header(TokenSyntax::Braces),
                )]),
            ),
        ],
        None => {
            let mut members = vec![
                ("command", launch.baton.display().to_string().into()),
                ("args", strings(&launch.mcp_args())),
            ];
            let env = launch.mcp_env();
            if !env.is_empty() {
                members.push(("env", string_map(env)));
            }
            members
        }
    };
    members.push(("trust", true.into()));
    object(members)
}

/// Gemini CLI shows each hook's name. A remote hub's hook line reads the token as `"$VAR"`:
/// Gemini CLI puts the variable's value there itself when it loads its settings, before
/// the shell would, which comes to the same (the file keeps the name).
fn hook_group(
    _launch: &Launch,
    event: &str,
    matcher: Option<&str>,
    command: String,
    hooks: &ClientHooks,
) -> CstInputValue {
    let name = format!("baton {event}");
    command_hook_group(matcher, command, Some(name), None, hooks)
}
