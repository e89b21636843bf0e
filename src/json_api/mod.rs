//! The JSON API of `baton serve` as it travels (SPEC section 12): every path, every request
//! body and query as one type that the server reads and the client of a remote hub writes
//! (the `remote` module), and the answers, which are the session's own types, named here.
//! Each operation puts them together as one [`Endpoint`] ([`endpoint`]). A field is spelled
//! once, so the two sides cannot drift apart.
//!
//! A body the server takes refuses fields it does not know (`deny_unknown_fields`), so a
//! client that sends a misspelled one is told rather than half obeyed; every field but the
//! one a request is about may be left out.

use serde::{Deserialize, Serialize};

use crate::board::record::LogAction;
use crate::board::search::Search;
use crate::board::task::{Status, TaskId, Worktree};
use crate::time::Timestamp;

pub use crate::activity::ActivityRecord;
pub use crate::board::edit::Edits;
pub use crate::board::new_task::NewTask as SendBody;
pub use crate::board::reservation::Reservation;
pub use crate::board::stats::{Stats, Window};
pub use crate::project::Project;
pub use crate::registry::AgentRecord;
pub use crate::session::reservations::{Holding, ReserveAsk, Reserved, UnreserveAsk};
pub use crate::session::{
    AgentMatrix, BoardFilter, Changed, Inbox, InboxLook, Mail, Sent, TaskView,
};
pub use crate::wake::WakeOutcome;
pub use crate::worktree::diff::TaskDiff;
pub use endpoint::{Endpoint, Method, Reading};

pub mod endpoint;

/// Where the API is served, before each of its paths.
pub const API: &str = "/api/v1";

/// The header of a draining hub's 503 (`baton serve` sent SIGTERM): the request was not
/// touched, so a client may send it, a change too, to another hub.
pub const DRAINING_HEADER: &str = "baton-draining";

/// A path of the API, with its parameters in braces as the server's router reads them
/// (`/projects/{project}/board`); a client fills them in, in order ([`Route::path`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route(&'static str);

impl Route {
    /// As the router takes it.
    pub const fn pattern(self) -> &'static str {
        self.0
    }

    /// The path with each `{…}` replaced by the next of `parameters`. The caller checks
    /// each one (a name, a number) before it becomes part of a path.
    pub fn path(self, parameters: &[&str]) -> String {
        let mut parameters = parameters.iter();
        self.0
            .split('/')
            .map(|segment| match segment.starts_with('{') {
                true => parameters.next().copied().unwrap_or_default(),
                false => segment,
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    /// [`Route::path`] with `query` after a `?`, as the server's `Query` extractor reads it.
    pub fn path_with<Q: Serialize>(self, parameters: &[&str], query: &Q) -> String {
        let path = self.path(parameters);
        match serde_urlencoded::to_string(query) {
            Ok(query) if !query.is_empty() => format!("{path}?{query}"),
            // A query of plain fields always encodes; nothing to add without one.
            _ => path,
        }
    }
}

/// Every path of the API.
pub mod route {
    use super::Route;

    pub const WHOAMI: Route = Route("/whoami");
    pub const PAGE: Route = Route("/page");
    pub const LOGOUT: Route = Route("/logout");
    pub const PROJECTS: Route = Route("/projects");
    pub const PROJECT: Route = Route("/projects/{project}");
    pub const BOARD: Route = Route("/projects/{project}/board");
    pub const INBOX: Route = Route("/projects/{project}/inbox");
    pub const HOOK: Route = Route("/projects/{project}/hook/{event}");
    pub const NOTES: Route = Route("/projects/{project}/notes");
    pub const CONTEXT: Route = Route("/projects/{project}/context");
    pub const COORDINATOR: Route = Route("/projects/{project}/coordinator");
    pub const WAKE: Route = Route("/projects/{project}/wake/{agent}");
    pub const WOKEN: Route = Route("/projects/{project}/woken");
    pub const SEEN: Route = Route("/projects/{project}/seen");
    pub const AGENT: Route = Route("/agents/{agent}");
    pub const TASKS: Route = Route("/projects/{project}/tasks");
    pub const TASK: Route = Route("/projects/{project}/tasks/{id}");
    /// `{action}` is an action as the CLI spells it ([`crate::board::action::Row::command`]).
    pub const ACT: Route = Route("/projects/{project}/tasks/{id}/{action}");
    pub const AGENTS: Route = Route("/projects/{project}/agents");
    pub const LOG: Route = Route("/projects/{project}/log");
    pub const STATS: Route = Route("/projects/{project}/stats");
    pub const MESSAGES: Route = Route("/projects/{project}/messages");
    pub const RESERVATIONS: Route = Route("/projects/{project}/reservations");
    pub const RESERVATIONS_END: Route = Route("/projects/{project}/reservations/end");
    pub const RESERVED: Route = Route("/projects/{project}/reserved");
    pub const DIFF: Route = Route("/projects/{project}/tasks/{id}/diff");
    pub const EVENTS: Route = Route("/events");
}

/// A refusal, whoever makes it: `{"error", "hint", "code"}`, `code` being the CLI's exit code
/// for the same refusal (none for one only HTTP makes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
}

/// `GET /whoami`: the token's agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Whoami {
    pub agent: String,
}

