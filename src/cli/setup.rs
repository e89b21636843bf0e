//! `baton setup`: wire agent clients to baton (or unwire them), and show how they stand.

use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use baton::client::Client;
use baton::error::Error;
use baton::json_api::{NoBody, endpoint};
use baton::remote::HubClient;
use baton::remote::listen::agent_of;
use baton::setup::diff::DiffLine;
use baton::setup::{
    self, A2aAgents, ClientPlan, ClientStatus, Environment, FileAction, ListenRequest, RemoteHub,
    StoreAddress, TokenValue, Wiring,
};
use baton::time;

use super::{Context, output};

#[derive(Debug, Args)]
#[command(after_help = "\
Remote hub: with --url URL --token-env VAR, each client reaches the hub that `baton serve`
runs on another machine: MCP over HTTP at URL/mcp with the header `Authorization: Bearer`
and the token from $VAR, read by the client when it runs (only the variable's name is
written), and hooks that run baton with BATON_URL and BATON_TOKEN from $VAR. No agent is
registered here: the token (`baton token add NAME` on the hub) is the agent.
--listen-service also writes the service that keeps `baton listen --wake -- CMD` running
for that one client: a systemd user unit (~/.config/systemd/user/baton-listen.service) on
Linux, a launchd agent (~/Library/LaunchAgents/local.baton.listen.plist) on macOS. It
reads the token from $BATON_HOME/listen-token, which setup writes (mode 0600) when VAR is
set. Setup prints the command that starts it; --uninstall removes it with the rest.

A2A: with --client gemini --url URL --token-env VAR --a2a, setup also asks the hub (its
card, with the token in $VAR, which must be set) for its agents and writes one Gemini CLI
remote subagent per agent, ~/.gemini/agents/baton-NAME.md, pointing at the agent's A2A card
(URL/a2a/agents/NAME/.well-known/agent-card.json?project=ID) with `token: $VAR`; the
project is --project ID, else the hub's only one. A Gemini CLI session then hands work to
agent NAME with its invoke_agent tool (agent_name baton-NAME): the prompt arrives as a task
(first line the subject), and the agent's result is the tool's answer. Run it again when
agents come or go; --uninstall removes the files.
  baton setup --client gemini --url http://10.0.0.5:7878 --token-env BATON_TOKEN --a2a

Commit guard: --git [DIR] installs a pre-commit hook in the git repository at DIR (default:
the project's workspace), where git looks for hooks (core.hooksPath when set). It refuses an
agent's commit (BATON_AGENT set) of a path another agent has reserved, naming path, holder
and task; a person's commit goes through with one warning line, and so does any commit when
the store or the hub at BATON_URL cannot be reached. A hook that was there runs after it;
--git --uninstall puts it back as it was.
  baton setup --git

Examples:
  baton setup
  baton setup --auto --dry-run
  baton setup --client codex --url http://hub.lan:7878 --token-env BATON_HUB_TOKEN")]
pub struct SetupArgs {
    /// Wire this client: claude, codex, gemini, opencode (repeat, or separate with commas)
    #[arg(long = "client", value_name = "CLIENT", value_delimiter = ',', value_parser = parse_client)]
    pub clients: Vec<Client>,
    /// Wire every client found here: its program is on PATH or its config directory exists
    #[arg(long)]
    pub auto: bool,
    /// Remove what setup added (from the clients named, else from every client wired)
    #[arg(long)]
    pub uninstall: bool,
    /// Show what would change, and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Wire the clients to the hub `baton serve` runs at URL on another machine (with
    /// --token-env)
    #[arg(
        long,
        value_name = "URL",
        requires = "token_env",
        conflicts_with = "uninstall"
    )]
    pub url: Option<String>,
    /// With --url: the environment variable that holds the hub's token when a client runs
    /// (its name is written, never the token)
    #[arg(long, value_name = "VAR", requires = "url")]
    pub token_env: Option<String>,
    /// With --url: also write the service that keeps `baton listen` running to wake the
    /// client (systemd user unit on Linux, launchd agent on macOS)
    #[arg(long, requires = "url")]
    pub listen_service: bool,
    /// With --url and --client gemini: also write Gemini CLI's remote subagents for the
    /// hub's agents (~/.gemini/agents/baton-NAME.md), so that Gemini CLI hands them work
    /// over A2A
    #[arg(long, requires = "url")]
    pub a2a: bool,
    /// Install baton's commit guard, a pre-commit hook, in the git repository at DIR
    /// (default: the project's workspace); with --uninstall, take it out
    #[arg(
        long,
        value_name = "DIR",
        num_args = 0..=1,
        conflicts_with_all = ["clients", "auto", "url", "listen_service", "a2a"]
    )]
    pub git: Option<Option<PathBuf>>,
}

