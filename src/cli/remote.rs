//! Every command against a hub on another machine (`BATON_URL`, SPEC section 13): the same
//! arguments, the same output and the same exit codes as on the hub's own machine, each
//! request made through the hub's HTTP API as the token's agent and its answer printed by
//! the same renderers as a local command's.
//!
//! The project is the one `--project` names, else the one `baton project map` mapped the
//! current directory to, else `default`. Commands that change the hub's own machine (its
//! tokens, wake commands, archive, backups) refuse, saying where to run them.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use serde_json::json;

use baton::activity::ActivityRecord;
use baton::board::task::{Status, TaskId};
use baton::board::transition::Action;
use baton::error::Error;
use baton::project::Project;
use baton::registry::AgentRecord;
use baton::remote::map::ProjectMap;
use baton::remote::{Hub, Observer};
use baton::session::{AgentMatrix, Changed, Inbox, Mail, Sent, TaskView};
use baton::time;
use baton::wake::WakeOutcome;
use baton::watch::LOOK_AGAIN_EVERY;

use super::agents::{AgentCommand, AgentsCommand};
use super::board::{BoardCommand, LogArgs};
use super::messages::MessagesCommand;
use super::projects::ProjectCommand;
use super::wake::WakeCommand;
use super::watch::WatchCommand;
use super::{Command, Context, output, render};

/// Whether `command` acts on the hub when BATON_URL is set; `demo`, `setup` and baton's own
/// detached processes run on this machine all the same.
pub fn is_for_hub(command: &Command) -> bool {
    !matches!(
        command,
        Command::Demo
            | Command::Setup(_)
            | Command::Wake(WakeCommand::WakeSupervisor(_) | WakeCommand::Notify)
            | Command::AlertSend(_)
    )
}

/// Runs `command` on the hub.
pub fn run(context: &Context, hub: &Hub, command: Command) -> Result<i32, Error> {
    let remote = Remote { context, hub };
    let code = match command {
        Command::Board(command) => remote.board(command)?,
        Command::Agents(command) => remote.agents(command)?,
        Command::Messages(command) => remote.messages(command)?,
        Command::Watch(WatchCommand::Wait(args)) => remote.wait(args.timeout)?,
        Command::Watch(WatchCommand::Watch(args)) => remote.watch(&args)?,
        Command::Project(ProjectCommand::Init(_)) => {
            return Err(remote.hub_only(
                "project init",
                "a project's workspace is a directory of the hub's machine: run `baton project \
                 init` there, then `baton project map ID DIR` here",
            ));
        }
        Command::Project(ProjectCommand::Set(_)) => {
            return Err(remote.hub_only(
                "project set",
                "a project's settings are kept on the hub's machine: run `baton project set` \
                 there",
            ));
        }
        Command::Project(ProjectCommand::List) => {
            let map = remote.map()?;
            let projects: Vec<Project> = hub
                .get::<Vec<Project>>("/projects")?
                .into_iter()
                .map(|project| mapped(&map, project))
                .collect();
            output::emit(context.global.json, &projects, |projects| {
                super::projects::list_text(projects)
            });
            0
        }
        Command::Project(ProjectCommand::Show) => {
            let project = remote.project()?;
            output::emit(context.global.json, &project, super::projects::show_text);
            0
        }
        Command::Context(args) => {
            let id = remote.project_id()?;
            let project: Project = match args.add {
                Some(text) => {
                    hub.post(&format!("/projects/{id}/context"), &json!({"text": text}))?
                }
                None => hub.get(&format!("/projects/{id}"))?,
            };
            let project = mapped(&remote.map()?, Project { id, ..project });
            output::emit(context.global.json, &project.context, |_| {
                super::projects::context_text(&project)
            });
            0
        }
        Command::Wake(WakeCommand::Wake(args)) => {
            // Checked before it becomes part of a URL path, as every name is.
            baton::names::check(baton::names::NameKind::Agent, &args.name)?;
            let id = remote.project_id()?;
            let outcome: WakeOutcome =
                hub.post(&format!("/projects/{id}/wake/{}", args.name), &json!({}))?;
            output::emit(context.global.json, &outcome, super::wake::describe);
            0
        }
        Command::Doctor(args) => match args.restore {
            Some(_) => return Err(remote.hub_only("doctor --restore", "")),
            None => super::doctor::run(context, args)?,
        },
        Command::Token(_) => return Err(remote.hub_only("token", "")),
        Command::Import(_) => {
            return Err(remote.hub_only(
                "import",
                "the board to carry over is read from the hub's disk: copy it there and run \
                 `baton import` on that machine",
            ));
        }
        // The alerts' URLs and secrets are the hub's: they are set where they are kept.
        Command::Alert(_) => return Err(remote.hub_only("alert", "")),
        Command::Serve(_) => {
            return Err(Error::invalid_with_hint(
                format!(
                    "baton serve serves this machine's board, but BATON_URL points at the hub \
                     at {}",
                    hub.url()
                ),
                "unset BATON_URL to serve this machine's board",
            ));
        }
        Command::Mcp(_) => super::bridge::run(context, hub)?,
        Command::Listen(args) => super::listen::run(context, hub, args)?,
        Command::Hook(args) => super::hook::run_remote(context, hub, args),
        Command::Project(ProjectCommand::Map(args)) => super::projects::map(context, args)?,
        Command::Project(ProjectCommand::Unmap { project }) => {
            super::projects::unmap(context, &project)?
        }
        Command::Wake(_) | Command::Demo | Command::Setup(_) | Command::AlertSend(_) => {
            unreachable!("is_for_hub keeps these on this machine")
        }
    };
    Ok(code)
}

