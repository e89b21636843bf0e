//! Reading the command lines back: the words of a hook's line as its shell splits them,
//! whether a line runs baton's hook, and the agent an argument list names. Setup finds its
//! own entries by these, in whatever form a system or a person wrote them.

use super::POWERSHELL_SINGLE_QUOTES;

/// The words of a hook's command line as its shell splits them, for each form setup writes
/// ([`Launch::hook_command`]) and the simple ones people write by hand: a PowerShell line
/// (`& 'program' …` after any `$env:NAME = 'value';`), a cmd.exe line (`set NAME=value&&
/// program …`), else a POSIX one. No expansions.
pub fn command_words(command: &str) -> Vec<String> {
    let line = command.trim_start();
    let starts_with = |prefix: &str| {
        line.get(..prefix.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
    };
    if line.starts_with('&') || starts_with("$env:") {
        powershell_words(line)
    } else if starts_with("set ") {
        // The program follows the last `set NAME=value&&`.
        let last = line.rsplit("&&").next().unwrap_or(line);
        cmd_words(last)
    } else if is_windows_path(line) {
        // A Windows path's backslashes are separators, not a POSIX shell's escapes.
        cmd_words(line)
    } else {
        shell_words(line)
    }
}

/// Whether `line` starts with an absolute Windows path (`C:\…`, `C:/…` or `\\server\…`).
fn is_windows_path(line: &str) -> bool {
    let bytes = line.as_bytes();
    let drive = bytes.len() > 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/');
    drive || line.starts_with(r"\\")
}

/// A command line's words as they are split off it: a word ends at whitespace outside
/// quotes, and quotes alone make a word (an empty one).
#[derive(Default)]
struct Words {
    done: Vec<String>,
    word: String,
    in_word: bool,
}

impl Words {
    fn push(&mut self, c: char) {
        self.in_word = true;
        self.word.push(c);
    }

    /// A quote opened: a word has begun, even if nothing follows.
    fn begin(&mut self) {
        self.in_word = true;
    }

    fn end(&mut self) {
        if self.in_word {
            self.done.push(std::mem::take(&mut self.word));
            self.in_word = false;
        }
    }

    /// The rest of a double-quoted string, after its opening quote: up to the closing
    /// one, `escape` taking the character after it as it is.
    fn double_quoted(&mut self, chars: &mut impl Iterator<Item = char>, escape: char) {
        self.begin();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                c if c == escape => chars.next().into_iter().for_each(|c| self.push(c)),
                c => self.push(c),
            }
        }
    }

    fn finish(mut self) -> Vec<String> {
        self.end();
        self.done
    }
}

/// The words of a PowerShell line's last statement, without the call operator `&`.
fn powershell_words(line: &str) -> Vec<String> {
    let mut words = Words::default();
    let mut chars = line.chars().peekable();
    let is_quote = |c: &char| POWERSHELL_SINGLE_QUOTES.contains(c);
    while let Some(c) = chars.next() {
        match c {
            c if is_quote(&c) => {
                words.begin();
                while let Some(c) = chars.next() {
                    // A quote written twice is one quote.
                    if is_quote(&c) && chars.next_if(is_quote).is_none() {
                        break;
                    }
                    words.push(c);
                }
            }
            '"' => words.double_quoted(&mut chars, '`'),
            // Only the last statement counts: what came before set variables for it.
            ';' => {
                words.end();
                words.done.clear();
            }
            '&' if !words.in_word => {}
            c if c.is_whitespace() => words.end(),
            c => words.push(c),
        }
    }
    words.finish()
}

/// The words of a cmd.exe command, split at spaces outside double quotes.
fn cmd_words(command: &str) -> Vec<String> {
    let mut words = Words::default();
    let mut quoted = false;
    for c in command.chars() {
        match c {
            '"' => {
                words.begin();
                quoted = !quoted;
            }
            c if c.is_whitespace() && !quoted => words.end(),
            c => words.push(c),
        }
    }
    words.finish()
}

/// Splits a simple shell command into words: single and double quotes and backslashes are
/// understood, nothing else (no expansions). Enough to read back what [`Launch`] writes and
/// what people write by hand.
pub fn shell_words(command: &str) -> Vec<String> {
    let mut words = Words::default();
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                words.begin();
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    words.push(c);
                }
            }
            '"' => words.double_quoted(&mut chars, '\\'),
            '\\' => {
                words.begin();
                chars.next().into_iter().for_each(|c| words.push(c));
            }
            c if c.is_whitespace() => words.end(),
            c => words.push(c),
        }
    }
    words.finish()
}

/// True for a hook command that runs `baton … hook …`: a program named `baton` (or
/// `baton.exe`), after any variables set for it, with `hook` among its arguments, in any of
/// the forms [`command_words`] reads.
pub fn is_baton_hook(command: &str) -> bool {
    let words = command_words(command);
    let mut rest = words
        .iter()
        .skip_while(|word| is_assignment(word))
        .map(String::as_str);
    // Either separator, whichever system wrote the line.
    let is_baton = rest
        .next()
        .and_then(|program| program.rsplit(['/', '\\']).next())
        .is_some_and(|name| name == "baton" || name.eq_ignore_ascii_case("baton.exe"));
    is_baton && rest.any(|word| word == "hook")
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The agent named by `--as NAME` in an argument list.
pub fn agent_in_args<'a>(args: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--as" {
            return args.next().map(str::to_string);
        }
        if let Some(name) = arg.strip_prefix("--as=") {
            return Some(name.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_baton_hook_commands_count_as_ours() {
        assert!(is_baton_hook("baton hook stop --client codex"));
        assert!(is_baton_hook("\"/opt/baton\" --as x hook prompt"));
        assert!(is_baton_hook(r"C:\bin\BATON.EXE --as x hook prompt"));
        assert!(is_baton_hook(r"& 'C:\bin\baton.exe' hook prompt"));
        assert!(is_baton_hook(r"set A=1&& set B=2&& baton hook stop"));
        assert!(!is_baton_hook("baton inbox"));
        assert!(!is_baton_hook("notify-send hook"));
        assert!(!is_baton_hook("/usr/bin/batonish hook stop"));
        assert!(!is_baton_hook("echo baton hook"));
        assert!(!is_baton_hook(r"& 'C:\bin\other.exe' baton hook"));
        assert!(!is_baton_hook("$env:X = 'baton'; & notepad hook"));
        assert!(!is_baton_hook(r"set X=baton&& C:\bin\other.exe hook"));
    }

    #[test]
    fn finds_the_agent_in_arguments() {
        assert_eq!(
            agent_in_args(["--as", "codex", "mcp"]),
            Some("codex".to_string())
        );
        assert_eq!(agent_in_args(["--as=gem", "mcp"]), Some("gem".to_string()));
        assert_eq!(agent_in_args(["mcp"]), None);
    }
}
