//! What setup would change for one client: the clients' files as [`FileEdit`]s (the text
//! now, the text wanted, and why) and the agent's registry record, computed by reading and
//! writing nothing. A dry run shows the plan; [`super::run`] carries it out.

use crate::client::{Client, ClientHooks, EditGuard, HookEvent};
use crate::error::{Result, SetupError};
use crate::home::Home;
use crate::registry;
use crate::store::Store;

use super::command::{self, HubAccess, Launch};
use super::edit::{FileEdit, Format, Staging};
use super::json::{Document, Outcome};
use super::manifest::Manifest;
use super::service::{
    ListenService, install_listen_service, listen_token_file, uninstall_listen_service,
};
use super::status::wired_server;
use super::{
    Environment, HookSlot, InstructionSlot, Layout, SERVER_NAME, ServerSlot, Wiring, a2a, codex,
    instructions, layout,
};

/// Everything setup will do (or did) for one client.
#[derive(Debug, Clone)]
pub struct ClientPlan {
    pub client: Client,
    /// The agent wired to the client (for uninstall: the one found wired, if any); none for
    /// a remote hub, where the token names the agent.
    pub agent: Option<String>,
    /// The remote hub's URL, when the client is wired to one.
    pub hub: Option<String>,
    /// Files that change; unchanged files are left out.
    pub files: Vec<FileEdit>,
    /// Changes to the agent's registry record, one line each.
    pub registry: Vec<String>,
    pub notes: Vec<String>,
    pub(super) registration: Option<Registration>,
}

impl ClientPlan {
    /// True when there is nothing to change.
    pub fn is_unchanged(&self) -> bool {
        self.files.is_empty() && self.registry.is_empty()
    }
}

#[derive(Debug, Clone)]
pub(super) enum Registration {
    Wire { agent: String, client: Client },
    Unwire { agent: String, client: Client },
}

/// Computes what `wiring` changes for `client`, reading but writing nothing.
pub(super) fn plan(
    store: &dyn Store,
    hub: &Home,
    env: &Environment,
    manifest: &Manifest,
    client: Client,
    wiring: &Wiring,
) -> Result<ClientPlan> {
    let layout = layout(client, env);
    let mut staging = Staging::default();
    let mut remote_hub = None;
    let (agent, registration) = match wiring {
        Wiring::Install {
            agent,
            baton,
            hub_home,
            store,
        } => {
            let agent = agent.clone().unwrap_or_else(|| client.name().to_string());
            let launch = Launch {
                baton: baton.clone(),
                access: HubAccess::Local {
                    agent: agent.clone(),
                    home: hub_home.clone(),
                    store: store.clone(),
                },
                platform: env.platform,
                baton_on_path: env.baton_on_path(baton).is_some(),
            };
            install(&layout, client, &launch, &mut staging)?;
            let registration = Registration::Wire {
                agent: agent.clone(),
                client,
            };
            (Some(agent), Some(registration))
        }
        Wiring::Remote {
            baton,
            hub: remote,
            listen,
            a2a: subagents,
        } => {
            let launch = Launch {
                baton: baton.clone(),
                access: HubAccess::Remote(remote.clone()),
                platform: env.platform,
                baton_on_path: env.baton_on_path(baton).is_some(),
            };
            install(&layout, client, &launch, &mut staging)?;
            if let Some(listen) = listen {
                let service = ListenService {
                    client,
                    baton: baton.clone(),
                    hub: remote.clone(),
                    token_file: listen_token_file(hub),
                    hub_home: listen.hub_home.clone(),
                    path: env
                        .path
                        .as_ref()
                        .and_then(|path| path.to_str())
                        .map(str::to_string),
                };
                install_listen_service(env, &service, listen.token.as_ref(), &mut staging)?;
            }
            if let Some(subagents) = subagents
                && client == Client::Gemini
            {
                a2a::install(&layout.config_dir, remote, subagents, &mut staging)?;
            }
            remote_hub = Some(remote.base_url().to_string());
            // The agent lives on the hub: nothing is registered here.
            (None, None)
        }
        Wiring::Uninstall => {
            let server = wired_server(&layout)?;
            remote_hub = server.as_ref().and_then(|server| server.hub.clone());
            let agent = server.and_then(|server| server.agent);
            uninstall_listen_service(hub, env, client, manifest, &mut staging)?;
            if client == Client::Gemini {
                a2a::uninstall(&layout.config_dir, &mut staging)?;
            }
            uninstall(&layout, manifest, &mut staging)?;
            let registration = agent
                .clone()
                .map(|agent| Registration::Unwire { agent, client });
            (agent, registration)
        }
    };
    let registry = match &registration {
        Some(registration) => describe_registration(store, hub, registration)?,
        None => Vec::new(),
    };
    let files: Vec<FileEdit> = staging
        .edits
        .into_iter()
        .filter(FileEdit::is_change)
        .collect();
    let mut notes = staging.notes;
    if !files.is_empty() && !matches!(wiring, Wiring::Uninstall) {
        notes.extend(layout.notes);
    }
    Ok(ClientPlan {
        client,
        agent,
        hub: remote_hub,
        files,
        registry,
        notes,
        registration,
    })
}

