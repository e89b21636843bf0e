//! The protocol of A2A (Agent2Agent) as `baton serve` speaks it: the JSON-RPC binding of A2A
//! 1.0, and the method names and shapes of 0.3 beside it. What `/api/v1` is to
//! [`crate::json_api`], this is to `/a2a`: the shapes only, no board logic.
//!
//! The two versions carry the same objects, spelled differently:
//! - 1.0 (ProtoJSON): states and roles in SCREAMING_SNAKE_CASE (`TASK_STATE_INPUT_REQUIRED`,
//!   `ROLE_AGENT`), parts told apart by their member (`{"text": …}`), no `kind`; a send's
//!   result is `{"task": …}` and each streamed event is wrapped (`{"statusUpdate": …}`).
//! - 0.3: states and roles in kebab-case (`input-required`, `agent`), every object with its
//!   `kind` (`task`, `message`, `text`, `status-update`, `artifact-update`), results
//!   unwrapped, and a status event's `final` saying whether the stream ends with it.
//!
//! So the objects are built once, with the [`Version`] that spells them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

mod card;
mod jsonrpc;

pub use card::{AgentCard, Skill};
pub use jsonrpc::{Request, RpcError, code, error, request, result};

/// The version of A2A a request speaks, told by its method's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// `SendMessage`, `GetTask`, …
    V1,
    /// `message/send`, `tasks/get`, …
    V03,
}

/// What a JSON-RPC method asks for, whichever version names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    /// Any of the push notification configs' methods: not offered.
    PushNotificationConfig,
    /// The authenticated extended card: not offered.
    ExtendedAgentCard,
}

/// Every method name served, with what it asks for and the version it belongs to.
const METHODS: &[(&str, Method, Version)] = &[
    ("SendMessage", Method::SendMessage, Version::V1),
    (
        "SendStreamingMessage",
        Method::SendStreamingMessage,
        Version::V1,
    ),
    ("GetTask", Method::GetTask, Version::V1),
    ("ListTasks", Method::ListTasks, Version::V1),
    ("CancelTask", Method::CancelTask, Version::V1),
    ("SubscribeToTask", Method::SubscribeToTask, Version::V1),
    (
        "CreateTaskPushNotificationConfig",
        Method::PushNotificationConfig,
        Version::V1,
    ),
    (
        "GetTaskPushNotificationConfig",
        Method::PushNotificationConfig,
        Version::V1,
    ),
    (
        "ListTaskPushNotificationConfigs",
        Method::PushNotificationConfig,
        Version::V1,
    ),
    (
        "DeleteTaskPushNotificationConfig",
        Method::PushNotificationConfig,
        Version::V1,
    ),
    (
        "GetExtendedAgentCard",
        Method::ExtendedAgentCard,
        Version::V1,
    ),
    ("message/send", Method::SendMessage, Version::V03),
    ("message/stream", Method::SendStreamingMessage, Version::V03),
    ("tasks/get", Method::GetTask, Version::V03),
    ("tasks/cancel", Method::CancelTask, Version::V03),
    ("tasks/resubscribe", Method::SubscribeToTask, Version::V03),
    (
        "tasks/pushNotificationConfig/set",
        Method::PushNotificationConfig,
        Version::V03,
    ),
    (
        "tasks/pushNotificationConfig/get",
        Method::PushNotificationConfig,
        Version::V03,
    ),
    (
        "tasks/pushNotificationConfig/list",
        Method::PushNotificationConfig,
        Version::V03,
    ),
    (
        "tasks/pushNotificationConfig/delete",
        Method::PushNotificationConfig,
        Version::V03,
    ),
    (
        "agent/getAuthenticatedExtendedCard",
        Method::ExtendedAgentCard,
        Version::V03,
    ),
];

/// What the method `name` asks for and which version it speaks; `None` for a name A2A does
/// not have (names are matched exactly, as JSON-RPC does).
pub fn method(name: &str) -> Option<(Method, Version)> {
    METHODS
        .iter()
        .find(|(known, _, _)| *known == name)
        .map(|(_, method, version)| (*method, *version))
}

/// The versions an `A2A-Version` header may name (major.minor; a patch is ignored, and no
/// header means 0.3, as A2A says).
pub fn is_served_version(header: &str) -> bool {
    let mut numbers = header.trim().split('.');
    let major_minor = (numbers.next(), numbers.next());
    matches!(major_minor, (Some("1"), Some("0")) | (Some("0"), Some("3")))
        && numbers.all(|patch| !patch.is_empty() && patch.bytes().all(|b| b.is_ascii_digit()))
}

/// A task's state in A2A's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Submitted,
    Working,
    InputRequired,
    Completed,
    Failed,
    Canceled,
}