/// `GET /page`: who the web board acts as, and the project it opens on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    pub agent: String,
    pub project: Option<String>,
}

/// `POST /logout`: whether the login token was removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedOut {
    pub removed: bool,
}

/// `GET …/board`: `board`'s filters, and (for the web board) whether to say what the caller
/// may do with each task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BoardQuery {
    #[serde(default)]
    pub mine: bool,
    #[serde(default)]
    pub all: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Only tasks with this label (SPEC section 19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Only tasks whose subject, body or thread holds these words, case aside; with `all`,
    /// archived ones too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub offered: bool,
}

impl BoardQuery {
    /// The query of `filter`, as a client sends it.
    pub fn of(filter: &BoardFilter) -> BoardQuery {
        BoardQuery {
            mine: filter.mine,
            all: filter.all,
            status: filter.status,
            label: filter.search.label().map(str::to_string),
            search: filter.search.text().map(str::to_string),
            offered: filter.offered,
        }
    }

    /// The filter it asks for, refused as the command line refuses it (a label that is not
    /// a name, words that are not one line of at most 1,000 characters).
    pub fn filter(&self) -> Result<BoardFilter, crate::text::Refused> {
        Ok(BoardFilter {
            status: self.status,
            mine: self.mine,
            all: self.all,
            search: Search::new(self.label.as_deref(), self.search.as_deref())?,
            offered: self.offered,
        })
    }
}

/// `GET …/tasks/{id}`: whether to say what the caller may do with the task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OfferedQuery {
    #[serde(default, skip_serializing_if = "is_false")]
    pub offered: bool,
}

/// `GET …/inbox`: `peek` leaves messages unread; `preview` lists the first ten tasks in full
/// and counts the rest (`status`, hooks); `record: false` records no hand-over as seen (a
/// remote `listen` looks on the agent's behalf, showing it nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxQuery {
    #[serde(default)]
    pub peek: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub preview: bool,
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub record: bool,
}

impl From<InboxLook> for InboxQuery {
    fn from(look: InboxLook) -> Self {
        InboxQuery {
            peek: !matches!(look, InboxLook::MarkRead | InboxLook::PreviewMarkRead),
            preview: matches!(look, InboxLook::Preview | InboxLook::PreviewMarkRead),
            record: look != InboxLook::OnBehalf,
        }
    }
}

impl InboxQuery {
    /// The look the query asks for.
    pub fn look(&self) -> InboxLook {
        match (self.record, self.preview, self.peek) {
            (false, _, _) => InboxLook::OnBehalf,
            (true, true, true) => InboxLook::Preview,
            (true, true, false) => InboxLook::PreviewMarkRead,
            (true, false, true) => InboxLook::Peek,
            (true, false, false) => InboxLook::MarkRead,
        }
    }
}

impl Default for InboxQuery {
    fn default() -> Self {
        InboxQuery {
            peek: false,
            preview: false,
            record: true,
        }
    }
}

/// `GET …/log`: the last `n` lines, of those at or after `since`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogQuery {
    #[serde(default = "twenty")]
    pub n: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
}

impl Default for LogQuery {
    fn default() -> Self {
        LogQuery {
            n: twenty(),
            since: None,
        }
    }
}

/// `GET …/stats`: `stats --since`, the window the figures look back over (`7d`, `24h`,
/// `all`; the last seven days when left out).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsQuery {
    #[serde(default)]
    pub since: Window,
}

