//! The MCP face of baton (SPEC section 9): one tool per thing an agent does on the board,
//! each calling the same [`Session`](crate::session::Session) method as the CLI and
//! answering with the same JSON as the CLI's `--json`, as structured content and as text.
//!
//! Over stdio the identity is fixed when the server starts; over HTTP (`baton serve`) it is
//! the agent of each request's token, which the HTTP layer puts in the request as a
//! [`Caller`] and nothing in the call can change. Over stdio the project follows the working
//! directory or a tool's `project` argument, with the CLI's isolation; over HTTP the caller
//! has no working directory on the hub, so a call names its project by id (`default` when it
//! names none) and the serving process's directory never matters. A refused action is a tool result
//! with `isError` and the CLI's `error:`/`hint:` lines, never a protocol error. Editing agent
//! records and wake commands is left to the CLI on purpose (SPEC section 8).
//!
//! Every agent pays for the `tools/list` answer in context on every session, so descriptions
//! are short and the argument schemas are kept plain.

pub mod channel;
pub mod codex;
mod diff;
mod fields;
mod handshake;
mod reserve;
pub mod stdio;

pub use handshake::HandshakeFilter;

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::handler::server::common::schema_for_type;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::model::{
    CallToolResult, ContentBlock, ExperimentalCapabilities, Implementation, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::schemars::{self, JsonSchema, Schema, SchemaGenerator, json_schema};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::board::action::{ACTIONS, ActionKind, Argument, Words};
use crate::board::search::Search;
use crate::board::task::{Priority, Status, TaskId};
use crate::board::transition::Action;
use crate::error::{Error, Result};
use crate::mail::MessageType;
use crate::project::DEFAULT_PROJECT;
use crate::session::blocking::{Caller, Opening, Stopped, in_session};
use crate::session::{BoardFilter, Desk, Hub, InboxLook, LocalDesk, NewTask, Standing};
use crate::text::Face;
use crate::wake::WakeOutcome;

/// The MCP server of one identity, or of each request's [`Caller`].
#[derive(Debug, Clone)]
pub struct BatonServer {
    hub: Hub,
    identity: Identity,
    /// The project of calls that name none (`baton mcp --project ID`); else the working
    /// directory decides.
    project: Option<String>,
    /// Told whom each change woke (the session wakes and notifies them, as for the CLI);
    /// `baton mcp` writes the CLI's line for it to stderr.
    report_wake: fn(&WakeOutcome),
    /// What this process answers a probe from Codex's app-server with, by which it finds
    /// the thread it serves ([`codex`]).
    probe: codex::Probe,
    tool_router: ToolRouter<Self>,
}

/// Whom a server's calls act as, and from where.
#[derive(Debug, Clone)]
enum Identity {
    /// The agent named when the server started (`baton mcp --as NAME`), in the server's
    /// working directory.
    Fixed(String),
    /// The [`Caller`] of each request, which the HTTP layer set from its token.
    PerRequest,
    /// One request's [`Caller`], with no working directory on the hub.
    Remote(String),
}

/// A task number as an argument: `12`, or the `"T-12"` a model copies from a listing.
#[derive(Debug, Clone, Copy)]
pub struct TaskNumber(pub TaskId);

impl<'de> Deserialize<'de> for TaskNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = TaskNumber;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a task number such as 12 or \"T-12\"")
            }

            fn visit_u64<E: de::Error>(self, number: u64) -> Result<TaskNumber, E> {
                self.visit_str(&number.to_string())
            }

            fn visit_i64<E: de::Error>(self, number: i64) -> Result<TaskNumber, E> {
                self.visit_str(&number.to_string())
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<TaskNumber, E> {
                text.parse().map(TaskNumber).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

// Hand-written schemas: plain and small, with no `format` that some clients warn about.
impl JsonSchema for TaskNumber {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "TaskNumber".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "integer", "minimum": 1 })
    }
}

impl JsonSchema for Status {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Status".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = Status::ALL.iter().map(|status| status.as_str()).collect();
        json_schema!({ "type": "string", "enum": names })
    }
}