fn parse_client(text: &str) -> Result<Client, String> {
    text.parse()
        .map_err(|error: baton::client::UnknownClient| error.to_string())
}

pub fn run(context: &Context, args: SetupArgs) -> Result<i32, Error> {
    if let Some(dir) = &args.git {
        return super::commit_guard::setup(context, dir.as_deref(), args.uninstall, args.dry_run);
    }
    // A hub setup cannot wire is refused before anything else is looked at.
    let remote = match (&args.url, &args.token_env) {
        (Some(url), Some(variable)) => Some(RemoteHub::new(url, variable)?),
        _ => None,
    };
    if let (Some(_), Some(agent)) = (&remote, &context.global.agent) {
        return Err(Error::invalid(format!(
            "--as {agent} does not go with --url: the hub's token is the agent"
        )));
    }
    let env = Environment::from_process()
        .ok_or_else(|| Error::invalid("cannot find your home directory; set HOME"))?;
    let mut clients = args.clients.clone();
    if args.auto {
        clients.extend(setup::found_clients(&env));
    }
    if clients.is_empty() && args.uninstall {
        clients = setup::wired_clients(&env);
    }
    clients.sort();
    clients.dedup();

    if clients.is_empty() {
        let statuses = setup::status(&env);
        let hint = if args.auto {
            "no agent client found here (none of claude, codex, gemini, opencode is on PATH \
             or has its config directory); install one, or name it with --client"
        } else if args.uninstall {
            "no client has baton wired: nothing to remove"
        } else {
            "wire them with `baton setup --auto`, or one with `baton setup --client NAME \
             [--as AGENT]` (to a hub on another machine: `--url URL --token-env VAR`)"
        };
        output::emit(context.global.json, &statuses, |statuses| {
            format!("{}\n{hint}", render_status(statuses))
        });
        return Ok(0);
    }

    let wiring = if args.uninstall {
        Wiring::Uninstall
    } else if let Some(hub) = remote {
        let listen = if args.listen_service {
            Some(ListenRequest {
                token: std::env::var(hub.token_env())
                    .ok()
                    .map(|token| token.trim().to_string())
                    .filter(|token| !token.is_empty())
                    .map(TokenValue::new),
                hub_home: hub_home_override()?,
            })
        } else {
            None
        };
        let a2a = if args.a2a {
            if !clients.contains(&Client::Gemini) {
                return Err(Error::invalid_with_hint(
                    "--a2a writes Gemini CLI's remote subagents, and gemini is not among the \
                     clients to wire",
                    "add --client gemini",
                ));
            }
            Some(hub_agents(&hub, context.global.project.as_deref())?)
        } else {
            None
        };
        Wiring::Remote {
            baton: setup::baton_program(&env)?,
            hub,
            listen,
            a2a,
        }
    } else {
        Wiring::Install {
            // Only an explicit --as: a BATON_AGENT left in the shell must not rename every
            // client's agent.
            agent: context.global.agent.clone(),
            baton: setup::baton_program(&env)?,
            hub_home: hub_home_override()?,
            store: store_to_pass_on()?,
        }
    };
    let plans = setup::run(
        &*context.hub.store,
        &context.hub.local(),
        &env,
        &clients,
        &wiring,
        args.dry_run,
        time::now(),
    )?;
    let value = plans_json(&plans, args.dry_run);
    output::emit(context.global.json, &value, |_| {
        let mut text = render_plans(&plans, args.dry_run, args.uninstall);
        if let Wiring::Install { store: Some(_), .. } = &wiring
            && std::env::var("BATON_STORE")
                .is_ok_and(|url| baton::store::postgres::url::may_hold_password(&url))
        {
            text.push_str(
                "\nnote: the clients' baton is given BATON_STORE without its password: keep \
                 the password in ~/.pgpass (or the file PGPASSFILE names), which every client \
                 lets baton read (Codex passes its MCP servers no PGPASSWORD)",
            );
        }
        if let Wiring::Remote {
            hub, listen, a2a, ..
        } = &wiring
            && !args.dry_run
        {
            text.push('\n');
            text.push_str(&remote_next_steps(hub, &clients, listen.is_some()));
            if a2a.is_some() {
                text.push_str(
                    "\nGemini CLI hands work to the hub's agents with its invoke_agent tool \
                     (agent_name baton-NAME); it asks you before each call, and a headless \
                     `gemini -p` needs --approval-mode yolo (or a policy that allows \
                     invoke_agent) to make it",
                );
            }
        }
        text
    });
    Ok(0)
}

