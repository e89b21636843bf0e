//! The command lines setup writes into the clients' files, and recognising them again.

use std::path::{Path, PathBuf};

use crate::client::{Client, HookEvent};

/// How a client starts baton for one agent.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The baton binary, as an absolute path: clients start servers and hooks with their own
    /// `PATH`, which need not hold the directory baton is in.
    pub baton: PathBuf,
    pub agent: String,
    /// The hub home to pass on, when it is not the default one.
    pub hub_home: Option<PathBuf>,
}

impl Launch {
    /// The arguments of the MCP server entry. The identity goes in the arguments rather than
    /// in `BATON_AGENT`: every client passes arguments on unchanged, while some filter the
    /// environment their servers get (Codex passes only a short list of variables).
    pub fn mcp_args(&self) -> Vec<String> {
        vec!["--as".to_string(), self.agent.clone(), "mcp".to_string()]
    }

    /// Variables the MCP server entry sets: only `BATON_HOME`, and only when setup itself ran
    /// with a hub home of its own, so server and hooks use the hub the agent is registered in.
    pub fn mcp_env(&self) -> Vec<(String, String)> {
        self.hub_home
            .iter()
            .map(|home| ("BATON_HOME".to_string(), home.display().to_string()))
            .collect()
    }

    /// The shell command a client runs for `event`.
    pub fn hook_command(&self, event: HookEvent, client: Client) -> String {
        let mut command = String::new();
        if let Some(home) = &self.hub_home {
            command.push_str("BATON_HOME=");
            command.push_str(&shell_quote(&home.display().to_string()));
            command.push(' ');
        }
        command.push_str(&shell_quote(&self.baton.display().to_string()));
        command.push_str(&format!(
            " --as {} hook {} --client {}",
            self.agent,
            event.name(),
            client.name()
        ));
        command
    }
}

/// Quotes a word for `sh` when it needs it.
pub fn shell_quote(word: &str) -> String {
    let is_plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c));
    if is_plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Splits a simple shell command into words: single and double quotes and backslashes are
/// understood, nothing else (no expansions). Enough to read back what [`Launch`] writes and
/// what people write by hand.
pub fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// True for a hook command that runs `baton … hook …`: a program named `baton`, after any
/// `VAR=value` assignments, with `hook` among its arguments.
pub fn is_baton_hook(command: &str) -> bool {
    let words = shell_words(command);
    let mut rest = words
        .iter()
        .skip_while(|word| is_assignment(word))
        .map(String::as_str);
    let is_baton = rest
        .next()
        .and_then(|program| Path::new(program).file_name())
        .is_some_and(|name| name == "baton");
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

    fn launch(baton: &str, hub_home: Option<&str>) -> Launch {
        Launch {
            baton: PathBuf::from(baton),
            agent: "claude".into(),
            hub_home: hub_home.map(PathBuf::from),
        }
    }

    #[test]
    fn hook_commands_quote_what_needs_it_and_read_back() {
        let plain = launch("/usr/local/bin/baton", None);
        let command = plain.hook_command(HookEvent::Stop, Client::Claude);
        assert_eq!(
            command,
            "/usr/local/bin/baton --as claude hook stop --client claude"
        );
        assert!(is_baton_hook(&command));

        let odd = launch("/home/o'neil/my tools/baton", Some("/tmp/hub dir"));
        let command = odd.hook_command(HookEvent::SessionStart, Client::Gemini);
        assert_eq!(
            command,
            "BATON_HOME='/tmp/hub dir' '/home/o'\\''neil/my tools/baton' --as claude hook \
             session-start --client gemini"
        );
        assert_eq!(
            shell_words(&command),
            [
                "BATON_HOME=/tmp/hub dir",
                "/home/o'neil/my tools/baton",
                "--as",
                "claude",
                "hook",
                "session-start",
                "--client",
                "gemini"
            ]
        );
        assert!(is_baton_hook(&command));
    }

    #[test]
    fn only_baton_hook_commands_count_as_ours() {
        assert!(is_baton_hook("baton hook stop --client codex"));
        assert!(is_baton_hook("\"/opt/baton\" --as x hook prompt"));
        assert!(!is_baton_hook("baton inbox"));
        assert!(!is_baton_hook("notify-send hook"));
        assert!(!is_baton_hook("/usr/bin/batonish hook stop"));
        assert!(!is_baton_hook("echo baton hook"));
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