fn describe_outcome(outcome: Outcome, what: String) -> Option<String> {
    match outcome {
        Outcome::Added => Some(format!("add {what}")),
        Outcome::Updated => Some(format!("update {what}")),
        Outcome::Unchanged => None,
    }
}

fn install(layout: &Layout, client: Client, launch: &Launch, staging: &mut Staging) -> Result<()> {
    match &layout.server {
        ServerSlot::Json {
            file,
            container,
            entry,
            ..
        } => {
            let edit = staging.file(file, Format::Json)?;
            let document = edit.document()?;
            let outcome = document.set_entry(
                container,
                SERVER_NAME,
                entry(launch),
                &mut edit.created_keys,
            )?;
            if let Some(change) = describe_outcome(
                outcome,
                format!(
                    "MCP server {container}.{SERVER_NAME}: {}",
                    server_line(launch)
                ),
            ) {
                edit.changes.push(change);
                edit.after = Some(document.text());
            }
        }
        ServerSlot::Toml { file } => {
            let edit = staging.file(file, Format::Toml)?;
            let (text, outcome, created) =
                codex::set_server(&edit.path, edit.after.as_deref(), launch)?;
            if let Some(change) = describe_outcome(
                outcome,
                format!(
                    "MCP server [mcp_servers.{SERVER_NAME}]: {}",
                    server_line(launch)
                ),
            ) {
                edit.changes.push(change);
                edit.created_keys.extend(created);
                edit.after = Some(text);
            }
        }
    }
    if let Some(hooks) = &layout.hooks
        && let Some(client_hooks) = client.hooks()
    {
        let guard = client.edit_guard();
        let commands: Result<Vec<HookLine>> = HookEvent::ALL
            .iter()
            .map(|event| {
                Ok(HookLine {
                    baton_event: event.name(),
                    client_event: client_hooks.event_name(*event),
                    matcher: None,
                    command: launch.hook_command(*event, client)?,
                })
            })
            .chain(std::iter::once(launch.edit_guard_command(client).map(
                |command| HookLine {
                    baton_event: EditGuard::EVENT,
                    client_event: guard.event_name,
                    matcher: Some(guard.matcher()),
                    command,
                },
            )))
            .collect();
        match commands {
            Ok(commands) => write_hooks(launch, hooks, client_hooks, commands, staging)?,
            // The rest of the wiring does without (the server and the instructions work),
            // and this client, not the next one, is the one left without hooks.
            Err(error) => {
                let mut note = format!("{client}'s hooks were not written: {error}");
                if let Some(hint) = error.hint() {
                    note.push_str(&format!("; {hint}"));
                }
                staging.notes.push(note);
            }
        }
    }
    if let Some(plugin) = &layout.plugin {
        let edit = staging.file(&plugin.file, Format::Plugin)?;
        if let Some(before) = edit.before.as_deref()
            && !(plugin.is_batons)(before)
        {
            return Err(SetupError::NotBatons {
                path: edit.path.clone(),
                what: "plugin",
            }
            .into());
        }
        let text = (plugin.text)(launch);
        if edit.after.as_deref() != Some(&text) {
            edit.changes.push(if edit.before.is_none() {
                "add the baton plugin".to_string()
            } else {
                "update the baton plugin".to_string()
            });
            edit.after = Some(text);
        }
    }
    let guide = match &launch.access {
        HubAccess::Local { agent, .. } => instructions::guide(agent),
        HubAccess::Remote(hub) => instructions::remote_guide(hub),
    };
    match &layout.instructions {
        InstructionSlot::Skill(path) => {
            let edit = staging.file(path, Format::Owned)?;
            let text = instructions::skill(&guide);
            if edit.after.as_deref() != Some(&text) {
                edit.changes.push(if edit.before.is_none() {
                    "add the baton skill".to_string()
                } else {
                    "update the baton skill".to_string()
                });
                edit.after = Some(text);
            }
        }
        InstructionSlot::Block(path) => {
            let edit = staging.file(path, Format::Markdown)?;
            let text = instructions::with_block(edit.after.as_deref(), &guide);
            if edit.after.as_deref() != Some(&text) {
                let verb = if edit.before.as_deref().is_some_and(instructions::has_block) {
                    "update"
                } else {
                    "add"
                };
                edit.changes
                    .push(format!("{verb} the baton instructions block"));
                edit.after = Some(text);
            }
        }
    }
    Ok(())
}

