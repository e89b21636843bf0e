//! Every operation of the API as one type ([`Endpoint`]): its method, its path, how the
//! server reads what is sent, the body or query, the answer, and the most of each that is
//! read. The server serves an endpoint with one adapter (`serve::endpoint`), and the client
//! of a remote hub sends one with one call (`remote::HubClient::call`), so neither side
//! writes a route, a body type or a limit of its own (the request trait of the LSP crates:
//! a method's name with its typed params and result).

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{
    ActBody, ActivityRecord, AgentMatrix, AgentQuery, AgentRecord, BoardQuery, Changed,
    CoordinatorBody, DiffQuery, Holding, HookBody, InboxQuery, LogQuery, LoggedOut, Mail,
    MessageBody, MessagesQuery, NoBody, OfferedQuery, PathsBody, ProfileBody, Project, Reservation,
    ReservationsQuery, ReserveAsk, Reserved as ReservedAnswer, Route, SendBody, Sent, StatsQuery,
    TaskDiff, TaskIds, TaskView, TextBody, UnreserveAsk, WakeOutcome, route,
};
use crate::session::hook_answer::Answer as HookAnswer;

/// The most of a listing's answer a client reads (a board, the log, an inbox, the messages,
/// the agents, a task and its thread): a board of 10,000 tasks is a few megabytes, and this
/// leaves room for boards ten times that, far below running out of memory.
pub const LIST_ANSWER_LIMIT: u64 = 64 * 1024 * 1024;
/// The most of any other answer read: one record (who the token is, an agent, a change's
/// result, a wake).
pub const RECORD_ANSWER_LIMIT: u64 = 4 * 1024 * 1024;
/// The most of a hook's answer read: the hub keeps the answer's text under 16 KiB as the
/// client receives it (SPEC section 10); the JSON around it, and escapes that grow in
/// transit, stay well under this.
pub const HOOK_ANSWER_LIMIT: u64 = 64 * 1024;
/// The most of a request's body the server reads (axum's own default for a JSON body).
pub const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// How an endpoint is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Reads, and may be sent again: what is sent is the query.
    Get,
    /// Changes something: what is sent is a JSON body.
    Post,
}

/// How the server reads what a request sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The query after the path (every `GET`).
    Query,
    /// A JSON body, which must be there.
    Json,
    /// A JSON body, or none at all (no `Content-Type`), which is the body's default.
    JsonOrNone,
    /// Nothing: the path says it all, and a body is not looked at.
    Nothing,
}

/// One operation of the API.
pub trait Endpoint {
    const METHOD: Method;
    /// Its path, its parameters in braces.
    const ROUTE: Route;
    /// How the server reads [`Endpoint::Body`].
    const READING: Reading;
    /// What a request sends: its query, or its JSON body.
    type Body: Serialize + DeserializeOwned + Default + Send + 'static;
    /// What the server answers, as JSON.
    type Answer: Serialize + DeserializeOwned + Send + 'static;
    /// The most of a request's body the server reads.
    const LIMIT: usize = BODY_LIMIT;
    /// The most of an answer the client reads.
    const ANSWER_LIMIT: u64;
}

/// One type per row: `Name: METHOD ROUTE, Reading Body => Answer, answer limit;`.
macro_rules! endpoints {
    ($(
        $(#[$doc:meta])*
        $name:ident: $method:ident $route:ident, $reading:ident $body:ty => $answer:ty, $limit:ident;
    )*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;

        impl Endpoint for $name {
            const METHOD: Method = Method::$method;
            const ROUTE: Route = route::$route;
            const READING: Reading = Reading::$reading;
            type Body = $body;
            type Answer = $answer;
            const ANSWER_LIMIT: u64 = $limit;
        }
    )*};
}