impl JsonSchema for Priority {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Priority".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = [
            Priority::Urgent,
            Priority::High,
            Priority::Normal,
            Priority::Low,
        ]
        .iter()
        .map(|priority| priority.as_str())
        .collect();
        json_schema!({ "type": "string", "enum": names })
    }
}

fn status_schema(generator: &mut SchemaGenerator) -> Schema {
    Status::json_schema(generator)
}

/// The types an agent may send (default `text`); `notification` is baton's own.
fn message_type_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = MessageType::ALL
        .iter()
        .filter(|kind| **kind != MessageType::Notification)
        .map(|kind| kind.as_str())
        .collect();
    json_schema!({ "type": "string", "enum": names })
}

/// An optional text argument: absent and empty mean the same, and the schema says `string`
/// rather than `string or null`.
fn text_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string" })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ProjectArgs {
    /// Project id (default: your working directory's; over HTTP `default`)
    #[serde(default)]
    #[schemars(schema_with = "text_schema")]
    pub project: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct InboxArgs {
    /// Look without marking messages read
    #[serde(default)]
    pub peek: bool,
    #[serde(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskArgs {
    pub id: TaskNumber,
    #[serde(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BoardArgs {
    /// Only tasks in this status
    #[serde(default)]
    #[schemars(schema_with = "status_schema")]
    pub status: Option<Status>,
    /// Only tasks you sent, hold or review
    #[serde(default)]
    pub mine: bool,
    /// Finished tasks too; with `label` or `search`, archived ones too
    #[serde(default)]
    pub all: bool,
    /// Only tasks with this label
    #[serde(default)]
    #[schemars(schema_with = "text_schema")]
    pub label: Option<String>,
    /// Only tasks whose subject, body or thread holds these words (case aside)
    #[serde(default)]
    #[schemars(schema_with = "text_schema")]
    pub search: Option<String>,
    #[serde(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SendArgs {
    /// Agent to give it to
    #[serde(default)]
    #[schemars(schema_with = "text_schema")]
    pub to: Option<String>,
    /// Instead of `to`: the least busy agent with this skill
    #[serde(default)]
    #[schemars(schema_with = "text_schema")]
    pub skill: Option<String>,
    /// One line saying what is wanted
    pub subject: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub priority: Priority,
    /// Task numbers to wait for
    #[serde(default)]
    pub after: Vec<TaskNumber>,
    /// Must be reviewed before it completes
    #[serde(default)]
    pub review: bool,
    /// Who reviews it (implies review); default: you
    #[serde(default)]
    #[schemars(schema_with = "text_schema")]
    pub reviewer: Option<String>,
    /// Paths (globs) or KIND:NAME it will change; nobody else touches them meanwhile
    #[serde(default)]
    pub touches: Vec<String>,
    /// Labels, such as bug or ui (at most 16)
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MessageArgs {
    /// Agent name, or @all for every agent but you
    pub to: String,
    pub text: String,
    #[serde(default, rename = "type")]
    #[schemars(schema_with = "message_type_schema")]
    pub kind: Option<MessageType>,
    /// One line for lists (default: the text's first line)
    #[serde(default)]
    #[schemars(schema_with = "text_schema")]
    pub summary: Option<String>,
    #[serde(flatten)]
    pub project: ProjectArgs,
}

type ToolResult = std::result::Result<CallToolResult, ErrorData>;

#[tool_router]
impl BatonServer {
    /// A server acting as `agent` (a checked name) on the hub, telling `report_wake` whom
    /// its changes woke.
    pub fn new(
        hub: Hub,
        agent: String,
        project: Option<String>,
        report_wake: fn(&WakeOutcome),
    ) -> Self {
        BatonServer {
            hub,
            identity: Identity::Fixed(agent),
            project,
            report_wake,
            probe: codex::Probe::new(),
            tool_router: compact(
                Self::tool_router() + Self::reserve_tools() + Self::diff_tools() + action_tools(),
            ),
        }
    }

    /// A server whose every call acts as the [`Caller`] its HTTP request carries; whom its
    /// changes woke is told to `report_wake`.
    pub fn per_request(hub: Hub, report_wake: fn(&WakeOutcome)) -> Self {
        BatonServer {
            hub,
            identity: Identity::PerRequest,
            project: None,
            report_wake,
            probe: codex::Probe::new(),
            tool_router: compact(
                Self::tool_router() + Self::reserve_tools() + Self::diff_tools() + action_tools(),
            ),
        }
    }

    /// This server acting as the call's agent: itself when its identity is fixed, else one
    /// acting as the request's [`Caller`]; `None` when a request carries none.
    fn for_call(&self, context: &RequestContext<RoleServer>) -> Option<BatonServer> {
        match &self.identity {
            Identity::Fixed(_) | Identity::Remote(_) => Some(self.clone()),
            Identity::PerRequest => {
                let parts = context.extensions.get::<axum::http::request::Parts>()?;
                let Caller(agent, _) = parts.extensions.get::<Caller>()?;
                Some(BatonServer {
                    identity: Identity::Remote(agent.clone()),
                    ..self.clone()
                })
            }
        }
    }

    #[tool(description = "Start here: tasks waiting for you and unread messages (marked read).")]
    async fn inbox(&self, Parameters(args): Parameters<InboxArgs>) -> ToolResult {
        if args.peek {
            self.respond(args.project.project, |desk| desk.inbox(InboxLook::Peek))
                .await
        } else {
            self.respond(args.project.project, |desk| desk.inbox(InboxLook::MarkRead))
                .await
        }
    }

    #[tool(
        description = "Open tasks of the project.",
        annotations(read_only_hint = true)
    )]
    async fn board(&self, Parameters(args): Parameters<BoardArgs>) -> ToolResult {
        let (status, mine, all) = (args.status, args.mine, args.all);
        let (label, search) = (args.label, args.search);
        self.respond_list(args.project.project, "tasks", move |desk| {
            let filter = BoardFilter {
                status,
                mine,
                all,
                search: Search::new(label.as_deref(), search.as_deref())?,
                offered: false,
            };
            desk.board(&filter)
        })
        .await
    }

    #[tool(
        description = "One task with its whole thread.",
        annotations(read_only_hint = true)
    )]
    async fn show(&self, Parameters(args): Parameters<TaskArgs>) -> ToolResult {
        let TaskNumber(id) = args.id;
        self.respond(args.project.project, move |desk| desk.show(id))
            .await
    }

    #[tool(description = "Give a new task to an agent (`to`) or by `skill`.")]
    async fn send(&self, Parameters(args): Parameters<SendArgs>) -> ToolResult {
        let new = NewTask {
            to: args.to,
            skill: args.skill,
            subject: args.subject,
            body: args.body,
            files: args.files,
            priority: args.priority,
            after: args.after.into_iter().map(|TaskNumber(id)| id).collect(),
            review: args.review,
            reviewer: args.reviewer,
            touches: args.touches,
            labels: args.labels,
        }
        .without_empty_names();
        let report_wake = self.report_wake;
        self.respond(args.project.project, move |desk| {
            let changed = desk.send(new)?;
            changed.woken.iter().for_each(report_wake);
            Ok(changed)
        })
        .await
    }

    #[tool(description = "Message an agent, or @all.")]
    async fn message(&self, Parameters(args): Parameters<MessageArgs>) -> ToolResult {
        let kind = args.kind.unwrap_or(MessageType::Text);
        let report_wake = self.report_wake;
        self.respond(args.project.project, move |desk| {
            let sent = desk.message(&args.to, &args.text, kind, args.summary.as_deref())?;
            sent.woken.iter().for_each(report_wake);
            Ok(sent)
        })
        .await
    }

    #[tool(
        description = "Who is here: strengths, skills, load.",
        annotations(read_only_hint = true)
    )]
    async fn agents(&self, Parameters(args): Parameters<ProjectArgs>) -> ToolResult {
        self.respond(args.project, |desk| desk.agents()).await
    }
}