struct Remote<'a> {
    context: &'a Context,
    hub: &'a Hub,
}

impl Remote<'_> {
    fn json(&self) -> bool {
        self.context.global.json
    }

    /// The project the command acts on (see the module's comment).
    fn project_id(&self) -> Result<String, Error> {
        self.context.remote_project(None)
    }

    /// The project the command acts on, as this machine sees it (see [`mapped`]).
    fn project(&self) -> Result<Project, Error> {
        let id = self.project_id()?;
        let project: Project = self.hub.get(&format!("/projects/{id}"))?;
        Ok(mapped(&self.map()?, Project { id, ..project }))
    }

    /// This machine's project map.
    fn map(&self) -> Result<ProjectMap, Error> {
        ProjectMap::load(&self.context.hub.home)
    }

    /// The refusal of a command that only the hub's own machine can carry out.
    fn hub_only(&self, command: &str, hint: &str) -> Error {
        Error::invalid_with_hint(
            format!(
                "`baton {command}` runs only on the hub's machine, and BATON_URL points at the \
                 hub at {}",
                self.hub.url()
            ),
            match hint {
                "" => "run it there, or unset BATON_URL to act on this machine's own board"
                    .to_string(),
                hint => hint.to_string(),
            },
        )
    }

    fn board(&self, command: BoardCommand) -> Result<i32, Error> {
        let id = self.project_id()?;
        let tasks = format!("/projects/{id}/tasks");
        let now = time::now();
        let json = self.json();
        match command {
            BoardCommand::Send(args) => {
                let body = super::board::words(Some(args.body))?;
                let changed: Changed = self.hub.post(
                    &tasks,
                    &json!({
                        "to": args.to,
                        "skill": args.skill,
                        "subject": args.subject,
                        "body": body,
                        "files": args.files,
                        "priority": args.priority,
                        "after": args.after.iter().map(|id| id.0).collect::<Vec<_>>(),
                        "review": args.review,
                        "reviewer": args.reviewer,
                    }),
                )?;
                super::board::finish_change(self.context, &changed);
            }
            BoardCommand::Show(args) => {
                let view: TaskView = self.hub.get(&format!("{tasks}/{}", args.id.0))?;
                output::emit(json, &view, |view| render::task_detail(view, now));
            }
            BoardCommand::Board(args) => {
                let views: Vec<TaskView> =
                    self.hub
                        .get(&board_path(&id, args.status, args.mine, args.all))?;
                output::emit(json, &views, |views| render::board_table(&id, views, now));
            }
            BoardCommand::Inbox(args) => {
                let inbox: Inbox = self
                    .hub
                    .get(&format!("/projects/{id}/inbox?peek={}", args.peek))?;
                output::emit_streamed(json, &inbox, |out, inbox| render::inbox(out, inbox, now));
            }
            BoardCommand::Status(args) => {
                let inbox: Inbox = self
                    .hub
                    .get(&format!("/projects/{id}/inbox?preview=true&peek=true"))?;
                if json {
                    output::json(&inbox);
                } else if !(args.quiet && inbox.is_empty()) {
                    output::line(&render::status_line(&inbox));
                }
            }
            BoardCommand::Log(args) => self.log(&id, &args)?,
            BoardCommand::Note(args) => {
                let record: ActivityRecord = self.hub.post(
                    &format!("/projects/{id}/notes"),
                    &json!({"text": args.text.join(" ")}),
                )?;
                output::emit(json, &record, |_| "noted".to_string());
            }
            BoardCommand::Archive(_) => return Err(self.hub_only("archive", "")),
            transition => {
                let Some((task, action)) = super::board::transition(transition)? else {
                    return Ok(0);
                };
                let changed = act(self.hub, &id, task, &action)?;
                super::board::finish_change(self.context, &changed);
            }
        }
        Ok(0)
    }

    fn log(&self, id: &str, args: &LogArgs) -> Result<(), Error> {
        let path = |lines: usize, since: Option<&str>| {
            let mut path = format!("/projects/{id}/log?n={lines}");
            if let Some(since) = since {
                path.push_str(&format!("&since={since}"));
            }
            path
        };
        let since = args.since.map(|at| at.to_string());
        let first = path(args.lines, since.as_deref());
        let print = |record: &ActivityRecord| {
            if self.json() {
                output::line_exact(&serde_json::to_string(record).unwrap_or_default());
            } else {
                output::line(&render::activity_line(record));
            }
        };
        if !args.follow {
            let records: Vec<ActivityRecord> = self.hub.get(&first)?;
            records.iter().for_each(print);
            return Ok(());
        }
        // Followed, the stream is opened before the first look (the first call of `look`),
        // so no line slips between them, and a hub that never answers is said at once.
        // `seen` is the last instant printed and its lines: a later look from that instant
        // on gives them again, and they are not printed twice.
        let mut seen: Option<(baton::time::Timestamp, Vec<ActivityRecord>)> = None;
        self.follow(id, |hub| {
            let (fresh, is_first) = match &seen {
                None => (hub.get::<Vec<ActivityRecord>>(&first)?, true),
                // Everything from the last instant printed on, however much came since.
                Some((at, _)) => (
                    hub.get::<Vec<ActivityRecord>>(&path(FOLLOW_BATCH, Some(&at.to_string())))?,
                    false,
                ),
            };
            let printed = seen
                .as_ref()
                .map(|(_, lines)| lines.as_slice())
                .unwrap_or(&[]);
            for record in fresh.iter().filter(|record| !printed.contains(record)) {
                print(record);
            }
            match fresh.last() {
                Some(newest) => {
                    let at = newest.at;
                    let lines = fresh.iter().filter(|record| record.at == at).cloned();
                    seen = Some((at, lines.collect()));
                }
                None if is_first => seen = Some((time::now(), Vec::new())),
                None => {}
            }
            Ok(false)
        })
    }

    fn agents(&self, command: AgentsCommand) -> Result<i32, Error> {
        let json = self.json();
        match command {
            AgentsCommand::Agents => {
                let id = self.project_id()?;
                let matrix: AgentMatrix = self.hub.get(&format!("/projects/{id}/agents"))?;
                if !json {
                    super::agents::warn_unreadable(&matrix);
                }
                let now = time::now();
                output::emit(json, &matrix, |matrix| {
                    super::agents::matrix_table(matrix, now)
                });
            }
            AgentsCommand::Agent(AgentCommand::Add(args)) => {
                if args.wake || args.no_wake_command {
                    return Err(self.hub_only(
                        "agent add --wake",
                        "a wake command runs on the hub's machine and is set there; on this \
                         machine `baton listen --wake -- CMD ARGS…` runs yours when work arrives",
                    ));
                }
                baton::names::check(baton::names::NameKind::Agent, &args.name)?;
                let record: AgentRecord = self.hub.post(
                    &format!("/agents/{}", args.name),
                    &json!({"strengths": args.strengths, "skills": args.skills}),
                )?;
                output::emit(json, &record, super::agents::describe);
            }
            AgentsCommand::Agent(AgentCommand::Rm { .. }) => {
                return Err(self.hub_only("agent rm", ""));
            }
            AgentsCommand::Agent(AgentCommand::Show { name }) => {
                baton::names::check(baton::names::NameKind::Agent, &name)?;
                // The project says whose coordinator the caller may be: a wake command is
                // shown to the agent itself and to its project's coordinator alone.
                let path = match self.project_id() {
                    Ok(id) => format!("/agents/{name}?project={id}"),
                    Err(_) => format!("/agents/{name}"),
                };
                let record: AgentRecord = self.hub.get(&path)?;
                output::emit(json, &record, super::agents::describe);
            }
            AgentsCommand::Whoami => {
                let agent = baton::remote::listen::agent_of(self.hub)?;
                // Its own mapped directory, or none: the hub's path means nothing here.
                let project = self.project()?;
                let me = super::agents::Whoami {
                    agent: Some(agent),
                    project: &project.id,
                    workspace: project.workspace.as_deref(),
                    coordinator: project.coordinator.as_deref(),
                    home: self.context.hub.home.root(),
                    hub: Some(self.hub.url()),
                };
                output::emit(json, &me, super::agents::whoami_text);
            }
            AgentsCommand::Coordinator(args) => {
                let id = self.project_id()?;
                let project: Project = self.hub.post(
                    &format!("/projects/{id}/coordinator"),
                    &json!({"set": args.set, "human": args.human, "not_human": args.not_human}),
                )?;
                output::emit(json, &super::agents::coordinator_value(&project), |_| {
                    super::agents::coordinator_text(&project)
                });
            }
        }
        Ok(0)
    }

    fn messages(&self, command: MessagesCommand) -> Result<i32, Error> {
        let id = self.project_id()?;
        match command {
            MessagesCommand::Msg(args) => {
                let text = super::board::words(Some(args.text.join(" ")))?;
                let sent = message(
                    self.hub,
                    &id,
                    &args.to,
                    &text,
                    &args.kind,
                    args.summary.as_deref(),
                )?;
                output::emit(self.json(), &sent, render::sent);
            }
            MessagesCommand::Messages(args) => {
                let mail: Mail = self.hub.get(&format!(
                    "/projects/{id}/messages?all={}&peek={}",
                    args.all, args.peek
                ))?;
                let now = time::now();
                output::emit(self.json(), &mail, |mail| render::mail(mail, now));
            }
        }
        Ok(0)
    }

    /// `wait`: the event stream is opened first, then the inbox looked at, then looked at
    /// again on each change in the project (and every few seconds, for leases running out),
    /// so no hand-over can slip between a look and the wait that follows it.
    fn wait(&self, timeout: Option<u64>) -> Result<i32, Error> {
        let id = self.project_id()?;
        let started = Instant::now();
        let limit = timeout.map(Duration::from_secs);
        let mut found: Option<Inbox> = None;
        let outcome = self.follow_until(&id, limit.map(|limit| started + limit), |hub| {
            let inbox: Inbox = hub.get(&format!("/projects/{id}/inbox?preview=true&peek=true"))?;
            let is_done = !inbox.is_empty();
            found = Some(inbox);
            Ok(is_done)
        });
        match outcome {
            Ok(true) => {}
            Ok(false) => {
                return Err(Error::WaitTimedOut {
                    seconds: timeout.unwrap_or(0),
                });
            }
            Err(error) => return Err(error),
        }
        let inbox = found.expect("a look that ended the wait keeps its inbox");
        if self.json() {
            output::json(&inbox);
        } else {
            output::line(&render::status_line(&inbox));
        }
        Ok(0)
    }

    /// `watch`: the board, drawn again on each change in the project. Its reads say they
    /// come from a board on a screen, which renews none of the agent's leases on the hub.
    fn watch(&self, args: &super::board::BoardArgs) -> Result<i32, Error> {
        let hub = self.hub.clone().observing(Observer::Watch);
        let watching = Remote {
            context: self.context,
            hub: &hub,
        };
        let id = self.project_id()?;
        let is_terminal = std::io::stdout().is_terminal();
        // The application needs keys as well as a screen; `--json` is a stream for scripts.
        if is_terminal && std::io::stdin().is_terminal() && !self.json() {
            let board = super::tui::BoardAt::Remote {
                agent: baton::remote::listen::agent_of(&hub)?,
                hub,
                project: id,
            };
            let filter = baton::session::BoardFilter {
                status: args.status,
                mine: args.mine,
                all: args.all,
            };
            return super::tui::run(board, &super::watch::tui_filter(filter));
        }
        let path = board_path(&id, args.status, args.mine, args.all);
        watching.follow(&id, |hub| {
            let views: Vec<TaskView> = hub.get(&path)?;
            super::watch::draw(self.context, &id, &views, time::now(), is_terminal);
            Ok(false)
        })?;
        Ok(0)
    }

    /// Calls `look` now and after every change in project `id` until the process ends.
    fn follow(&self, id: &str, look: impl FnMut(&Hub) -> Result<bool, Error>) -> Result<(), Error> {
        self.follow_until(id, None, look).map(|_| ())
    }

    /// Calls `look` at once, then after each change in project `id` on the hub (and every
    /// [`LOOK_AGAIN_EVERY`]), until it says it is done (`Ok(true)`) or `deadline` passes
    /// (`Ok(false)`). A broken stream is opened again, and looked through again once open:
    /// nothing that changed meanwhile is missed. The hub unreachable at the start is exit 6;
    /// later, it is tried again until the deadline.
    fn follow_until(
        &self,
        id: &str,
        deadline: Option<Instant>,
        mut look: impl FnMut(&Hub) -> Result<bool, Error>,
    ) -> Result<bool, Error> {
        // With a deadline, neither the stream's opening nor a look may outlast it, however
        // the hub behaves (one that takes connections and never answers, say).
        let left = || deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
        let open = || match left() {
            Some(left) => self.hub.events_within(left.max(MOMENT)),
            None => self.hub.events(),
        };
        let mut events = open()?;
        let mut pause = Duration::from_millis(250);
        loop {
            let is_done = match left() {
                Some(left) => look(&self.hub.clone().within(left.max(MOMENT)))?,
                None => look(self.hub)?,
            };
            if is_done {
                return Ok(true);
            }
            loop {
                let now = Instant::now();
                if deadline.is_some_and(|deadline| now >= deadline) {
                    return Ok(false);
                }
                let within = deadline.map_or(LOOK_AGAIN_EVERY, |deadline| {
                    (deadline - now).min(LOOK_AGAIN_EVERY)
                });
                match events.next(within) {
                    Ok(Some(change)) if change.project.as_deref().is_some_and(|p| p != id) => {}
                    Ok(_) => break,
                    Err(error) => {
                        eprintln!(
                            "warning: {}; connecting again",
                            baton::text::inline(&error.to_string())
                        );
                        loop {
                            std::thread::sleep(pause);
                            pause = (pause * 2).min(Duration::from_secs(10));
                            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                                return Ok(false);
                            }
                            if let Ok(stream) = open() {
                                events = stream;
                                pause = Duration::from_millis(250);
                                break;
                            }
                        }
                        break;
                    }
                }
            }
        }
    }
}