/// `GET …/messages`: with `all` every message sent or received; `peek` marks nothing read;
/// else those up to `through` (the ones a view drew), or all shown, count as read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessagesQuery {
    #[serde(default)]
    pub all: bool,
    #[serde(default)]
    pub peek: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub through: Option<u64>,
}

/// `GET /agents/{agent}`: the project whose coordinator the caller may be (who may see the
/// agent's wake command).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentQuery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// `POST …/tasks/{id}/{action}`: the words of a transition, the new assignee of a
/// reassignment, and what an edit changes. No body at all is no words (as the web board
/// sends a claim). From an agent on another machine (SPEC section 18.4): a claim's
/// `worktree`, the one it made on its machine, and a review's `reviewed`, the commit it
/// asks review of; the hub checks both before it records them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActBody {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<Edits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<Worktree>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed: Option<String>,
}

/// `POST …/messages`: `msg`'s arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    pub to: String,
    pub text: String,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
}

/// `POST …/notes` and `POST …/context`: the words of a note, or of the shared context.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextBody {
    pub text: String,
}

/// `GET …/reservations`: `reservations [--mine]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReservationsQuery {
    #[serde(default)]
    pub mine: bool,
}

/// `GET …/tasks/{id}/diff`: `diff ID [--stat]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffQuery {
    #[serde(default)]
    pub stat: bool,
}

/// `POST …/reserved`: `reserved PATH…`, a question in a body (paths hold any character a
/// query would have to escape, and there may be many); it changes nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathsBody {
    pub paths: Vec<String>,
}

/// `POST …/coordinator`: `coordinator [--human NAME] [--not-human NAME] [--set NAME]`, done
/// in that order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoordinatorBody {
    #[serde(default)]
    pub set: Option<String>,
    #[serde(default)]
    pub human: Option<String>,
    #[serde(default)]
    pub not_human: Option<String>,
}

/// `POST /agents/{agent}`: `agent add NAME --strengths … --skills …`, for the caller itself.
/// A wake command is never set over HTTP (SPEC section 8).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileBody {
    #[serde(default)]
    pub strengths: Option<String>,
    #[serde(default)]
    pub skills: Option<Vec<String>>,
}

/// `POST …/woken` and `POST …/seen`, and their answers: the tasks a step of the caller's
/// deliveries concerns (asked for), or was recorded for (answered).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskIds {
    pub tasks: Vec<TaskId>,
}

/// `POST …/hook/{event}`: what the client said that matters to a hook on the hub (whether a
/// stop hook already made the agent go on), and the directory the agent's machine maps the
/// project to, which the context names instead of the hub's workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookBody {
    #[serde(default)]
    pub stop_hook_active: bool,
    #[serde(default)]
    pub workspace: Option<std::path::PathBuf>,
}

/// `POST …/wake/{agent}`: nothing but the path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoBody {}

/// One change on the hub, as `/events` carries it (`event: change`): the project it happened
/// in (none for `resync`: the hub dropped events for a slow reader, so look at everything
/// again), what kind of file changed, and the task or message it concerns where one does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    #[serde(default)]
    pub project: Option<String>,
    pub kind: ChangeKind,
    #[serde(default)]
    pub id: Option<u64>,
}

impl Change {
    /// Look at everything again: what was missed cannot be told.
    pub fn resync() -> Change {
        Change {
            project: None,
            kind: ChangeKind::Resync,
            id: None,
        }
    }
}

/// What a [`Change`] is, spelled on the wire as one word: the action of an activity record
/// (`send`, `claim`, …), `message`, `board`, or `resync`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    /// An activity record of the project's log; `id` is its task, if any.
    Logged(LogAction),
    /// A message added to the project's mail; `id` is its number in the mail, not a task's.
    Message,
    /// The project's board, written with no record of its own.
    Board,
    /// Changes were dropped for a slow reader: look at everything again.
    Resync,
}

impl ChangeKind {
    /// As the wire spells it.
    pub fn as_str(&self) -> &str {
        match self {
            ChangeKind::Logged(action) => action.as_str(),
            ChangeKind::Message => "message",
            ChangeKind::Board => "board",
            ChangeKind::Resync => "resync",
        }
    }
}

impl From<&str> for ChangeKind {
    fn from(word: &str) -> ChangeKind {
        match word {
            "message" => ChangeKind::Message,
            "board" => ChangeKind::Board,
            "resync" => ChangeKind::Resync,
            action => ChangeKind::Logged(LogAction::from(action)),
        }
    }
}

