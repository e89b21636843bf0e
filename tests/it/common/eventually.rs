//! Waiting for what another process does: one loop that looks again every
//! [`EVERY`] until what it waits for holds, and fails with what it saw once a limit (a hang
//! check, never a measure of speed) has passed.

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