impl BatonServer {
    async fn act(
        &self,
        TaskNumber(id): TaskNumber,
        project: ProjectArgs,
        action: Action,
    ) -> ToolResult {
        let report_wake = self.report_wake;
        self.respond(project.project, move |desk| {
            let changed = desk.act(id, action)?;
            changed.woken.iter().for_each(report_wake);
            Ok(changed)
        })
        .await
    }

    /// Runs `operation` on the desk of this identity; the result is the CLI's `--json`.
    async fn respond<T, F>(&self, project: Option<String>, operation: F) -> ToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&dyn Desk) -> Result<T> + Send + 'static,
    {
        match self.run(project, operation).await? {
            Ok(value) => {
                let value = to_json(&value)?;
                let text = value.to_string();
                Ok(reply(value, text))
            }
            Err(error) => Ok(refusal(&error)),
        }
    }

    /// Like [`Self::respond`] for commands whose `--json` is a list: structured content must
    /// be an object, so it holds the list under `key`; the text is the list itself.
    async fn respond_list<T, F>(
        &self,
        project: Option<String>,
        key: &'static str,
        operation: F,
    ) -> ToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&dyn Desk) -> Result<Vec<T>> + Send + 'static,
    {
        match self.run(project, operation).await? {
            Ok(list) => {
                let list = to_json(&list)?;
                let text = list.to_string();
                Ok(reply(serde_json::json!({ key: list }), text))
            }
            Err(error) => Ok(refusal(&error)),
        }
    }

    /// Opens a session and runs `operation` on its desk, on a blocking thread: sessions read
    /// and lock files, and a lock wait must not stall the protocol (pings, other calls).
    async fn run<T, F>(
        &self,
        project: Option<String>,
        operation: F,
    ) -> std::result::Result<Result<T>, ErrorData>
    where
        T: Send + 'static,
        F: FnOnce(&dyn Desk) -> Result<T> + Send + 'static,
    {
        let hub = self.hub.clone();
        let (agent, is_in_working_directory) = match &self.identity {
            Identity::Fixed(agent) => (agent.clone(), true),
            Identity::Remote(agent) => (agent.clone(), false),
            Identity::PerRequest => {
                return Err(ErrorData::internal_error("the call has no identity", None));
            }
        };
        let project = project
            .filter(|project| !project.is_empty())
            .or_else(|| self.project.clone());
        let opening = match is_in_working_directory {
            true => Opening::Here { agent, project },
            false => Caller(agent, Standing::Agent)
                .opening(project.unwrap_or_else(|| DEFAULT_PROJECT.to_string())),
        };
        in_session(hub, opening, move |session| {
            operation(&LocalDesk::of(session))
        })
        .await
        .map_err(|Stopped| ErrorData::internal_error("the tool stopped", None))
    }
}

