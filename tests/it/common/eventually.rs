//! Waiting for what another process does: one loop that looks again every
//! [`EVERY`] until what it waits for holds, and fails with what it saw once a limit (a hang
//! check, never a measure of speed) has passed.

use std::process::{Child, ExitStatus};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long between two looks.
const EVERY: Duration = Duration::from_millis(50);
/// The limit when a test names none.
const LIMIT: Duration = Duration::from_secs(20);

/// Looks until `look` gives something, or `limit` has passed (then `None`). The one loop
/// the others are made of.
fn poll<T>(limit: Duration, mut look: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = look() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(EVERY);
    }
}

/// Waits up to 20 s for `found` to give something.
#[track_caller]
pub fn eventually<T>(what: &str, found: impl FnMut() -> Option<T>) -> T {
    eventually_within(LIMIT, what, found)
}

/// [`eventually`] for what takes long on a loaded machine: `limit` rather than 20 s.
#[track_caller]
pub fn eventually_within<T>(limit: Duration, what: &str, found: impl FnMut() -> Option<T>) -> T {
    eventually_or(limit, what, found, String::new)
}

/// [`eventually_within`], failing with what `report` tells (logs, a screen) once the limit
/// has passed; `report` runs only then.
#[track_caller]
pub fn eventually_or<T>(
    limit: Duration,
    what: &str,
    found: impl FnMut() -> Option<T>,
    report: impl FnOnce() -> String,
) -> T {
    match poll(limit, found) {
        Some(value) => value,
        None => panic!("never happened within {limit:?}: {what}\n{}", report()),
    }
}

/// Waits up to `limit` for `check` to hold; failing, with the state it last said it saw.
#[track_caller]
pub fn eventually_seeing<T>(
    limit: Duration,
    what: &str,
    mut check: impl FnMut() -> Result<T, String>,
) -> T {
    let mut last = String::new();
    let found = poll(limit, || match check() {
        Ok(value) => Some(value),
        Err(seen) => {
            last = seen;
            None
        }
    });
    match found {
        Some(value) => value,
        None => panic!("never happened within {limit:?}: {what}; last seen:\n{last}"),
    }
}

/// [`eventually_within`] for an async test on a runtime of one thread, which a blocking
/// look-again would stall (and with it the client the test drives): waits with the runtime's
/// timer between looks.
pub async fn eventually_async<T>(
    limit: Duration,
    what: &str,
    mut found: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = found() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "never happened within {limit:?}: {what}"
        );
        tokio::time::sleep(EVERY).await;
    }
}

/// Waits up to `limit` for `child` to exit, and gives its status; past it, kills it and
/// fails, saying that `what` hangs, with what `report` tells (it runs only then).
#[track_caller]
pub fn exit_within(
    child: &mut Child,
    limit: Duration,
    what: &str,
    report: impl FnOnce() -> String,
) -> ExitStatus {
    match poll(limit, || {
        child.try_wait().expect("the child can be waited for")
    }) {
        Some(status) => status,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{what}` still ran after {limit:?}: it hangs\n{}", report())
        }
    }
}

/// Waits up to `limit` for the sender of `items` to go (a stream ended, a reader's
/// connection closed), dropping what still comes; fails saying what never ended.
#[track_caller]
pub fn ends_within<T>(items: &Receiver<T>, limit: Duration, what: &str) {
    let deadline = Instant::now() + limit;
    loop {
        match items.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(_) => continue,
            Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => panic!("never ended within {limit:?}: {what}"),
        }
    }
}
