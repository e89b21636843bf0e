//! opencode: the MCP server under `mcp` in `$XDG_CONFIG_HOME/opencode/opencode.json` (or the
//! `opencode.jsonc` there, if that is the one in use), and a block in the `AGENTS.md` beside
//! it. opencode's hooks are JavaScript plugins, not shell commands: setup puts baton's
//! plugin (hooks/opencode/baton.js, built into baton) in `$XDG_CONFIG_HOME/opencode/plugins/`,
//! with the baton program, agent and hub filled in, and the plugin runs `baton hook`.

use jsonc_parser::cst::CstInputValue;

use serde_json::json;

use super::command::Launch;
use super::json::{object, string_map, strings};
use super::remote::TokenSyntax;
use super::{Environment, InstructionSlot, Layout, PluginSlot, ServerSlot};
use crate::client::Client;

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
        plugin: Some(PluginSlot {
            file: config_dir.join("plugins").join(plugin().file_name),
            text: plugin_text,
            is_batons: is_batons_plugin,
        }),
        instructions: InstructionSlot::Block(config_dir.join("AGENTS.md")),
        config_dir,
        notes: vec![
            "opencode takes baton's hooks through its plugin, loaded when opencode starts: \
             a session already running sees it after a restart"
                .to_string(),
        ],
    }
}

fn plugin() -> &'static crate::client::ClientPlugin {
    Client::Opencode
        .plugin()
        .expect("opencode's row of the client table has its plugin")
}

/// The line of the plugin that setup fills in with the wiring.
const WIRING_LINE: &str = "const WIRING = {};";

/// The first line of every baton plugin, by which setup knows its own file.
const FIRST_LINE: &str = "// baton's plugin for opencode";

/// The plugin with `launch`'s baton program, agent and hub in its wiring line. For a remote
/// hub the agent is the token's: the wiring names the hub's URL and the variable the plugin
/// gives baton the token from, never the token.
fn plugin_text(launch: &Launch) -> String {
    let edit_tools: Vec<&str> = Client::Opencode
        .edit_guard()
        .tools
        .iter()
        .map(|tool| tool.name)
        .collect();
    let mut wiring = json!({
        "program": launch.baton.display().to_string(),
        "agent": launch.agent(),
        "home": launch.hub_home().map(|home| home.display().to_string()),
        "editTools": edit_tools,
    });
    if let Some(store) = launch.store() {
        wiring["store"] = json!(store);
    }
    if let Some(hub) = launch.remote() {
        wiring["url"] = json!(hub.base_url());
        wiring["tokenEnv"] = json!(hub.token_env());
    }
    plugin()
        .source
        .replacen(WIRING_LINE, &format!("const WIRING = {wiring};"), 1)
}

fn is_batons_plugin(text: &str) -> bool {
    text.starts_with(FIRST_LINE)
}

/// opencode takes the program and its arguments as one `command` list. A remote hub's server
/// is its URL, the token in the header as `{env:VAR}`, which opencode replaces with the
/// variable's value (empty when it is not set) when it reads its configuration.
fn server_entry(launch: &Launch) -> CstInputValue {
    if let Some(hub) = launch.remote() {
        return object(vec![
            ("type", "remote".into()),
            ("url", hub.mcp_url().into()),
            (
                "headers",
                string_map(vec![(
                    "Authorization".to_string(),
                    hub.bearer_header(TokenSyntax::OpencodeEnv),
                )]),
            ),
            ("enabled", true.into()),
        ]);
    }
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::setup::remote::RemoteHub;
    use crate::setup::{HubAccess, Platform};

    #[test]
    fn the_plugin_carries_the_wiring_as_json_and_is_known_for_baton_s() {
        assert_eq!(plugin().source.matches(WIRING_LINE).count(), 1);
        let mut launch = Launch {
            baton: PathBuf::from("/opt/my \"tools\"/baton"),
            access: HubAccess::Local {
                agent: "oc".into(),
                home: None,
                store: None,
            },
            platform: Platform::CURRENT,
            baton_on_path: false,
        };
        let text = plugin_text(&launch);
        assert!(
            text.contains(
                r#"const WIRING = {"agent":"oc","editTools":["edit","write","apply_patch"],"home":null,"program":"/opt/my \"tools\"/baton"};"#
            ),
            "{text}"
        );
        assert!(is_batons_plugin(&text));
        assert!(!is_batons_plugin("export default {}\n"));

        launch.access = HubAccess::Remote(RemoteHub::new("http://hub:7878", "HUB_TOKEN").unwrap());
        let text = plugin_text(&launch);
        assert!(
            text.contains(
                r#"const WIRING = {"agent":null,"editTools":["edit","write","apply_patch"],"home":null,"program":"/opt/my \"tools\"/baton","tokenEnv":"HUB_TOKEN","url":"http://hub:7878"};"#
            ),
            "{text}"
        );
    }
}