/// The tools of the task actions, one a row of the model's table of actions: its name, its
/// description, and its words and new assignee as arguments, required where the row
/// requires them.
///
/// Built by walking the rows rather than with rmcp's `#[tool]` macro, which wants a method
/// and an argument struct per tool and so would spell each action again; the other tools,
/// one of a kind each, keep the macro.
fn action_tools() -> ToolRouter<BatonServer> {
    let mut router = ToolRouter::new();
    for row in ACTIONS {
        let mut schema = schema_for_type::<TaskArgs>().as_ref().clone();
        // As `#[tool]` leaves it: a tool's schema is named by the tool.
        schema.remove("title");
        let mut required = vec![Value::from("id")];
        let mut properties = match schema.remove("properties") {
            Some(Value::Object(properties)) => properties,
            _ => serde_json::Map::new(),
        };
        for argument in row.assignee.iter().chain(&row.argument) {
            let is_required = row.words == Words::Required
                || row
                    .assignee
                    .as_ref()
                    .is_some_and(|to| to.name == argument.name);
            let mut property = serde_json::Map::new();
            property.insert("type".into(), "string".into());
            if let Some(help) = argument.tool_help {
                property.insert("description".into(), help.into());
            }
            if is_required {
                required.push(argument.name.into());
            } else {
                property.insert("default".into(), "".into());
            }
            properties.insert(argument.name.into(), property.into());
        }
        for field in row.fields {
            properties.insert(field.argument.name.into(), fields::schema(field));
        }
        schema.insert("properties".into(), properties.into());
        schema.insert("required".into(), required.into());
        router.add_route(ToolRoute::new_dyn(
            Tool::new(row.name, row.tool, schema),
            call_action,
        ));
    }
    router
}

