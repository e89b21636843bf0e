//! opencode: the MCP server under `mcp` in `$XDG_CONFIG_HOME/opencode/opencode.json` (or the
//! `opencode.jsonc` there, if that is the one in use), and a block in the `AGENTS.md` beside
//! it. opencode's hooks are JavaScript plugins, not shell commands, so setup wires none: the
//! agent learns of new work from its instructions, its inbox and its wake command.

use jsonc_parser::cst::CstInputValue;

use super::command::Launch;
use super::json::{object, string_map, strings};
use super::{Environment, InstructionSlot, Layout, ServerSlot};

pub(super) fn layout(env: &Environment) -> Layout {
    let config_dir = env
        .xdg_config_home
        .clone()
        .unwrap_or_else(|| env.home.join(".config"))
        .join("opencode");
    let jsonc = config_dir.join("opencode.jsonc");
    let json = config_dir.join("opencode.json");
    let file = if jsonc.is_file() && !json.is_file() {
        jsonc
    } else {
        json
    };
    Layout {
        server: ServerSlot::Json {
            file,
            container: "mcp",
            entry: server_entry,
            args_key: "command",
        },
        hooks: None,
        instructions: InstructionSlot::Block(config_dir.join("AGENTS.md")),
        config_dir,
        notes: vec![
            "opencode has no shell hooks (its hooks are JavaScript plugins), so none were \
             wired: the agent checks its inbox as its instructions say, and is woken with \
             `opencode run`"
                .to_string(),
        ],
    }
}

/// opencode takes the program and its arguments as one `command` list.
fn server_entry(launch: &Launch) -> CstInputValue {
    let mut command = vec![launch.baton.display().to_string()];
    command.extend(launch.mcp_args());
    let mut members = vec![("type", "local".into()), ("command", strings(&command))];
    let env = launch.mcp_env();
    if !env.is_empty() {
        members.push(("environment", string_map(env)));
    }
    members.push(("enabled", true.into()));
    object(members)
}
