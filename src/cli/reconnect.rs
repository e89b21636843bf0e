//! Opening a broken stream of changes again (`watch`, `log --follow`): a pause that grows
//! while it stays broken, and one warning each time it breaks. Its own module so that the
//! commands that follow a stream share it without importing each other.

use std::time::Duration;

use baton::error::Error;

/// The first pause before a broken stream of changes is opened again.
pub(super) const FIRST_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause between attempts to open it again.
const LONGEST_PAUSE: Duration = Duration::from_secs(10);

/// Says on stderr that the way changes arrive broke (a hub's stream), once for each time
/// it breaks rather than for each try to open it again, and waits `pause` before the next
/// try; the next, longer pause.
pub(super) fn broken(error: &Error, pause: Duration) -> Duration {
    if pause == FIRST_PAUSE {
        warn_broken(error);
    }
    std::thread::sleep(pause);
    (pause * 2).min(LONGEST_PAUSE)
}

/// Says on stderr that the way changes arrive broke.
pub(super) fn warn_broken(error: &Error) {
    eprintln!(
        "warning: {}; connecting again",
        baton::text::inline(&error.to_string())
    );
}