/// The least time a request is given when a deadline is near: a request given none would
/// fail without being tried.
const MOMENT: Duration = Duration::from_millis(100);

/// The most lines `log --follow` asks the hub for at each change.
const FOLLOW_BATCH: usize = 10_000;

/// `project` as this machine shows it: its workspace is the directory `baton project map`
/// gave it here, or none. The hub's workspace is a path of the hub's machine, which an agent
/// elsewhere is never shown (SPEC section 7).
fn mapped(map: &ProjectMap, project: Project) -> Project {
    Project {
        workspace: map.dir_of(&project.id).map(std::path::Path::to_path_buf),
        ..project
    }
}

/// A transition of task `task` on the hub, as the token's agent.
pub(super) fn act(
    hub: &Hub,
    project: &str,
    task: TaskId,
    action: &Action,
) -> Result<Changed, Error> {
    let (text, to) = action.words();
    hub.post(
        &format!(
            "/projects/{project}/tasks/{}/{}",
            task.0,
            action.kind().command()
        ),
        &json!({"text": text, "to": to}),
    )
}

/// A message sent on the hub, as the token's agent.
pub(super) fn message(
    hub: &Hub,
    project: &str,
    to: &str,
    text: &str,
    kind: &str,
    summary: Option<&str>,
) -> Result<Sent, Error> {
    hub.post(
        &format!("/projects/{project}/messages"),
        &json!({"to": to, "text": text, "type": kind, "summary": summary}),
    )
}

/// The board's API path with `board`'s filters.
pub(super) fn board_path(id: &str, status: Option<Status>, mine: bool, all: bool) -> String {
    let mut path = format!("/projects/{id}/board?mine={mine}&all={all}");
    if let Some(status) = status {
        path.push_str(&format!("&status={status}"));
    }
    path
}