/// A call of an action's tool: its arguments read as its row says, then the action taken.
fn call_action(
    context: ToolCallContext<'_, BatonServer>,
) -> Pin<Box<dyn Future<Output = std::result::Result<CallToolResponse, ErrorData>> + Send + '_>> {
    Box::pin(async move {
        let server = context.service;
        let Some(kind) = ActionKind::from_name(&context.name) else {
            return Err(ErrorData::invalid_params("tool not found", None));
        };
        let row = kind.row();
        let arguments = context.arguments.unwrap_or_default();
        // As rmcp's `Parameters` refuses arguments that do not fit the schema, so the model
        // is told what to fix.
        let refused = |error: serde_json::Error| {
            ErrorData::invalid_params(format!("failed to deserialize parameters: {error}"), None)
        };
        let args: TaskArgs =
            serde_json::from_value(Value::Object(arguments.clone())).map_err(refused)?;
        let text = |argument: Option<&Argument>,
                    is_required: bool|
         -> std::result::Result<Option<String>, ErrorData> {
            let Some(argument) = argument else {
                return Ok(None);
            };
            match arguments.get(argument.name) {
                Some(value) => String::deserialize(value).map(Some).map_err(refused),
                None if is_required => Err(refused(de::Error::missing_field(argument.name))),
                None => Ok(Some(String::new())),
            }
        };
        let words = text(row.argument.as_ref(), row.words == Words::Required)?;
        let to = text(row.assignee.as_ref(), true)?;
        let words = words.unwrap_or_default();
        // Named nobody (`to` empty): the state machine refuses it, naming `to`.
        let action = Action::of(kind, words.clone(), to).unwrap_or(Action::new(kind, words));
        let action = match row.fields {
            [] => action,
            changed => action.with_edits(fields::edits(changed, &arguments).map_err(refused)?),
        };
        let result = server.act(args.id, args.project, action).await?;
        Ok(result.into())
    })
}