impl Serialize for ChangeKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ChangeKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = std::borrow::Cow::<str>::deserialize(deserializer)?;
        Ok(ChangeKind::from(&*word))
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_true(value: &bool) -> bool {
    *value
}

fn yes() -> bool {
    true
}

fn twenty() -> usize {
    20
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::action::ActionKind;

    #[test]
    fn a_route_is_filled_in_order_and_its_query_read_back_as_sent() {
        assert_eq!(
            route::ACT.path(&["api", "4", "request-changes"]),
            "/projects/api/tasks/4/request-changes"
        );
        assert_eq!(
            route::ACT.path(&["api", "4", ActionKind::RequestChanges.command()]),
            "/projects/api/tasks/4/request-changes"
        );
        let query = BoardQuery {
            status: Some(Status::InputRequired),
            all: true,
            ..BoardQuery::default()
        };
        let path = route::BOARD.path_with(&["api"], &query);
        assert_eq!(
            path,
            "/projects/api/board?mine=false&all=true&status=input_required"
        );
        let (_, sent) = path.split_once('?').unwrap();
        assert_eq!(
            serde_urlencoded::from_str::<BoardQuery>(sent).unwrap(),
            query
        );
        let since: Timestamp = "2026-11-29T19:15:13.123Z".parse().unwrap();
        let log = LogQuery {
            n: 5,
            since: Some(since),
        };
        let path = route::LOG.path_with(&["api"], &log);
        let (_, sent) = path.split_once('?').unwrap();
        assert_eq!(serde_urlencoded::from_str::<LogQuery>(sent).unwrap(), log);
        let inbox = InboxQuery {
            record: false,
            ..InboxQuery::default()
        };
        assert_eq!(
            route::INBOX.path_with(&["api"], &inbox),
            "/projects/api/inbox?peek=false&record=false"
        );
        assert_eq!(route::WHOAMI.path_with(&[], &NoBody {}), "/whoami");
    }

    #[test]
    fn an_inbox_look_travels_as_a_query_and_is_read_back_as_itself() {
        use InboxLook::*;
        for look in [Peek, MarkRead, Preview, PreviewMarkRead, OnBehalf] {
            let path = route::INBOX.path_with(&["api"], &InboxQuery::from(look));
            let (_, sent) = path.split_once('?').unwrap();
            let query: InboxQuery = serde_urlencoded::from_str(sent).unwrap();
            assert_eq!(query.look(), look, "{path}");
        }
        // As a remote `listen` has always asked, and a client that says nothing else.
        assert_eq!(
            route::INBOX.path_with(&["api"], &InboxQuery::from(OnBehalf)),
            "/projects/api/inbox?peek=true&record=false"
        );
        assert_eq!(InboxQuery::default().look(), MarkRead);
    }

    #[test]
    fn a_change_is_told_by_one_word_and_read_back_as_itself() {
        let kinds = [
            (
                ChangeKind::Logged(LogAction::Act(ActionKind::Claim)),
                "claim",
            ),
            (ChangeKind::Logged(LogAction::Send), "send"),
            (
                ChangeKind::Logged(LogAction::Other("newer".into())),
                "newer",
            ),
            (ChangeKind::Message, "message"),
            (ChangeKind::Board, "board"),
            (ChangeKind::Resync, "resync"),
        ];
        for (kind, word) in kinds {
            let change = Change {
                project: Some("api".into()),
                kind: kind.clone(),
                id: Some(4),
            };
            let sent = serde_json::to_value(&change).unwrap();
            assert_eq!(sent["kind"], word);
            assert_eq!(serde_json::from_value::<Change>(sent).unwrap().kind, kind);
        }
    }

    #[test]
    fn a_body_with_a_field_the_server_does_not_know_is_refused() {
        assert!(serde_json::from_str::<ActBody>(r#"{"txt": "typo"}"#).is_err());
        assert_eq!(
            serde_json::from_str::<ActBody>("{}").unwrap(),
            ActBody::default()
        );
        let ids: TaskIds = serde_json::from_str(r#"{"tasks": [1, 2]}"#).unwrap();
        assert_eq!(serde_json::to_string(&ids).unwrap(), r#"{"tasks":[1,2]}"#);
    }
}
