//! Hearing of changes: a store's feed of what was committed to the hub's state, by this
//! process or any other sharing the store ([`Feeds::changes`]). What `wait`, `watch`,
//! the pushes into a live session and `serve`'s event streams block on, whichever store
//! keeps the state: the files tell their changes through the kernel's file events
//! ([`super::files::feed`]), a database through its own notifications.
//!
//! A feed tells that something changed, and what where it can; the new state itself is read
//! through the store, as always. It blocks (with a timeout) for the callers that wait on a
//! thread of their own; an async caller waits on it with `spawn_blocking`, or keeps it on a
//! thread that forwards what it tells into a channel (`serve`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::StoreError;
use crate::board::record::LogAction;

/// Where the feeds of a store's changes come from.
pub trait Feeds: fmt::Debug + Send + Sync {
    /// A feed of the changes of `scope` committed from now on, by this process or any other
    /// sharing this store. Made before a look at the state, it tells every change committed
    /// after that look, so a waiter that looks and then waits misses none.
    fn changes(&self, scope: &Scope) -> Result<Box<dyn ChangeFeed>, StoreError>;
}

/// Which changes a feed tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The board, log and mail of one project: what `wait`, `watch` and the pushes into a
    /// live session follow. A feed of one project may tell each change as
    /// [`What::Project`], without saying what it was.
    Project(String),
    /// Every change on the hub, each told as itself ([`What::Logged`], [`What::Message`],
    /// [`What::Board`]), and the tokens' ([`What::Tokens`]): what `serve`'s event streams
    /// carry.
    Hub,
}

/// One change, as a feed tells it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Change {
    /// The project it happened in; `None` for the tokens and for [`What::Everything`].
    pub project: Option<String>,
    pub what: What,
}

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum What {
    /// One activity record of the project's log: its action (`sent`, `claimed`, `note`, …)
    /// and the task it concerns, if any. A board change is told by its records.
    Logged {
        action: LogAction,
        task: Option<u64>,
    },
    /// A message added to the project's mail, by its seq.
    Message { seq: u64 },
    /// The project's board, written with no activity record of its own (a delivery mark, a
    /// lease renewed, a board restored).
    Board,
    /// The project's board, log or mail, with no word on which: all a feed of one project
    /// ([`Scope::Project`]) need say.
    Project,
    /// The tokens: one added, removed or replaced (a store may also tell a token's last
    /// use). What lasts as long as a token (an event stream, an MCP session) asks again
    /// whether its token is good.
    Tokens,
    /// An MCP session ended (DELETE, or its token gone) through some process sharing the
    /// store: a hub holding its push stream ends it. Told to a feed of the hub only.
    McpSessionEnded { id: String },
    /// Anything may have changed (changes were lost: a feed that broke and came back): look
    /// at everything again.
    Everything,
}

impl Change {
    /// A change of `what` in `project`.
    pub fn in_project(project: &str, what: What) -> Change {
        Change {
            project: Some(project.to_string()),
            what,
        }
    }
}

/// The changes a store commits from the moment the feed was made, told in the order they
/// were committed (within a project), each once.
pub trait ChangeFeed: Send {
    /// Blocks until changes arrive, and returns them; none when `within` passed first, or a
    /// [`FeedWaker`] ended the wait. Nothing committed after the feed was made is missed:
    /// a change made before this call (even before the first) is returned at once.
    ///
    /// An error says the feed broke (a connection lost); the next call tries again, and
    /// once the feed is back tells [`What::Everything`] first, for what it may have missed.
    fn next(&mut self, within: Duration) -> Result<Vec<Change>, StoreError>;

    /// What ends a wait of this feed from another thread (a server that stops).
    fn waker(&self) -> FeedWaker;
}

/// Ends a wait on a [`ChangeFeed`] from another thread: the wait returns no change.
#[derive(Clone)]
pub struct FeedWaker(Arc<dyn Fn() + Send + Sync>);

impl FeedWaker {
    /// The waker that runs `wake` to end the wait (a store's own way of interrupting it).
    pub fn new(wake: impl Fn() + Send + Sync + 'static) -> Self {
        FeedWaker(Arc::new(wake))
    }

    pub fn wake(&self) {
        (self.0)()
    }
}

impl fmt::Debug for FeedWaker {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("FeedWaker")
    }
}