/// The newest protocol version served. Claude Code drops channel pushes on a connection of
/// the stateless 2026-07-28 era (it has no path for a notification nobody asked for), so
/// baton stays on the `initialize` handshake: every version up to 2025-11-25.
pub const NEWEST_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// The versions [`BatonServer`] serves, oldest first.
pub fn supported_versions() -> &'static [ProtocolVersion] {
    ProtocolVersion::known_up_to(&NEWEST_VERSION)
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for BatonServer {
    fn get_info(&self) -> ServerConfig {
        let mut experimental = ExperimentalCapabilities::new();
        experimental.insert(channel::CAPABILITY.to_string(), Default::default());
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_experimental_with(experimental)
            .build();
        let acting_as = match &self.identity {
            Identity::Fixed(agent) => format!("You act as `{agent}`."),
            Identity::PerRequest | Identity::Remote(_) => {
                "You act as the agent your token belongs to, in project `default` unless a \
                 call names another by id."
                    .to_string()
            }
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("baton", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "baton: the task board shared by the agents of this machine. {acting_as} \
                 Call `inbox` first and act on each task in it; ids are task numbers."
            ))
    }

    /// Each call runs as its identity (see [`BatonServer::for_call`]); a request that
    /// carries none is refused as a tool result, never served as somebody.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        // A probe of Codex's app-server asking which thread this process serves (see
        // [`codex`]): answered with this process's mark, whoever asks; it acts on nothing.
        if request.name == codex::PROBE_TOOL && matches!(self.identity, Identity::Fixed(_)) {
            let mark = serde_json::json!({"probe": self.probe.as_str()});
            return Ok(CallToolResult::structured(mark).into());
        }
        let Some(server) = self.for_call(&context) else {
            let refused = CallToolResult::error(vec![ContentBlock::text(
                "error: the request carries no identity",
            )]);
            return Ok(refused.into());
        };
        let call = ToolCallContext::new(&server, request, context);
        server.tool_router.call(call).await
    }

    /// Over stdio, the `initialize` eras (see [`NEWEST_VERSION`]); over HTTP every era rmcp
    /// knows, the stateless one included (a client on it has no session, hence no stream
    /// and no push: pushes over HTTP are made to `initialize` sessions, serve::pushes).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match self.identity {
            Identity::Fixed(_) => Cow::Borrowed(supported_versions()),
            Identity::PerRequest | Identity::Remote(_) => {
                Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::LATEST))
            }
        }
    }

    /// Once the client says the session is open, a client that takes pushes gets its
    /// agent's new work pushed into it for as long as it stays connected: Claude Code
    /// through its channel ([`channel`]), Codex through the app-server thread this server
    /// turns out to belong to ([`codex`]).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Over HTTP a session is not one agent's: each request names its own by its token,
        // and the session's stream is pushed to by the hub holding it (serve::pushes).
        let Identity::Fixed(agent) = &self.identity else {
            return;
        };
        let Some(client) = context.peer.peer_info() else {
            return;
        };
        let follower = channel::Follower {
            hub: self.hub.clone(),
            agent: agent.clone(),
            project: self.project.clone(),
        };
        if channel::takes_pushes(&client.client_info) {
            tokio::spawn(follower.follow(context.peer, channel::Target::Channel));
        } else if codex::is_codex(&client.client_info) {
            let probe = self.probe.clone();
            tokio::spawn(async move {
                match codex::find_own_thread(probe).await {
                    Ok(thread) => {
                        follower
                            .follow(context.peer, channel::Target::Codex(thread))
                            .await
                    }
                    Err(error) => eprintln!(
                        "baton mcp: no pushes into this Codex session: {}",
                        crate::text::inline(&error.to_string())
                    ),
                }
            });
        }
    }
}

/// Trims what schemars writes but no client needs: `$schema` (2020-12 is MCP's default
/// dialect) and the `"default": null` of optional arguments, which also contradicts their
/// `"type": "string"`.
fn compact(mut router: ToolRouter<BatonServer>) -> ToolRouter<BatonServer> {
    for route in router.map.values_mut() {
        let mut schema = route.attr.input_schema.as_ref().clone();
        schema.remove("$schema");
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            for property in properties.values_mut() {
                if let Value::Object(property) = property
                    && property.get("default") == Some(&Value::Null)
                {
                    property.remove("default");
                }
            }
        }
        route.attr.input_schema = Arc::new(schema);
    }
    router
}

fn to_json<T: Serialize>(value: &T) -> std::result::Result<Value, ErrorData> {
    serde_json::to_value(value).map_err(|error| {
        ErrorData::internal_error(format!("cannot encode the result: {error}"), None)
    })
}

fn reply(structured: Value, text: String) -> CallToolResult {
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(text)];
    result
}

