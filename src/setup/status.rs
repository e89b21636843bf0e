//! How each client stands: found on this machine or not, and what of baton is wired into
//! it, read from its files (for plain `setup`, `setup --auto`, `--uninstall` and `doctor`).

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use crate::client::{Client, HookEvent};
use crate::error::Result;
use crate::names::{self, NameKind};

use super::edit::read_text;
use super::json::Document;
use super::{
    Environment, InstructionSlot, Layout, SERVER_NAME, ServerSlot, a2a, codex, command,
    instructions, layout, remote, service,
};

/// How one client stands: found on this machine, and what of baton is wired into it.
#[derive(Debug, Clone, Serialize)]
pub struct ClientStatus {
    pub client: Client,
    /// The client's program on `PATH`.
    pub program: Option<PathBuf>,
    pub config_dir: PathBuf,
    pub has_config_dir: bool,
    /// baton's MCP server is in the client's configuration.
    pub server: bool,
    /// The agent the server is wired as, when it says.
    pub agent: Option<String>,
    /// The program the client starts as baton's server.
    pub server_program: Option<PathBuf>,
    /// The hub the client's server reaches over HTTP, when it is a remote one.
    pub hub: Option<String>,
    /// The variable the client reads a remote hub's token from.
    pub token_env: Option<String>,
    /// setup's listen service wakes this client.
    pub listen_service: bool,
    /// The client events that run a baton hook.
    pub hooks: Vec<String>,
    /// baton's plugin is in the client's plugin directory.
    pub plugin: bool,
    /// Whether baton's instructions (skill or block) are in place.
    pub instructions: bool,
    /// The agents of a hub setup wrote Gemini CLI remote subagents for (`--a2a`).
    pub a2a_agents: Vec<String>,
    /// A file that could not be read, which makes the rest uncertain.
    pub problem: Option<String>,
}

impl ClientStatus {
    /// Found on this machine: its program is on `PATH` or its configuration directory exists.
    pub fn is_found(&self) -> bool {
        self.program.is_some() || self.has_config_dir
    }

    /// Anything of baton is wired into the client.
    pub fn is_wired(&self) -> bool {
        self.server
            || !self.hooks.is_empty()
            || self.plugin
            || self.instructions
            || self.listen_service
            || !self.a2a_agents.is_empty()
    }

    /// Everything setup wires is there: the server, the instructions, and the hooks or the
    /// plugin where the client has them.
    pub fn is_fully_wired(&self) -> bool {
        let wants_hooks = self.client.hooks().is_some();
        let wants_plugin = self.client.plugin().is_some();
        self.server
            && self.instructions
            // The inbox's three events, and the guard before an edit.
            && (!wants_hooks || self.hooks.len() == HookEvent::ALL.len() + 1)
            && (!wants_plugin || self.plugin)
    }

    /// What of baton is wired, in a few words: `mcp as claude · hooks … · instructions`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.server {
            parts.push(match (&self.hub, &self.agent, &self.token_env) {
                (Some(hub), _, Some(variable)) => {
                    format!("wired to the hub at {hub} (token from ${variable})")
                }
                (Some(hub), _, None) => format!("wired to the hub at {hub}"),
                (None, Some(agent), _) => format!("mcp as {agent}"),
                (None, None, _) => "mcp".to_string(),
            });
        }
        if !self.hooks.is_empty() {
            parts.push(format!("hooks {}", self.hooks.join(",")));
        }
        if self.plugin {
            parts.push("plugin".to_string());
        }
        if self.instructions {
            parts.push("instructions".to_string());
        }
        if self.listen_service {
            parts.push("listen service".to_string());
        }
        if !self.a2a_agents.is_empty() {
            let names: Vec<String> = self
                .a2a_agents
                .iter()
                .map(|name| a2a::subagent_name(name))
                .collect();
            parts.push(format!("A2A subagents {}", names.join(",")));
        }
        if parts.is_empty() {
            "not wired".to_string()
        } else {
            parts.join(" · ")
        }
    }
}

/// How every client stands (for `setup --auto`, `doctor` and plain `setup`).
pub fn status(env: &Environment) -> Vec<ClientStatus> {
    Client::ALL
        .iter()
        .map(|client| client_status(env, *client))
        .collect()
}