/// The hub's agents, from its A2A card, the token's own agent, and the project the tasks go
/// to (`--project`, else the hub's only one), asked with the token in the hub's variable
/// (read here, written nowhere).
fn hub_agents(hub: &RemoteHub, project: Option<&str>) -> Result<A2aAgents, Error> {
    let variable = hub.token_env();
    let token = std::env::var(variable)
        .ok()
        .map(|token| token.trim().to_string())
        .filter(|token| !token.is_empty())
        .ok_or_else(|| {
            Error::invalid_with_hint(
                format!(
                    "--a2a asks the hub for its agents with the token in ${variable}, which is \
                     not set"
                ),
                format!(
                    "set {variable} to your token (`baton token add NAME` on the hub prints \
                     one) and run setup again; only the variable's name is written"
                ),
            )
        })?;
    let client = HubClient::new(hub.base_url(), token)?;
    let caller = agent_of(&client)?;
    let projects: Vec<String> = client
        .call::<endpoint::Projects>(&[], &NoBody {})?
        .into_iter()
        .map(|project| project.id)
        .collect();
    let project = match (project, projects.as_slice()) {
        (Some(project), _) if projects.iter().any(|id| id == project) => Some(project.into()),
        (Some(project), _) => {
            return Err(Error::invalid_with_hint(
                format!(
                    "--project {}: the hub at {} has no such project",
                    baton::text::inline(project),
                    hub.base_url()
                ),
                format!("its projects: {}", projects.join(", ")),
            ));
        }
        (None, []) => None,
        (None, [only]) => Some(only.clone()),
        (None, several) => {
            return Err(Error::invalid_with_hint(
                format!(
                    "the hub at {} has {} projects ({}), and Gemini CLI's tasks name none: \
                     say which one they go to",
                    hub.base_url(),
                    several.len(),
                    several.join(", ")
                ),
                "add --project ID",
            ));
        }
    };
    let card = client.agent_card()?;
    Ok(A2aAgents::from_hub_card(&card, Some(caller), project))
}

/// `$BATON_HOME` when the user set one, made absolute: the clients start baton from other
/// directories and with their own environment, so they are told it explicitly.
pub(super) fn hub_home_override() -> Result<Option<PathBuf>, Error> {
    let Some(home) = std::env::var_os("BATON_HOME").filter(|value| !value.is_empty()) else {
        return Ok(None);
    };
    let home = PathBuf::from(home);
    if home.is_absolute() {
        return Ok(Some(home));
    }
    Ok(Some(super::current_dir()?.join(home)))
}

/// `BATON_STORE` when it names a database, without its password (which the clients' baton
/// finds in `PGPASSWORD` or the password file, as this one does), and `PGPASSFILE`: written
/// into the clients' MCP servers and hooks with the hub home.
pub(super) fn store_to_pass_on() -> Result<Option<StoreAddress>, Error> {
    let Some(url) = std::env::var("BATON_STORE")
        .ok()
        .filter(|url| baton::store::postgres::address::is_postgres_url(url))
    else {
        return Ok(None);
    };
    // The store was opened from the same URL before setup ran, so a URL that cannot be
    // split safely was refused already; this refuses it again rather than pass it on.
    let parts = baton::store::postgres::url::StoreUrl::parse(&url).map_err(|error| {
        Error::invalid(format!(
            "BATON_STORE {}: {error}",
            baton::store::postgres::url::shown_form(&url)
        ))
    })?;
    Ok(Some(StoreAddress {
        url: parts.without_password(),
        password_file: std::env::var_os("PGPASSFILE")
            .filter(|file| !file.is_empty())
            .map(PathBuf::from),
    }))
}

/// How every client stands, one line each: for plain `baton setup` and `doctor`.
pub fn render_status(statuses: &[ClientStatus]) -> String {
    let rows: Vec<(String, String, String)> = statuses
        .iter()
        .map(|status| {
            let found = match (&status.program, status.has_config_dir) {
                (Some(program), _) => program.display().to_string(),
                (None, true) => status.config_dir.display().to_string(),
                (None, false) => "-".to_string(),
            };
            (status.client.to_string(), found, wiring(status))
        })
        .collect();
    let width = rows
        .iter()
        .map(|(_, found, _)| found.chars().count())
        .chain([5])
        .max()
        .unwrap_or(5);
    let mut text = format!("{:<9} {:<width$}  {}\n", "CLIENT", "FOUND", "BATON");
    for (client, found, wired) in rows {
        text.push_str(&format!("{client:<9} {found:<width$}  {wired}\n"));
    }
    text.trim_end().to_string()
}