endpoints! {
    /// The token's agent.
    Whoami: Get WHOAMI, Query NoBody => super::Whoami, RECORD_ANSWER_LIMIT;
    /// Who the web board acts as, and the project it opens on.
    Page: Get PAGE, Query NoBody => super::Page, RECORD_ANSWER_LIMIT;
    /// A browser's login token removed.
    Logout: Post LOGOUT, Nothing NoBody => LoggedOut, RECORD_ANSWER_LIMIT;
    /// `project list`.
    Projects: Get PROJECTS, Query NoBody => Vec<Project>, LIST_ANSWER_LIMIT;
    /// `project show`: a project's record carries its shared notes, which grow.
    ProjectShow: Get PROJECT, Query NoBody => Project, LIST_ANSWER_LIMIT;
    /// `board`.
    Board: Get BOARD, Query BoardQuery => Vec<TaskView>, LIST_ANSWER_LIMIT;
    /// `inbox`, `status`, and a look on the agent's behalf.
    Inbox: Get INBOX, Query InboxQuery => super::Inbox, LIST_ANSWER_LIMIT;
    /// A remote agent's client hook.
    Hook: Post HOOK, JsonOrNone HookBody => HookAnswer, HOOK_ANSWER_LIMIT;
    /// `note`.
    Note: Post NOTES, Json TextBody => ActivityRecord, RECORD_ANSWER_LIMIT;
    /// `context --add`.
    Context: Post CONTEXT, Json TextBody => Project, RECORD_ANSWER_LIMIT;
    /// `coordinator`.
    Coordinator: Post COORDINATOR, Json CoordinatorBody => Project, RECORD_ANSWER_LIMIT;
    /// `wake NAME`, run on the hub.
    Wake: Post WAKE, Nothing NoBody => WakeOutcome, RECORD_ANSWER_LIMIT;
    /// A remote `listen` woke the caller for these tasks.
    Woken: Post WOKEN, Json TaskIds => TaskIds, RECORD_ANSWER_LIMIT;
    /// A remote live session was shown these tasks.
    Seen: Post SEEN, Json TaskIds => TaskIds, RECORD_ANSWER_LIMIT;
    /// `agent show NAME`.
    AgentShow: Get AGENT, Query AgentQuery => AgentRecord, RECORD_ANSWER_LIMIT;
    /// `agent add NAME --strengths … --skills …`, for the caller itself.
    AgentProfile: Post AGENT, Json ProfileBody => AgentRecord, RECORD_ANSWER_LIMIT;
    /// `send`.
    SendTask: Post TASKS, Json SendBody => Changed, LIST_ANSWER_LIMIT;
    /// `show`.
    Show: Get TASK, Query OfferedQuery => TaskView, LIST_ANSWER_LIMIT;
    /// A transition: no body at all is no words (as the web board sends a claim).
    Act: Post ACT, JsonOrNone ActBody => Changed, LIST_ANSWER_LIMIT;
    /// `agents`.
    Agents: Get AGENTS, Query NoBody => AgentMatrix, LIST_ANSWER_LIMIT;
    /// `log`.
    Log: Get LOG, Query LogQuery => Vec<ActivityRecord>, LIST_ANSWER_LIMIT;
    /// `stats`.
    Stats: Get STATS, Query StatsQuery => super::Stats, LIST_ANSWER_LIMIT;
    /// `messages`.
    Messages: Get MESSAGES, Query MessagesQuery => Mail, LIST_ANSWER_LIMIT;
    /// `msg`.
    Message: Post MESSAGES, Json MessageBody => Sent, LIST_ANSWER_LIMIT;
    /// `reservations [--mine]`.
    Reservations: Get RESERVATIONS, Query ReservationsQuery => Vec<Reservation>, LIST_ANSWER_LIMIT;
    /// `reserve PATTERNS`.
    Reserve: Post RESERVATIONS, Json ReserveAsk => ReservedAnswer, LIST_ANSWER_LIMIT;
    /// `unreserve PATTERNS|--all [--agent NAME]`.
    Unreserve: Post RESERVATIONS_END, Json UnreserveAsk => ReservedAnswer, LIST_ANSWER_LIMIT;
    /// `reserved PATH…`: asks, changes nothing.
    Reserved: Post RESERVED, Json PathsBody => Vec<Holding>, LIST_ANSWER_LIMIT;
    /// `diff ID [--stat]`: a task's changes, cut at a bound far below this one.
    Diff: Get DIFF, Query DiffQuery => TaskDiff, LIST_ANSWER_LIMIT;
}