/// One hook setup writes: baton's name for its event, the client's, the tools it runs for
/// (every source of the event when `None`), and its command line.
struct HookLine {
    baton_event: &'static str,
    client_event: &'static str,
    matcher: Option<String>,
    command: String,
}

/// Puts baton's hook for each of `lines` into the hooks file.
fn write_hooks(
    launch: &Launch,
    hooks: &HookSlot,
    client_hooks: &ClientHooks,
    lines: Vec<HookLine>,
    staging: &mut Staging,
) -> Result<()> {
    let edit = staging.file(&hooks.file, Format::Json)?;
    let document = edit.document()?;
    for line in lines {
        let HookLine {
            baton_event,
            client_event,
            matcher,
            command,
        } = line;
        let outcome = document.set_hook(
            "hooks",
            client_event,
            (hooks.group)(
                launch,
                baton_event,
                matcher.as_deref(),
                command.clone(),
                client_hooks,
            ),
            &mut edit.created_keys,
        )?;
        if let Some(change) = describe_outcome(outcome, format!("hook {client_event}: {command}")) {
            edit.changes.push(change);
        }
    }
    edit.after = Some(document.text());
    Ok(())
}

fn server_line(launch: &Launch) -> String {
    if let Some(hub) = launch.remote() {
        return format!("{} (token from ${})", hub.mcp_url(), hub.token_env());
    }
    let mut words = vec![command::shell_quote(&launch.baton.display().to_string())];
    words.extend(launch.mcp_args());
    words.join(" ")
}

fn uninstall(layout: &Layout, manifest: &Manifest, staging: &mut Staging) -> Result<()> {
    match &layout.server {
        ServerSlot::Json {
            file, container, ..
        } => {
            let edit = staging.file(file, Format::Json)?;
            let document = edit.document()?;
            if document.remove_entry(container, SERVER_NAME) {
                edit.changes
                    .push(format!("remove MCP server {container}.{SERVER_NAME}"));
                edit.after = Some(document.text());
            }
        }
        ServerSlot::Toml { file } => {
            let edit = staging.file(file, Format::Toml)?;
            if let Some(text) = codex::remove_server(&edit.path, edit.after.as_deref())? {
                edit.changes
                    .push(format!("remove MCP server [mcp_servers.{SERVER_NAME}]"));
                edit.after = Some(text);
            }
        }
    }
    if let Some(hooks) = &layout.hooks {
        let edit = staging.file(&hooks.file, Format::Json)?;
        let document = edit.document()?;
        let events = document.remove_hooks("hooks");
        if !events.is_empty() {
            edit.changes
                .push(format!("remove baton hooks: {}", events.join(", ")));
            edit.after = Some(document.text());
        }
    }
    if let Some(plugin) = &layout.plugin {
        let edit = staging.file(&plugin.file, Format::Plugin)?;
        if edit.before.as_deref().is_some_and(plugin.is_batons) {
            edit.changes.push("remove the baton plugin".to_string());
            edit.after = None;
        }
    }
    match &layout.instructions {
        InstructionSlot::Skill(path) => {
            let edit = staging.file(path, Format::Owned)?;
            if edit.before.is_some() {
                edit.changes.push("remove the baton skill".to_string());
                edit.after = None;
            }
        }
        InstructionSlot::Block(path) => {
            let edit = staging.file(path, Format::Markdown)?;
            if let Some(text) = edit.after.as_deref().and_then(instructions::without_block) {
                edit.changes
                    .push("remove the baton instructions block".to_string());
                edit.after = Some(text);
            }
        }
    }
    // What setup created around its entries goes once they are gone, if nothing else moved in.
    for edit in staging.edits.iter_mut().filter(|edit| edit.is_change()) {
        let Some(record) = manifest.record(&edit.path) else {
            continue;
        };
        // A file nobody but setup has written since it was the user's goes back byte for byte.
        if let Some(original) = edit
            .before
            .as_deref()
            .and_then(|current| manifest.original_if_untouched(&edit.path, current))
        {
            edit.after = Some(original.to_string());
            continue;
        }
        let Some(text) = edit.after.clone() else {
            continue;
        };
        let mut keys = record.created_keys.clone();
        keys.sort_by_key(|key| std::cmp::Reverse(key.len()));
        let (text, is_empty) = match edit.format {
            Format::Json => {
                let document = Document::parse(&edit.path, Some(&text))?;
                for key in &keys {
                    document.prune(key);
                }
                (document.text(), document.is_empty())
            }
            Format::Toml => codex::prune(&edit.path, &text, &keys)?,
            Format::Markdown
            | Format::Owned
            | Format::Plugin
            | Format::Service
            | Format::Secret => {
                let is_empty = text.trim().is_empty();
                (text, is_empty)
            }
        };
        edit.after = if record.created_file && is_empty {
            None
        } else {
            Some(text)
        };
    }
    Ok(())
}