fn client_status(env: &Environment, client: Client) -> ClientStatus {
    let layout = layout(client, env);
    let mut status = ClientStatus {
        client,
        program: env.find_program(client.name()),
        has_config_dir: layout.config_dir.is_dir(),
        config_dir: layout.config_dir.clone(),
        server: false,
        agent: None,
        server_program: None,
        hub: None,
        token_env: None,
        listen_service: false,
        hooks: Vec::new(),
        plugin: false,
        instructions: false,
        a2a_agents: Vec::new(),
        problem: None,
    };
    let result = (|| -> Result<()> {
        if let Some(server) = wired_server(&layout)? {
            status.server = true;
            status.agent = server.agent;
            status.server_program = server.program;
            status.hub = server.hub;
            status.token_env = server.token_env;
        }
        if let Some(file) = env.services.file(env) {
            status.listen_service = read_text(&file)?
                .as_deref()
                .and_then(service::client_of_service)
                == Some(client);
        }
        if let Some(hooks) = &layout.hooks {
            let text = read_text(&hooks.file)?;
            status.hooks =
                Document::parse(&hooks.file, text.as_deref())?.baton_hook_events("hooks");
        }
        if let Some(plugin) = &layout.plugin {
            status.plugin = read_text(&plugin.file)?.is_some_and(|text| (plugin.is_batons)(&text));
        }
        if client == Client::Gemini {
            status.a2a_agents = a2a::written(&layout.config_dir)?
                .into_iter()
                .map(|(_, name)| name)
                .collect();
        }
        status.instructions = match &layout.instructions {
            InstructionSlot::Skill(path) => path.is_file(),
            InstructionSlot::Block(path) => {
                read_text(path)?.is_some_and(|text| instructions::has_block(&text))
            }
        };
        Ok(())
    })();
    if let Err(error) = result {
        status.problem = Some(error.to_string());
    }
    status
}

/// The clients `--auto` wires: those found on this machine.
pub fn found_clients(env: &Environment) -> Vec<Client> {
    status(env)
        .into_iter()
        .filter(ClientStatus::is_found)
        .map(|status| status.client)
        .collect()
}

/// The clients that have baton wired (what a plain `--uninstall` removes).
pub fn wired_clients(env: &Environment) -> Vec<Client> {
    status(env)
        .into_iter()
        .filter(ClientStatus::is_wired)
        .map(|status| status.client)
        .collect()
}

/// baton's MCP server as a client's configuration holds it.
pub(super) struct WiredServer {
    /// From `--as NAME` in its arguments, else `BATON_AGENT` in its environment.
    pub(super) agent: Option<String>,
    /// The program the client starts.
    pub(super) program: Option<PathBuf>,
    /// A remote hub's base URL, for a server the client reaches over HTTP.
    pub(super) hub: Option<String>,
    /// The variable a remote hub's token is read from.
    pub(super) token_env: Option<String>,
}

/// baton's MCP server in the client's configuration, if it is there.
pub(super) fn wired_server(layout: &Layout) -> Result<Option<WiredServer>> {
    let (entry, args_key) = match &layout.server {
        ServerSlot::Json {
            file,
            container,
            args_key,
            ..
        } => {
            let text = read_text(file)?;
            let entry = Document::parse(file, text.as_deref())?.entry(container, SERVER_NAME);
            (entry, *args_key)
        }
        ServerSlot::Toml { file } => (
            codex::server_entry(file, read_text(file)?.as_deref())?,
            "args",
        ),
    };
    let Some(entry) = entry else {
        return Ok(None);
    };
    // Over HTTP: `url` (Gemini CLI: `httpUrl`), the token's variable in the header or, for
    // Codex, in `bearer_token_env_var`.
    if let Some(url) = ["url", "httpUrl"]
        .iter()
        .find_map(|key| entry.get(*key).and_then(Value::as_str))
    {
        let token_env = entry
            .get("bearer_token_env_var")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                entry
                    .get("headers")
                    .and_then(|headers| headers.get("Authorization"))
                    .and_then(Value::as_str)
                    .and_then(remote::token_env_in_header)
            });
        return Ok(Some(WiredServer {
            agent: None,
            program: None,
            hub: Some(remote::hub_of_mcp_url(url)),
            token_env,
        }));
    }
    let args: Vec<&str> = entry
        .get(args_key)
        .and_then(|args| args.as_array())
        .map(|args| args.iter().filter_map(|arg| arg.as_str()).collect())
        .unwrap_or_default();
    let from_env = ["env", "environment"].iter().find_map(|key| {
        entry
            .get(*key)
            .and_then(|env| env.get("BATON_AGENT"))
            .and_then(|agent| agent.as_str())
            .map(str::to_string)
    });
    let agent = command::agent_in_args(args.iter().copied())
        .or(from_env)
        .filter(|name| names::check(NameKind::Agent, name).is_ok());
    // opencode keeps the program as the first word of its `command` list.
    let program = match entry.get("command") {
        Some(Value::String(program)) => Some(program.as_str()),
        Some(Value::Array(words)) => words.first().and_then(Value::as_str),
        _ => None,
    }
    .map(PathBuf::from);
    Ok(Some(WiredServer {
        agent,
        program,
        hub: None,
        token_env: None,
    }))
}
