//! Claude Code: the MCP server in `~/.claude.json` (user scope), hooks in
//! `~/.claude/settings.json`, and a skill in `~/.claude/skills/baton/`. With
//! `CLAUDE_CONFIG_DIR` set, all three live in that directory instead (`.claude.json` too).

use jsonc_parser::cst::CstInputValue;

use crate::client::{Client, ClientHooks, HookShell};

use super::command::Launch;
use super::json::{command_hook_group, object, string_map, strings};
use super::remote::TokenSyntax;
use super::{Environment, HookSlot, InstructionSlot, Layout, ServerSlot};

/// How to start a Claude Code session that takes baton's pushes (CLIENTS.md: channels are
/// a research preview, interactive sessions only, on a first-party login).
pub const CHANNELS_NOTE: &str = "to have new work pushed into a running session, start it as \
     `claude --dangerously-load-development-channels server:baton` (interactive sessions \
     only, on a claude.ai or Console login; setup does not add the flag for you)";

pub(super) fn layout(env: &Environment) -> Layout {
    let (config_dir, state_file) = match &env.claude_config_dir {
        Some(dir) => (dir.clone(), dir.join(".claude.json")),
        None => (env.home.join(".claude"), env.home.join(".claude.json")),
    };
    Layout {
        server: ServerSlot::Json {
            file: state_file,
            container: "mcpServers",
            entry: server_entry,
            args_key: "args",
        },
        hooks: Some(HookSlot {
            file: config_dir.join("settings.json"),
            group: hook_group,
        }),
        plugin: None,
        instructions: InstructionSlot::Skill(config_dir.join("skills/baton/SKILL.md")),
        config_dir,
        // Setup leaves the flag to the user on purpose: it is a research-preview switch
        // that loads a development channel, for sessions started by hand.
        notes: vec![CHANNELS_NOTE.to_string()],
    }
}

/// A local server is `baton --as NAME mcp`; a remote hub's is its MCP URL, the token in the
/// header as `${VAR}`, which Claude Code expands from its environment when it connects
/// (and warns of when the variable is not set), at user scope as in `.mcp.json`.
fn server_entry(launch: &Launch) -> CstInputValue {
    if let Some(hub) = launch.remote() {
        let header = hub.bearer_header(TokenSyntax::Braces);
        return object(vec![
            ("type", "http".into()),
            ("url", hub.mcp_url().into()),
            (
                "headers",
                string_map(vec![("Authorization".to_string(), header)]),
            ),
        ]);
    }
    let mut members = vec![
        ("type", "stdio".into()),
        ("command", launch.baton.display().to_string().into()),
        ("args", strings(&launch.mcp_args())),
    ];
    let env = launch.mcp_env();
    if !env.is_empty() {
        members.push(("env", string_map(env)));
    }
    object(members)
}

fn hook_group(
    launch: &Launch,
    _event: &str,
    matcher: Option<&str>,
    command: String,
    hooks: &ClientHooks,
) -> CstInputValue {
    // On Windows Claude Code runs a hook with Git Bash where it finds one, else PowerShell:
    // the line is written for PowerShell, so the hook says so.
    let shell = (launch.platform.hook_shell(Client::Claude) == HookShell::PowerShell)
        .then_some("powershell");
    command_hook_group(matcher, command, None, shell, hooks)
}
