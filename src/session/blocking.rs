//! A session opened and worked on a blocking thread, for the faces that answer from async
//! code (the HTTP API, A2A, MCP): a session reads and locks files or waits on a database,
//! and that must not stall the protocol's other work (pings, other calls, streams).

use super::{Hub, Request, Session, Standing};
use crate::error::Result;

/// How a face opens its caller's session.
pub enum Opening {
    /// As the CLI does, in the process's working directory: the project it is bound to, or
    /// the one named (a local MCP server).
    Here {
        agent: String,
        project: Option<String>,
    },
    /// In the project named by id, with the standing the request claims: a caller with no
    /// working directory on the hub (SPEC section 13).
    ById {
        agent: String,
        project: String,
        standing: Standing,
        /// What was read for it with the request's token check.
        read: ReadAhead,
    },
}

/// What a hub's token check read for the session its request opens, in the same round trip
/// as the tokens' version: the texts of the project's record and of the agent's, each with
/// the name it was read for (`None` within: there was none). A session opened in that
/// project, as that agent, reads neither again; any other reads its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadAhead {
    pub project: Option<(String, Option<Vec<u8>>)>,
    pub agent: Option<(String, Option<Vec<u8>>)>,
}

impl ReadAhead {
    /// The text read of the project `id`'s record, if it was read.
    pub fn project(&self, id: &str) -> Option<Option<&[u8]>> {
        read_of(&self.project, id)
    }

    /// The text read of the agent `name`'s record, if it was read.
    pub fn agent(&self, name: &str) -> Option<Option<&[u8]>> {
        read_of(&self.agent, name)
    }
}

fn read_of<'a>(
    read: &'a Option<(String, Option<Vec<u8>>)>,
    name: &str,
) -> Option<Option<&'a [u8]>> {
    read.as_ref()
        .filter(|(of, _)| of == name)
        .map(|(_, text)| text.as_deref())
}

/// The agent an HTTP request acts as, put among the request's extensions by the layer that
/// checked its token, and how it stands (the agent itself, or a process looking on its
/// behalf: [`Standing`]). A call without one is refused, never served as somebody.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller(pub String, pub Standing);

impl Caller {
    /// How the caller's session in `project` is opened: by the project's id, as it stands.
    pub fn opening(self, project: String) -> Opening {
        self.opening_read(project, ReadAhead::default())
    }

    /// [`Caller::opening`], with what the token check read for it.
    pub fn opening_read(self, project: String, read: ReadAhead) -> Opening {
        let Caller(agent, standing) = self;
        Opening::ById {
            agent,
            project,
            standing,
            read,
        }
    }
}

/// The work ended without an answer: it panicked, or the runtime is shutting down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// Opens the session `opening` says on a blocking thread and runs `work` in it; the
/// session's refusal or the work's answer, or [`Stopped`].
pub async fn in_session<T, F>(
    hub: Hub,
    opening: Opening,
    work: F,
) -> std::result::Result<Result<T>, Stopped>
where
    T: Send + 'static,
    F: FnOnce(Session) -> Result<T> + Send + 'static,
{
    off_thread(move || work(opening.open(hub)?)).await
}

/// Runs `work` on a blocking thread, for async code whose work reads and locks the store
/// (with no session to open: a token, an MCP session's owner); its answer, or [`Stopped`].
pub async fn off_thread<T, F>(work: F) -> std::result::Result<T, Stopped>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    tokio::task::spawn_blocking(work).await.map_err(|_| Stopped)
}

impl Opening {
    fn open(self, hub: Hub) -> Result<Session> {
        match self {
            Opening::Here { agent, project } => Session::open(
                hub,
                Request {
                    agent: Some(&agent),
                    project: project.as_deref(),
                    cwd: None,
                },
            ),
            Opening::ById {
                agent,
                project,
                standing,
                read,
            } => Session::open_by_id_read(hub, &agent, &project, standing, &read),
        }
    }
}