impl State {
    /// Whether nothing moves the task again.
    pub fn is_terminal(self) -> bool {
        matches!(self, State::Completed | State::Failed | State::Canceled)
    }

    /// Whether a stream or a blocking send stops here: at a terminal state, or where the
    /// task waits on its caller (A2A's interrupted states).
    pub fn stops_a_wait(self) -> bool {
        self.is_terminal() || self == State::InputRequired
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The caller's side.
    User,
    /// The agent on the board.
    Agent,
}

impl Version {
    pub fn state(self, state: State) -> &'static str {
        match (self, state) {
            (Version::V1, State::Submitted) => "TASK_STATE_SUBMITTED",
            (Version::V1, State::Working) => "TASK_STATE_WORKING",
            (Version::V1, State::InputRequired) => "TASK_STATE_INPUT_REQUIRED",
            (Version::V1, State::Completed) => "TASK_STATE_COMPLETED",
            (Version::V1, State::Failed) => "TASK_STATE_FAILED",
            (Version::V1, State::Canceled) => "TASK_STATE_CANCELED",
            (Version::V03, State::Submitted) => "submitted",
            (Version::V03, State::Working) => "working",
            (Version::V03, State::InputRequired) => "input-required",
            (Version::V03, State::Completed) => "completed",
            (Version::V03, State::Failed) => "failed",
            (Version::V03, State::Canceled) => "canceled",
        }
    }

    /// The state a filter names, in either spelling.
    pub fn parse_state(text: &str) -> Option<State> {
        [
            State::Submitted,
            State::Working,
            State::InputRequired,
            State::Completed,
            State::Failed,
            State::Canceled,
        ]
        .into_iter()
        .find(|state| Version::V1.state(*state) == text || Version::V03.state(*state) == text)
    }

    fn role(self, role: Role) -> &'static str {
        match (self, role) {
            (Version::V1, Role::User) => "ROLE_USER",
            (Version::V1, Role::Agent) => "ROLE_AGENT",
            (Version::V03, Role::User) => "user",
            (Version::V03, Role::Agent) => "agent",
        }
    }

    /// The `kind` 0.3 puts on every object; 1.0 has none.
    fn kind(self, kind: &'static str) -> Option<&'static str> {
        match self {
            Version::V1 => None,
            Version::V03 => Some(kind),
        }
    }
}

/// One piece of a message or an artifact: baton sends text only.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    text: String,
}

impl Part {
    pub fn text(version: Version, text: String) -> Part {
        Part {
            kind: version.kind("text"),
            text,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    message_id: String,
    context_id: String,
    task_id: String,
    role: &'static str,
    parts: Vec<Part>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<Value>,
}

/// Where a message belongs: its own id, and its task's and context's.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub message_id: &'a str,
    pub task_id: &'a str,
    pub context_id: &'a str,
}

impl Message {
    pub fn new(
        version: Version,
        place: Place<'_>,
        role: Role,
        parts: Vec<Part>,
        metadata: Option<Value>,
    ) -> Message {
        Message {
            kind: version.kind("message"),
            message_id: place.message_id.to_string(),
            context_id: place.context_id.to_string(),
            task_id: place.task_id.to_string(),
            role: version.role(role),
            parts,
            metadata,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// ISO 8601 in UTC, to the millisecond.
    pub timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    artifact_id: String,
    name: String,
    parts: Vec<Part>,
}

impl Artifact {
    pub fn new(id: &str, name: &str, parts: Vec<Part>) -> Artifact {
        Artifact {
            artifact_id: id.to_string(),
            name: name.to_string(),
            parts,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub id: String,
    pub context_id: String,
    pub status: TaskStatus,
    /// Left out when not asked for (a listing without `includeArtifacts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
    pub metadata: Value,
}

impl Task {
    pub fn kind(version: Version) -> Option<&'static str> {
        version.kind("task")
    }
}

/// A change of a task's status, as a stream carries it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusUpdate {
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    task_id: String,
    context_id: String,
    status: TaskStatus,
    /// 0.3 only: whether the stream ends with this event.
    #[serde(rename = "final", skip_serializing_if = "Option::is_none")]
    is_final: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<Value>,
}

impl StatusUpdate {
    pub fn new(
        version: Version,
        task: &Task,
        status: TaskStatus,
        is_final: bool,
        metadata: Value,
    ) -> StatusUpdate {
        StatusUpdate {
            kind: version.kind("status-update"),
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            status,
            is_final: match version {
                Version::V1 => None,
                Version::V03 => Some(is_final),
            },
            metadata: Some(metadata),
        }
    }
}

/// An artifact of a task (its result), as a stream carries it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactUpdate {
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    task_id: String,
    context_id: String,
    artifact: Artifact,
    last_chunk: bool,
}

impl ArtifactUpdate {
    pub fn new(version: Version, task: &Task, artifact: Artifact) -> ArtifactUpdate {
        ArtifactUpdate {
            kind: version.kind("artifact-update"),
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            artifact,
            last_chunk: true,
        }
    }
}

/// One event of a stream.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    Task(Task),
    Status(StatusUpdate),
    Artifact(ArtifactUpdate),
}

impl StreamEvent {
    /// The event as `version` sends it: 1.0 wraps each in a `StreamResponse`, 0.3 sends the
    /// object itself (its `kind` says what it is).
    pub fn to_json(&self, version: Version) -> Value {
        let (member, object) = match self {
            StreamEvent::Task(task) => ("task", to_value(task)),
            StreamEvent::Status(update) => ("statusUpdate", to_value(update)),
            StreamEvent::Artifact(update) => ("artifactUpdate", to_value(update)),
        };
        match version {
            Version::V1 => json!({ member: object }),
            Version::V03 => object,
        }
    }
}

/// A send's result: 1.0 wraps the task in a `SendMessageResponse`.
pub fn send_result(version: Version, task: &Task) -> Value {
    match version {
        Version::V1 => json!({ "task": to_value(task) }),
        Version::V03 => to_value(task),
    }
}

/// `ListTasks`' result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskList {
    pub tasks: Vec<Task>,
    /// Empty on the last page.
    pub next_page_token: String,
    pub page_size: usize,
    pub total_size: usize,
}