/// The CLI's stderr lines for `error`, as a tool result the model reads: the same words,
/// naming a tool's arguments where the CLI names its flags.
fn refusal(error: &Error) -> CallToolResult {
    // As on the CLI's stderr, each line is one line, whatever the error quotes.
    let mut text = format!("error: {}", crate::text::inline(&error.message(Face::Tool)));
    if let Some(hint) = error.hint_for(Face::Tool) {
        text.push_str(&format!("\nhint: {}", crate::text::inline(&hint)));
    }
    CallToolResult::error(vec![ContentBlock::text(text)])
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use rmcp::model::{ClientJsonRpcMessage, ClientRequest};

    use super::handshake::begins_lifecycle;
    use super::*;
    use crate::file::lock::LockPolicy;
    use crate::home::Home;
    use crate::session::AfterEffects;

    fn task_number(value: Value) -> std::result::Result<TaskId, String> {
        serde_json::from_value::<TaskNumber>(value)
            .map(|TaskNumber(id)| id)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn task_numbers_are_numbers_or_what_a_listing_shows() {
        assert_eq!(task_number(json!(12)), Ok(TaskId(12)));
        assert_eq!(task_number(json!("12")), Ok(TaskId(12)));
        assert_eq!(task_number(json!("T-12")), Ok(TaskId(12)));
        assert_eq!(task_number(json!("t-12")), Ok(TaskId(12)));
        for refused in [
            json!(0),
            json!(-3),
            json!(1.5),
            json!("T-"),
            json!("soon"),
            json!(null),
        ] {
            assert!(task_number(refused.clone()).is_err(), "{refused}");
        }
    }

    fn request(value: Value) -> ClientRequest {
        match serde_json::from_value(value).expect("a JSON-RPC message") {
            ClientJsonRpcMessage::Request(request) => request.request,
            other => panic!("not a request: {other:?}"),
        }
    }

    #[test]
    fn only_initialize_or_a_whole_inline_request_on_a_served_version_begins_the_lifecycle() {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2025-11-25",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}},
        });
        assert!(begins_lifecycle(&request(initialize)));
        let stateless = json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta},
        });
        assert!(begins_lifecycle(&request(stateless)));

        let probes = [
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "server/discover"}),
            json!({"jsonrpc": "2.0", "id": 5, "method": "server/discover",
                   "params": {"_meta": meta}}),
            // No _meta, or a version not served (the stateless era, or unknown): rmcp
            // answers with an error and keeps waiting.
            json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }}}),
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                "io.modelcontextprotocol/clientCapabilities": {},
            }}}),
        ];
        for probe in probes {
            assert!(!begins_lifecycle(&request(probe.clone())), "{probe}");
        }
    }

    #[test]
    fn tool_schemas_are_plain() {
        let hub = Hub::new(
            Home::new("/nonexistent/baton".into()),
            LockPolicy {
                timeout: Duration::ZERO,
                on_wait: |_| {},
            },
            AfterEffects::none(),
        );
        let server = BatonServer::new(hub, "claude".into(), None, |_| {});
        let tools = server.tool_router.list_all();
        assert!(!tools.is_empty());
        for tool in tools {
            let schema = Value::Object(tool.input_schema.as_ref().clone());
            let text = schema.to_string();
            assert!(!text.contains("$schema"), "{}: {text}", tool.name);
            assert!(!text.contains("null"), "{}: {text}", tool.name);
            assert!(!text.contains("format"), "{}: {text}", tool.name);
            assert_eq!(
                schema["properties"]["project"],
                json!({
                    "type": "string",
                    "description": "Project id (default: your working directory's; over HTTP `default`)",
                })
            );
        }
        // Every action of the table is a tool of its name, taking its words as the table's
        // argument, required where the table requires them.
        for row in crate::board::action::ACTIONS {
            let tool = server
                .tool_router
                .get(row.name)
                .unwrap_or_else(|| panic!("no tool `{}`", row.name));
            let schema = Value::Object(tool.input_schema.as_ref().clone());
            let required: Vec<&str> = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let has = |name: &str| schema["properties"].get(name).is_some();
            use crate::board::action::Words;
            assert_eq!(
                has(row.argument_name()),
                row.words != Words::None,
                "{}",
                row.name
            );
            assert_eq!(
                required.contains(&row.argument_name()),
                row.words == Words::Required,
                "{}",
                row.name
            );
            assert_eq!(has("to"), row.takes_to(), "{}", row.name);
            assert_eq!(required.contains(&"to"), row.takes_to(), "{}", row.name);
        }
        let send = server.tool_router.get("send").expect("send");
        assert_eq!(
            Value::Object(send.input_schema.as_ref().clone())["required"],
            json!(["subject"])
        );
    }
}
