//! Opening a broken stream of changes again (`watch`, `log --follow`): a pause that grows
//! while it stays broken, one warning each time it breaks, and one line saying where it
//! is open again once it is (the second hub, when the first died). Its own module so that
//! the commands that follow a stream share it without importing each other.

use std::time::Duration;

use baton::error::Error;

/// The first pause before a broken stream of changes is opened again.
const FIRST_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause between attempts to open it again.
const LONGEST_PAUSE: Duration = Duration::from_secs(10);

/// A stream of changes that may break and be opened again: whether it is broken now, and
/// how long to wait before the next try.
pub(super) struct Reconnecting {
    pause: Duration,
    is_broken: bool,
}

impl Reconnecting {
    pub(super) fn new() -> Reconnecting {
        Reconnecting {
            pause: FIRST_PAUSE,
            is_broken: false,
        }
    }

    /// The stream broke, or could not be opened again: says so on stderr once for each
    /// time it breaks rather than for each try, and waits before the next, longer each time.
    pub(super) fn broken(&mut self, error: &Error) {
        if !self.is_broken {
            warn_broken(error);
            self.is_broken = true;
        }
        std::thread::sleep(self.pause);
        self.pause = (self.pause * 2).min(LONGEST_PAUSE);
    }

    /// The stream answered: once it had been broken, says on stderr that it is open again
    /// and where (`source`: "the hub at URL", whichever of the hubs answered).
    pub(super) fn answered(&mut self, source: Option<String>) {
        if self.is_broken {
            eprintln!("{}", connected_again(source.as_deref()));
        }
        self.is_broken = false;
        self.pause = FIRST_PAUSE;
    }
}

/// The line that says a broken stream is open again, and where (the terminal board shows it
/// in its notice line).
pub(super) fn connected_again(source: Option<&str>) -> String {
    match source {
        Some(source) => format!("baton: connected again, to {}", baton::text::inline(source)),
        None => "baton: connected again".to_string(),
    }
}

/// Says on stderr that the way changes arrive broke.
pub(super) fn warn_broken(error: &Error) {
    eprintln!(
        "warning: {}; connecting again",
        baton::text::inline(&error.to_string())
    );
}