fn describe_registration(
    store: &dyn Store,
    hub: &Home,
    registration: &Registration,
) -> Result<Vec<String>> {
    let mut changes = Vec::new();
    match registration {
        Registration::Wire { agent, client } => {
            let record = registry::load(store, agent)?;
            match &record {
                None => changes.push(format!("register agent {agent}")),
                Some(record) if !record.clients.contains(&client.name().to_string()) => {
                    changes.push(format!("add {client} to the clients of agent {agent}"));
                }
                Some(_) => {}
            }
            if record
                .as_ref()
                .is_none_or(|record| record.strengths.is_empty())
            {
                changes.push(format!("strengths: {}", client.default_strengths()));
            }
            if wants_wake_command(
                hub,
                store,
                *client,
                record.as_ref().and_then(|record| record.wake.as_deref()),
            ) {
                changes.push(format!(
                    "wake command: {}",
                    client
                        .wake_command_on(Some(hub.root()), store.is_shared_by_machines())
                        .join(" ")
                ));
            }
        }
        Registration::Unwire { agent, client } => {
            let Some(record) = registry::load(store, agent)? else {
                return Ok(changes);
            };
            if record.clients.contains(&client.name().to_string()) {
                changes.push(format!("remove {client} from the clients of agent {agent}"));
            }
            match wake_after_unwiring(hub, store, *client, &record) {
                None => {}
                Some(None) => changes.push(format!(
                    "remove the wake command setup registered: {}",
                    record.wake.unwrap_or_default().join(" ")
                )),
                Some(Some(wake)) => changes.push(format!("wake command: {}", wake.join(" "))),
            }
        }
    }
    Ok(changes)
}

/// Whether setup is to (re)register its wake command for `client` over `wake`, what the
/// agent has: a command the user chose stays; setup's own is brought up to date (an earlier
/// baton's, or today's for the other store, after a home moved to a database or back).
pub(super) fn wants_wake_command(
    hub: &Home,
    store: &dyn Store,
    client: Client,
    wake: Option<&[String]>,
) -> bool {
    let database = store.is_shared_by_machines();
    wake.is_none_or(|wake| {
        client.is_former_wake_command(wake)
            || wake
                == client
                    .wake_command_on(Some(hub.root()), !database)
                    .as_slice()
                && wake
                    != client
                        .wake_command_on(Some(hub.root()), database)
                        .as_slice()
    })
}

