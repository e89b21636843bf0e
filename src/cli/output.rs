//! Writing results to stdout: JSON when asked, text otherwise. A closed pipe (`baton log |
//! head`) ends the process quietly, as a well-behaved Unix tool does.

use std::io::{ErrorKind, Write};

use serde::Serialize;

use baton::text;

/// Writes to stdout through `write`, buffered; a closed pipe ends the process quietly.
fn write_out(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
    let mut stdout = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    if let Err(error) = write(&mut stdout).and_then(|()| stdout.flush()) {
        if error.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {error}");
        std::process::exit(1);
    }
}

/// As [`emit`], with the human form written out as it is made rather than built whole
/// first: for answers that can run to thousands of tasks.
pub fn emit_streamed<T: Serialize + ?Sized>(
    as_json: bool,
    value: &T,
    human: impl FnOnce(&mut dyn Write, &T) -> std::io::Result<()>,
) {
    if as_json {
        json(value);
    } else {
        write_out(|out| human(&mut Escaping(out), value));
    }
}

/// Writes human text to stdout. Participants' text in it was already made safe field by
/// field (`baton::text`); any control character still in it is escaped here too, so
/// nothing but baton's own line breaks and tabs reaches the terminal raw.
pub fn print(text: &str) {
    write_out(|out| out.write_all(text::escape_controls(text).as_bytes()));
}

/// As [`print`], followed by a newline.
pub fn line(text: &str) {
    write_out(|out| {
        out.write_all(text::escape_controls(text).as_bytes())?;
        out.write_all(b"\n")
    });
}

/// Writes `text` to stdout exactly: for JSON (whose encoder escapes what it must) and for
/// baton's own terminal sequences.
pub fn print_exact(text: &str) {
    write_out(|out| out.write_all(text.as_bytes()));
}

/// As [`print_exact`], followed by a newline.
pub fn line_exact(text: &str) {
    write_out(|out| {
        out.write_all(text.as_bytes())?;
        out.write_all(b"\n")
    });
}

/// A writer for streamed human text that escapes control characters as [`print`] does.
/// Every write it gets is a whole rendered piece, so valid UTF-8; bytes that are not are
/// passed through lossily rather than raw.
struct Escaping<'a>(&'a mut dyn Write);

impl Write for Escaping<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(bytes);
        self.0.write_all(text::escape_controls(&text).as_bytes())?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Writes `value` as pretty JSON, streamed: a long answer is never held twice in memory.
pub fn json<T: Serialize + ?Sized>(value: &T) {
    write_out(|out| {
        serde_json::to_writer_pretty(&mut *out, value).map_err(|error| {
            if error.is_io() {
                std::io::Error::from(error)
            } else {
                eprintln!("error: cannot encode the result as JSON: {error}");
                std::process::exit(1);
            }
        })?;
        out.write_all(b"\n")
    });
}

/// JSON when `--json` was given, else the human rendering.
pub fn emit<T: Serialize + ?Sized>(as_json: bool, value: &T, human: impl FnOnce(&T) -> String) {
    if as_json {
        json(value);
    } else {
        let mut text = human(value);
        if !text.is_empty() {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            print(&text);
        }
    }
}
