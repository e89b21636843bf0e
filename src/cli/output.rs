//! Writing results to stdout: JSON when asked, text otherwise. A closed pipe (`baton log |
//! head`) ends the process quietly, as a well-behaved Unix tool does.

use std::io::{ErrorKind, Write};

use serde::Serialize;

/// Writes `text` to stdout as is.
pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if error.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {error}");
        std::process::exit(1);
    }
}

/// Writes `text` followed by a newline.
pub fn line(text: &str) {
    print(&format!("{text}\n"));
}

/// Writes `value` as pretty JSON.
pub fn json<T: Serialize + ?Sized>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => line(&text),
        Err(error) => {
            eprintln!("error: cannot encode the result as JSON: {error}");
            std::process::exit(1);
        }
    }
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