/// The wake command `record` is to have once `client` is unwired from it, when that changes
/// it: a wake command setup registered for `client` (today's or an earlier baton's) goes,
/// replaced by the wake command of a client still wired to the agent if there is one. A
/// command the user chose, or one another client's setup registered, stays.
pub(super) fn wake_after_unwiring(
    hub: &Home,
    store: &dyn Store,
    client: Client,
    record: &registry::AgentRecord,
) -> Option<Option<Vec<String>>> {
    let wake = record.wake.as_deref()?;
    let database = store.is_shared_by_machines();
    let registered = [false, true]
        .iter()
        .any(|on| wake == client.wake_command_on(Some(hub.root()), *on).as_slice())
        || client.is_former_wake_command(wake);
    if !registered {
        return None;
    }
    let remaining = record
        .clients
        .iter()
        .filter(|name| *name != client.name())
        .find_map(|name| Client::from_name(name));
    Some(remaining.map(|other| other.wake_command_on(Some(hub.root()), database)))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::Value;

    use super::*;
    use crate::file::lock::LockPolicy;
    use crate::setup::Platform;
    use crate::store::files::FileStore;

    fn quiet_lock() -> LockPolicy {
        LockPolicy::silent(std::time::Duration::from_secs(1))
    }

    /// The hook entries planned for `client` on `platform`, as (command, shell) per event.
    fn planned_hooks(platform: Platform, client: Client) -> Vec<(String, Option<String>)> {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment {
            home: dir.path().join("home"),
            platform,
            ..Environment::default()
        };
        let wiring = Wiring::Install {
            agent: None,
            baton: PathBuf::from(r"C:\Users\ann\.local\bin\baton.exe"),
            hub_home: Some(PathBuf::from(r"D:\hub")),
            store: None,
        };
        let hub = Home::new(dir.path().join("hub"));
        let plan = plan(
            &FileStore::new(hub.clone(), quiet_lock()),
            &hub,
            &env,
            &Manifest::default(),
            client,
            &wiring,
        )
        .unwrap();
        let hooks_file = layout(client, &env).hooks.unwrap().file;
        let edit = plan
            .files
            .iter()
            .find(|edit| edit.path == hooks_file)
            .unwrap();
        let document: Value = serde_json::from_str(edit.after.as_deref().unwrap()).unwrap();
        let names = client.hooks().unwrap();
        HookEvent::ALL
            .iter()
            .map(|event| {
                let hook = &document["hooks"][names.event_name(*event)][0]["hooks"][0];
                let text = |key: &str| hook[key].as_str().map(str::to_string);
                (text("command").unwrap(), text("shell"))
            })
            .collect()
    }

    #[test]
    fn codex_without_a_hook_line_for_cmd_is_wired_without_hooks_and_told_why() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment {
            home: dir.path().join("home"),
            platform: Platform::Windows,
            ..Environment::default()
        };
        let wiring = Wiring::Install {
            agent: None,
            baton: PathBuf::from(r"C:\Users\Ann Lee\bin\baton.exe"),
            hub_home: None,
            store: None,
        };
        let hub = Home::new(dir.path().join("hub"));
        let plan = plan(
            &FileStore::new(hub.clone(), quiet_lock()),
            &hub,
            &env,
            &Manifest::default(),
            Client::Codex,
            &wiring,
        )
        .unwrap();
        let layout = layout(Client::Codex, &env);
        let written: Vec<&Path> = plan.files.iter().map(|edit| edit.path.as_path()).collect();
        assert!(
            !written.contains(&layout.hooks.unwrap().file.as_path()),
            "{written:?}"
        );
        let ServerSlot::Toml { file: config } = layout.server else {
            panic!("Codex's server is in its config.toml");
        };
        assert!(written.contains(&config.as_path()), "{written:?}");
        let note = plan
            .notes
            .iter()
            .find(|note| note.starts_with("codex's hooks were not written"))
            .unwrap_or_else(|| panic!("no word of the hooks: {:?}", plan.notes));
        assert!(note.contains("cmd.exe") && note.contains("PATH"), "{note}");
    }

    #[test]
    fn on_windows_each_client_gets_hooks_in_the_shell_it_runs_them_with() {
        let claude = planned_hooks(Platform::Windows, Client::Claude);
        assert_eq!(
            claude[0],
            (
                r"$env:BATON_HOME = 'D:\hub'; & 'C:\Users\ann\.local\bin\baton.exe' --as claude hook session-start --client claude".to_string(),
                Some("powershell".to_string())
            )
        );
        let gemini = planned_hooks(Platform::Windows, Client::Gemini);
        assert_eq!(
            gemini[2],
            (
                r"$env:BATON_HOME = 'D:\hub'; & 'C:\Users\ann\.local\bin\baton.exe' --as gemini hook stop --client gemini".to_string(),
                None
            )
        );
        let codex = planned_hooks(Platform::Windows, Client::Codex);
        assert_eq!(
            codex[1],
            (
                r"set BATON_HOME=D:\hub&& C:\Users\ann\.local\bin\baton.exe --as codex hook prompt --client codex".to_string(),
                None
            )
        );
        // On Unix nobody is told a shell, and the line is a POSIX shell's.
        for client in [Client::Claude, Client::Codex, Client::Gemini] {
            for (command, shell) in planned_hooks(Platform::Unix, client) {
                assert!(command.starts_with(r"BATON_HOME='D:\hub' "), "{command}");
                assert_eq!(shell, None);
            }
        }
    }
}