pub fn to_value<T: Serialize>(value: &T) -> Value {
    // The protocol's types are plain data: nothing in them fails to encode.
    serde_json::to_value(value).unwrap_or(Value::Null)
}

// ---- What callers send ----

/// `SendMessage`'s and `message/send`'s params (the two differ only in the configuration's
/// field that says whether to wait, read both ways here).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendParams {
    pub message: IncomingMessage,
    #[serde(default)]
    pub configuration: Option<SendConfiguration>,
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendConfiguration {
    /// 1.0: answer at once rather than wait for the task to stop.
    #[serde(default)]
    pub return_immediately: Option<bool>,
    /// 0.3: wait for the task to stop (the default, as 1.0's).
    #[serde(default)]
    pub blocking: Option<bool>,
    #[serde(default)]
    pub history_length: Option<i64>,
}

impl SendConfiguration {
    /// Whether the send waits until the task stops (a terminal state, or waiting on its
    /// caller): A2A's default.
    pub fn waits(&self) -> bool {
        !matches!(
            (self.return_immediately, self.blocking),
            (Some(true), _) | (_, Some(false))
        )
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IncomingMessage {
    #[serde(default)]
    pub message_id: Option<String>,
    #[serde(default)]
    pub context_id: Option<String>,
    #[serde(default)]
    pub task_id: Option<String>,
    #[serde(default)]
    pub parts: Vec<IncomingPart>,
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// A part as either version sends it: text is `{"text": …}` (with `"kind": "text"` in 0.3);
/// anything else (a file, raw bytes, a URL, data) has other members.
#[derive(Debug, Clone, Deserialize)]
pub struct IncomingPart {
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl IncomingPart {
    /// The text of a text part; `None` for any other kind.
    pub fn as_text(&self) -> Option<&str> {
        let is_text_kind = self.kind.as_deref().is_none_or(|kind| kind == "text");
        let carries_content = ["raw", "url", "data", "file"]
            .iter()
            .any(|member| self.other.contains_key(*member));
        match (&self.text, is_text_kind && !carries_content) {
            (Some(text), true) => Some(text),
            _ => None,
        }
    }
}

/// `GetTask`'s, `CancelTask`'s and `SubscribeToTask`'s params (and 0.3's alike).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskParams {
    pub id: String,
    #[serde(default)]
    pub history_length: Option<i64>,
}

/// `ListTasks`' params.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListParams {
    #[serde(default)]
    pub context_id: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub page_size: Option<i64>,
    #[serde(default)]
    pub page_token: Option<String>,
    #[serde(default)]
    pub history_length: Option<i64>,
    #[serde(default)]
    pub include_artifacts: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_versions_method_names_dispatch_to_the_same_methods() {
        let pairs = [
            ("SendMessage", "message/send", Method::SendMessage),
            (
                "SendStreamingMessage",
                "message/stream",
                Method::SendStreamingMessage,
            ),
            ("GetTask", "tasks/get", Method::GetTask),
            ("CancelTask", "tasks/cancel", Method::CancelTask),
            (
                "SubscribeToTask",
                "tasks/resubscribe",
                Method::SubscribeToTask,
            ),
        ];
        for (new, old, wanted) in pairs {
            assert_eq!(method(new), Some((wanted, Version::V1)), "{new}");
            assert_eq!(method(old), Some((wanted, Version::V03)), "{old}");
        }
        assert_eq!(method("ListTasks"), Some((Method::ListTasks, Version::V1)));
        assert_eq!(
            method("tasks/pushNotificationConfig/set"),
            Some((Method::PushNotificationConfig, Version::V03))
        );
        // Exact names only: JSON-RPC methods are case-sensitive.
        for unknown in [
            "sendMessage",
            "message/Send",
            "tasks/list",
            "",
            "tasks/send",
        ] {
            assert_eq!(method(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn the_version_header_names_one_and_zero_point_three() {
        for served in ["1.0", "0.3", "1.0.0", " 0.3.0 "] {
            assert!(is_served_version(served), "{served}");
        }
        for refused in ["2.0", "1.1", "0.2", "1", "", "1.0.x", "latest"] {
            assert!(!is_served_version(refused), "{refused}");
        }
    }

    #[test]
    fn each_version_spells_the_same_objects_its_way() {
        let place = Place {
            message_id: "m",
            task_id: "default/T-1",
            context_id: "default",
        };
        let status = |version: Version| TaskStatus {
            state: version.state(State::InputRequired),
            message: Some(Message::new(
                version,
                place,
                Role::Agent,
                vec![Part::text(version, "which one?".into())],
                None,
            )),
            timestamp: "2026-11-01T10:00:00.000Z".into(),
        };
        let task = |version: Version| Task {
            kind: Task::kind(version),
            id: "default/T-1".into(),
            context_id: "default".into(),
            status: status(version),
            artifacts: None,
            history: None,
            metadata: json!({}),
        };
        let v1 = StreamEvent::Task(task(Version::V1)).to_json(Version::V1);
        assert_eq!(v1["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(v1["task"]["status"]["message"]["role"], "ROLE_AGENT");
        assert_eq!(
            v1["task"]["status"]["message"]["parts"],
            json!([{"text": "which one?"}])
        );
        assert!(v1["task"].get("kind").is_none());
        let old = StreamEvent::Task(task(Version::V03)).to_json(Version::V03);
        assert_eq!(old["kind"], "task");
        assert_eq!(old["status"]["state"], "input-required");
        assert_eq!(old["status"]["message"]["role"], "agent");
        assert_eq!(old["status"]["message"]["kind"], "message");
        assert_eq!(
            old["status"]["message"]["parts"],
            json!([{"kind": "text", "text": "which one?"}])
        );
        let update = StatusUpdate::new(
            Version::V03,
            &task(Version::V03),
            status(Version::V03),
            true,
            json!({}),
        );
        let old = StreamEvent::Status(update).to_json(Version::V03);
        assert_eq!(
            (&old["kind"], &old["final"]),
            (&json!("status-update"), &json!(true))
        );
        let update = StatusUpdate::new(
            Version::V1,
            &task(Version::V1),
            status(Version::V1),
            true,
            json!({}),
        );
        let v1 = StreamEvent::Status(update).to_json(Version::V1);
        assert!(v1["statusUpdate"].get("final").is_none(), "{v1}");
        assert_eq!(v1["statusUpdate"]["taskId"], "default/T-1");
        assert_eq!(
            send_result(Version::V1, &task(Version::V1))["task"]["id"],
            "default/T-1"
        );
        assert_eq!(
            send_result(Version::V03, &task(Version::V03))["id"],
            "default/T-1"
        );
    }

    #[test]
    fn a_send_waits_unless_told_not_to_in_either_version() {
        let config = |json: Value| serde_json::from_value::<SendConfiguration>(json).unwrap();
        assert!(config(json!({})).waits());
        assert!(config(json!({"returnImmediately": false})).waits());
        assert!(!config(json!({"returnImmediately": true})).waits());
        assert!(config(json!({"blocking": true})).waits());
        assert!(!config(json!({"blocking": false})).waits());
    }

    #[test]
    fn only_text_parts_are_text() {
        let part = |json: Value| serde_json::from_value::<IncomingPart>(json).unwrap();
        assert_eq!(part(json!({"text": "hi"})).as_text(), Some("hi"));
        assert_eq!(
            part(json!({"kind": "text", "text": "hi"})).as_text(),
            Some("hi")
        );
        assert_eq!(part(json!({"kind": "data", "data": {}})).as_text(), None);
        assert_eq!(
            part(json!({"url": "https://x", "text": "?"})).as_text(),
            None
        );
        assert_eq!(
            part(json!({"kind": "file", "file": {"uri": "x"}})).as_text(),
            None
        );
    }
}