/// What of baton is wired into one client, and any problem reading its files.
fn wiring(status: &ClientStatus) -> String {
    match &status.problem {
        Some(problem) => format!("{} · problem: {problem}", status.summary()),
        None => status.summary(),
    }
}

fn verb(action: FileAction, dry_run: bool) -> &'static str {
    match (action, dry_run) {
        (FileAction::Create, false) => "created",
        (FileAction::Edit, false) => "edited",
        (FileAction::Delete, false) => "deleted",
        (FileAction::Create, true) => "would create",
        (FileAction::Edit, true) => "would edit",
        (FileAction::Delete, true) => "would delete",
    }
}

fn render_plans(plans: &[ClientPlan], dry_run: bool, uninstall: bool) -> String {
    let mut text = String::new();
    if dry_run {
        text.push_str("dry run: nothing was written\n");
    }
    for plan in plans {
        let who = match (&plan.agent, &plan.hub) {
            (Some(agent), _) => format!(" (agent {agent})"),
            (None, Some(hub)) => format!(" (hub {hub})"),
            (None, None) => String::new(),
        };
        if plan.is_unchanged() {
            let status = if uninstall {
                "nothing of baton's to remove"
            } else {
                "already wired, nothing to change"
            };
            text.push_str(&format!("{}{who}: {status}\n", plan.client));
            continue;
        }
        text.push_str(&format!("{}{who}:\n", plan.client));
        for file in &plan.files {
            text.push_str(&format!(
                "  {} {}\n",
                verb(file.action(), dry_run),
                file.path.display()
            ));
            for change in &file.changes {
                text.push_str(&format!("      {change}\n"));
            }
            if let Some(backup) = &file.backup {
                text.push_str(&format!("      backup: {}\n", backup.display()));
            }
            if dry_run {
                for line in file.diff() {
                    match line {
                        DiffLine::Hunk(header) => text.push_str(&format!("      {header}\n")),
                        DiffLine::Context(line) => text.push_str(&format!("        {line}\n")),
                        DiffLine::Removed(line) => text.push_str(&format!("      - {line}\n")),
                        DiffLine::Added(line) => text.push_str(&format!("      + {line}\n")),
                    }
                }
            }
        }
        if !plan.registry.is_empty() {
            let verb = if dry_run { "would update" } else { "updated" };
            text.push_str(&format!(
                "  {verb} the registry: {}\n",
                plan.registry.join("; ")
            ));
        }
        for note in &plan.notes {
            text.push_str(&format!("  note: {note}\n"));
        }
    }
    let is_local = plans.iter().all(|plan| plan.hub.is_none());
    if !dry_run && !uninstall && is_local && plans.iter().any(|plan| !plan.is_unchanged()) {
        text.push_str(
            "change an agent's strengths or wake command with `baton agent add NAME \
             --strengths … --wake -- CMD …`\n",
        );
    }
    text.trim_end().to_string()
}

/// What the user does next for a remote hub: give the clients the token, and keep an agent
/// woken by `baton listen` (unless the listen service does).
fn remote_next_steps(hub: &RemoteHub, clients: &[Client], has_service: bool) -> String {
    let variable = hub.token_env();
    let mut text = format!(
        "the clients read the hub's token from ${variable} when they start: set it in the \
         environment you start them from (only its name is in their files)"
    );
    if !has_service && let Some(client) = clients.first() {
        text.push_str(&format!(
            "\nnext, to wake the agent when work arrives: BATON_URL={} BATON_TOKEN=\"${variable}\" \
             baton listen --wake -- {} (or run setup again with --listen-service)",
            hub.base_url(),
            client.wake_command(None).join(" ")
        ));
    }
    text
}

fn plans_json(plans: &[ClientPlan], dry_run: bool) -> Value {
    let clients: Vec<Value> = plans
        .iter()
        .map(|plan| {
            let files: Vec<Value> = plan
                .files
                .iter()
                .map(|file| {
                    let mut value = json!({
                        "path": file.path,
                        "action": file.action(),
                        "changes": file.changes,
                        "backup": file.backup,
                    });
                    if dry_run && !file.is_secret() {
                        value["after"] = json!(file.after);
                    }
                    value
                })
                .collect();
            json!({
                "client": plan.client,
                "agent": plan.agent,
                "hub": plan.hub,
                "changed": !plan.is_unchanged(),
                "files": files,
                "registry": plan.registry,
                "notes": plan.notes,
            })
        })
        .collect();
    json!({"dry_run": dry_run, "clients": clients})
}
