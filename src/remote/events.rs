//! The hub's event stream as a client reads it: `/api/v1/events` is server-sent events, one
//! `change` event per change on the hub (`{project, kind, id}`), with a keep-alive comment
//! every 15 seconds. A stream that goes silent for [`SILENT_FOR`] counts as broken: the hub
//! stopped, or the network between went away without closing the connection.

use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TrySendError};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Three missed keep-alives: the stream is taken for dead.
pub const SILENT_FOR: Duration = Duration::from_secs(45);
/// The longest line of the stream read; a change event is well under a kilobyte.
const LINE_LIMIT: u64 = 64 * 1024;
/// How many lines read ahead wait for the caller. A caller busy for long (a wake run) while
/// the hub floods it would otherwise hold every line in memory; past this, lines are
/// dropped and the caller is told to look at everything again (`resync`), which covers
/// whatever they said.
const LINES_AHEAD: usize = 256;

/// One change on the hub.
pub use crate::json_api::Change;

/// An open event stream.
pub struct Events {
    lines: Receiver<std::io::Result<String>>,
    /// Set by the reader when it dropped lines the caller had no room for.
    dropped: Arc<AtomicBool>,
    last_heard: Instant,
    url: String,
    /// Told once when the stream breaks: the hub it came from stopped answering.
    on_broken: Option<Box<dyn FnOnce() + Send>>,
}

impl Events {
    /// Reads `stream` line by line on a thread of its own, so that a wait for the next
    /// line can have a deadline (a blocking read cannot). At most [`LINES_AHEAD`] lines
    /// wait for the caller; more are dropped, and the caller's next change is a `resync`.
    /// When the caller drops the stream the thread ends at its next line, or with the
    /// process.
    pub(super) fn new(stream: impl Read + Send + 'static, url: String) -> Events {
        let (sender, lines) = mpsc::sync_channel(LINES_AHEAD);
        let dropped = Arc::new(AtomicBool::new(false));
        let told = Arc::clone(&dropped);
        thread::spawn(move || {
            let mut reader = BufReader::new(stream);
            loop {
                let mut line = Vec::new();
                let read = (&mut reader).take(LINE_LIMIT).read_until(b'\n', &mut line);
                let line = match read {
                    Ok(0) => Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the hub closed the event stream",
                    )),
                    Ok(_) => Ok(String::from_utf8_lossy(&line).trim_end().to_string()),
                    Err(error) => Err(error),
                };
                if line.is_err() {
                    // The end is told by the channel closing when this thread returns, even
                    // when there is no room for the line that says why.
                    let _ = sender.try_send(line);
                    return;
                }
                match sender.try_send(line) {
                    Ok(()) => {}
                    // Read on and drop: the hub's stream is drained, and one look covers it.
                    Err(TrySendError::Full(_)) => told.store(true, Ordering::SeqCst),
                    Err(TrySendError::Disconnected(_)) => return,
                }
            }
        });
        Events {
            lines,
            dropped,
            last_heard: Instant::now(),
            url,
            on_broken: None,
        }
    }

    /// The same stream, calling `told` once when it breaks.
    pub(super) fn on_broken(mut self, told: impl FnOnce() + Send + 'static) -> Events {
        self.on_broken = Some(Box::new(told));
        self
    }

    /// The base URL of the hub the stream comes from.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The next change, or `None` once `within` has passed without one. Fails when the
    /// stream ends or has been silent (no change, no keep-alive) for [`SILENT_FOR`].
    pub fn next(&mut self, within: Duration) -> Result<Option<Change>> {
        let deadline = Instant::now() + within;
        loop {
            if self.dropped.swap(false, Ordering::SeqCst) {
                // What waits in the channel is older than what was dropped: skipped too.
                while let Ok(Ok(_)) = self.lines.try_recv() {}
                self.last_heard = Instant::now();
                return Ok(Some(Change::resync()));
            }
            let silent_until = self.last_heard + SILENT_FOR;
            let until = deadline.min(silent_until);
            match self
                .lines
                .recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                Ok(Ok(line)) => {
                    self.last_heard = Instant::now();
                    // `data: {…}` carries the change; `event:`, `id:`, comments (`:`, the
                    // keep-alives) and the blank line that ends an event say nothing more.
                    if let Some(data) = line.strip_prefix("data:")
                        && let Ok(change) = serde_json::from_str::<Change>(data.trim())
                    {
                        return Ok(Some(change));
                    }
                }
                Ok(Err(error)) => return Err(self.broken(&error.to_string())),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.broken("the event stream ended"));
                }
                Err(RecvTimeoutError::Timeout) => {
                    if Instant::now() >= silent_until {
                        return Err(self.broken(&format!(
                            "the event stream has been silent for {}s",
                            SILENT_FOR.as_secs()
                        )));
                    }
                    return Ok(None);
                }
            }
        }
    }

    fn broken(&mut self, cause: &str) -> Error {
        if let Some(told) = self.on_broken.take() {
            told();
        }
        Error::unreachable(self.url.clone(), cause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::record::LogAction;
    use crate::json_api::ChangeKind;

    #[test]
    fn changes_are_read_from_data_lines_and_the_rest_is_skipped() {
        let stream = b": keep-alive\n\nevent: change\ndata: {\"project\":\"api\",\"kind\":\"task\",\"id\":4}\n\n\
                       event: change\ndata: not json\n\ndata: {\"kind\":\"resync\"}\n\n"
            .to_vec();
        let mut events = Events::new(std::io::Cursor::new(stream), "http://hub".into());
        let first = events.next(Duration::from_secs(5)).unwrap().unwrap();
        assert_eq!(first.project.as_deref(), Some("api"));
        assert_eq!(first.id, Some(4));
        let second = events.next(Duration::from_secs(5)).unwrap().unwrap();
        assert_eq!(second.kind, ChangeKind::Resync);
        let end = events.next(Duration::from_secs(5)).unwrap_err();
        assert_eq!(end.exit_code(), 6, "{end}");
    }

    #[test]
    fn a_flood_the_caller_has_no_room_for_is_dropped_and_told_as_one_resync() {
        let event = "data: {\"project\":\"api\",\"kind\":\"note\",\"id\":1}\n\n";
        let flood = event.repeat(20 * LINES_AHEAD).into_bytes();
        let mut events = Events::new(std::io::Cursor::new(flood), "http://hub".into());
        // The reader runs ahead of a caller that is busy elsewhere, until the stream ends.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !events.dropped.load(Ordering::SeqCst) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        let first = events.next(Duration::from_secs(5)).unwrap().unwrap();
        assert_eq!(first, Change::resync(), "told to look at everything again");
        // What waited was skipped with what was dropped; the stream's end is still told. A
        // reader still reading the flood (a loaded machine) may fill the channel and drop
        // again: that is told as another resync, never as a lost line.
        let end = loop {
            match events.next(Duration::from_secs(5)) {
                Ok(Some(change)) if change == Change::resync() => {}
                Ok(Some(change)) => assert_eq!(change.kind, ChangeKind::Logged(LogAction::Note)),
                Ok(None) => panic!("the end of the stream is told"),
                Err(end) => break end,
            }
        };
        assert_eq!(end.exit_code(), 6, "{end}");
    }
}
