//! The command lines setup writes into the clients' files: how a client starts baton, and
//! each hook's line quoted for the shell that runs it. [`words`] reads them back.

mod words;

use std::path::PathBuf;

use crate::client::{Client, HookEvent, HookShell};
use crate::error::{Error, Result, SetupError};

use super::remote::RemoteHub;

pub use words::{agent_in_args, command_words, is_baton_hook};

/// The kind of system setup writes the clients' files for, which decides the shells their
/// hooks run in. Setup writes for the system it runs on; tests write for either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Linux and macOS: every client runs a hook's command with a POSIX shell.
    Unix,
    /// Each client has its own shell there ([`crate::client::ClientHooks::windows_shell`]).
    Windows,
}

impl Default for Platform {
    fn default() -> Self {
        Platform::CURRENT
    }
}

impl Platform {
    pub const CURRENT: Platform = if cfg!(windows) {
        Platform::Windows
    } else {
        Platform::Unix
    };

    /// The shell `client` runs a hook's command with here.
    pub fn hook_shell(self, client: Client) -> HookShell {
        match (self, client.hooks()) {
            (Platform::Windows, Some(hooks)) => hooks.windows_shell,
            _ => HookShell::Posix,
        }
    }
}

/// How a client starts baton for one agent.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The baton binary, as an absolute path: clients start servers and hooks with their own
    /// `PATH`, which need not hold the directory baton is in.
    pub baton: PathBuf,
    pub access: HubAccess,
    pub platform: Platform,
    /// Whether `baton` on the `PATH` is this same program: a cmd.exe line that cannot hold
    /// [`Launch::baton`] names it so instead.
    pub baton_on_path: bool,
}

/// A database the clients' baton keeps its state in: its URL without the password, and the
/// password file setup was told of (`PGPASSFILE`), which a client that passes its servers a
/// short list of variables (Codex) would not pass on.
#[derive(Debug, Clone)]
pub struct StoreAddress {
    pub url: String,
    pub password_file: Option<PathBuf>,
}

/// The hub a client's baton acts on, and as whom.
#[derive(Debug, Clone)]
pub enum HubAccess {
    /// The hub home on this machine, as `agent`; `home` is passed on when it is not the
    /// default one.
    Local {
        agent: String,
        home: Option<PathBuf>,
        /// The store (a database), when setup was told one.
        store: Option<StoreAddress>,
    },
    /// A hub served over HTTP, as the agent of the token in the hub's variable.
    Remote(RemoteHub),
}

impl Launch {
    /// The agent the client acts as, when setup names it (a remote hub's token names it).
    pub fn agent(&self) -> Option<&str> {
        match &self.access {
            HubAccess::Local { agent, .. } => Some(agent),
            HubAccess::Remote(_) => None,
        }
    }

    /// The remote hub, when the client is wired to one.
    pub fn remote(&self) -> Option<&RemoteHub> {
        match &self.access {
            HubAccess::Local { .. } => None,
            HubAccess::Remote(hub) => Some(hub),
        }
    }

    /// The hub home passed on, when the hub is local and not the default one.
    pub fn hub_home(&self) -> Option<&PathBuf> {
        match &self.access {
            HubAccess::Local { home, .. } => home.as_ref(),
            HubAccess::Remote(_) => None,
        }
    }

    /// The store a local hub keeps its state in, when setup was told one (a database's URL,
    /// without its password).
    pub fn store(&self) -> Option<&str> {
        match &self.access {
            HubAccess::Local { store, .. } => store.as_ref().map(|store| store.url.as_str()),
            HubAccess::Remote(_) => None,
        }
    }

    /// The arguments of a local MCP server entry. The identity goes in the arguments rather
    /// than in `BATON_AGENT`: every client passes arguments on unchanged, while some filter
    /// the environment their servers get (Codex passes only a short list of variables).
    pub fn mcp_args(&self) -> Vec<String> {
        let agent = self.agent().unwrap_or_default().to_string();
        vec!["--as".to_string(), agent, "mcp".to_string()]
    }

    /// Variables the MCP server entry sets: `BATON_HOME` when setup itself ran with a hub
    /// home of its own, and `BATON_STORE` (and `PGPASSFILE`) when it ran with a database, so
    /// server and hooks use the hub the agent is registered in (Codex passes its servers only
    /// a short list of the variables it was started with).
    pub fn mcp_env(&self) -> Vec<(String, String)> {
        self.local_settings()
            .into_iter()
            .map(|(name, value)| (name.to_string(), value))
            .collect()
    }

    /// The variables that name a local hub: its home, its store, the store's password file.
    fn local_settings(&self) -> Vec<(&'static str, String)> {
        let HubAccess::Local { home, store, .. } = &self.access else {
            return Vec::new();
        };
        let mut settings = Vec::new();
        if let Some(home) = home {
            settings.push(("BATON_HOME", home.display().to_string()));
        }
        if let Some(store) = store {
            settings.push(("BATON_STORE", store.url.clone()));
            if let Some(file) = &store.password_file {
                settings.push(("PGPASSFILE", file.display().to_string()));
            }
        }
        settings
    }

    /// The command line `client` runs for `event`, written for the shell it runs it with.
    /// Fails only for a cmd.exe line that cannot name the program, the hub home or the hub.
    pub fn hook_command(&self, event: HookEvent, client: Client) -> Result<String> {
        self.hook_line(event.name(), client)
    }

    /// The command line of `client`'s hook before a tool edits files (`hook pre-edit`),
    /// as [`Launch::hook_command`] writes the others.
    pub fn edit_guard_command(&self, client: Client) -> Result<String> {
        self.hook_line(crate::client::EditGuard::EVENT, client)
    }

    /// `baton hook EVENT --client CLIENT` for the shell `client` runs hooks with.
    fn hook_line(&self, event: &str, client: Client) -> Result<String> {
        let shell = self.platform.hook_shell(client);
        let baton = self.baton.display().to_string();
        // What the program is told of the hub: its home here, or its URL and the token.
        let settings = match &self.access {
            HubAccess::Local { .. } => self
                .local_settings()
                .into_iter()
                .map(|(name, value)| Setting::Value(name, value))
                .collect(),
            // Gemini CLI puts the value of every `$VAR` of its settings in before it runs a
            // hook line, which would make the token an argument of the hook's shell: it is
            // told the variable's name instead, and baton reads the token from it.
            HubAccess::Remote(hub) if client == Client::Gemini => vec![
                Setting::Value("BATON_URL", hub.base_url().to_string()),
                Setting::Value("BATON_TOKEN_ENV", hub.token_env().to_string()),
            ],
            HubAccess::Remote(hub) => vec![
                Setting::Value("BATON_URL", hub.base_url().to_string()),
                Setting::FromVariable("BATON_TOKEN", hub.token_env().to_string()),
            ],
        };
        let mut command = String::new();
        let program = match shell {
            HookShell::Posix => {
                for setting in &settings {
                    command.push_str(&format!(
                        "{}={} ",
                        setting.name(),
                        match setting {
                            Setting::Value(_, value) => shell_quote(value),
                            // Double quotes: the value is the variable's, whatever it holds.
                            Setting::FromVariable(_, variable) => format!("\"${variable}\""),
                        }
                    ));
                }
                shell_quote(&baton)
            }
            HookShell::PowerShell => {
                for setting in &settings {
                    command.push_str(&format!(
                        "$env:{} = {}; ",
                        setting.name(),
                        match setting {
                            Setting::Value(_, value) => powershell_quote(value),
                            Setting::FromVariable(_, variable) => format!("$env:{variable}"),
                        }
                    ));
                }
                format!("& {}", powershell_quote(&baton))
            }
            HookShell::Cmd => {
                for setting in &settings {
                    let value = match setting {
                        Setting::Value(_, value) => {
                            if !is_cmd_plain(value) {
                                return Err(cmd_refusal(client, setting.what(), value));
                            }
                            value.clone()
                        }
                        // cmd.exe puts the variable's value in before it runs the line (an
                        // unset one stays `%VAR%`, which the hub refuses as a token).
                        Setting::FromVariable(_, variable) => format!("%{variable}%"),
                    };
                    // No space before `&&`: it would end up in the value.
                    command.push_str(&format!("set {}={value}&& ", setting.name()));
                }
                if is_cmd_plain(&baton) {
                    baton
                } else if self.baton_on_path {
                    "baton".to_string()
                } else {
                    return Err(cmd_refusal(client, "baton's path", &baton));
                }
            }
        };
        command.push_str(&program);
        if let Some(agent) = self.agent() {
            command.push_str(&format!(" --as {agent}"));
        }
        command.push_str(&format!(" hook {event} --client {}", client.name()));
        Ok(command)
    }
}

/// A variable a hook line sets for baton.
enum Setting {
    /// To this value.
    Value(&'static str, String),
    /// To the value of another variable when the line runs.
    FromVariable(&'static str, String),
}

impl Setting {
    fn name(&self) -> &'static str {
        match self {
            Setting::Value(name, _) | Setting::FromVariable(name, _) => name,
        }
    }

    /// What the value is, for a refusal.
    fn what(&self) -> &'static str {
        match self.name() {
            "BATON_URL" => "the hub's URL",
            "BATON_STORE" => "the store's address",
            "PGPASSFILE" => "the database's password file",
            _ => "the hub home",
        }
    }
}

fn cmd_refusal(client: Client, what: &'static str, value: &str) -> Error {
    SetupError::UnsafeForCmd {
        client,
        what,
        value: value.to_string(),
    }
    .into()
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

/// The characters PowerShell takes for a single quote: the ASCII one and four typographic ones.
const POWERSHELL_SINGLE_QUOTES: [char; 5] = ['\'', '\u{2018}', '\u{2019}', '\u{201A}', '\u{201B}'];

/// Quotes a word for PowerShell: always single quotes, in which nothing expands and a quote
/// is written twice.
pub fn powershell_quote(word: &str) -> String {
    let mut quoted = String::from("'");
    for c in word.chars() {
        if POWERSHELL_SINGLE_QUOTES.contains(&c) {
            quoted.push(c);
        }
        quoted.push(c);
    }
    quoted.push('\'');
    quoted
}

/// Whether cmd.exe takes `word` as one word as it is: no quotes can be used (see
/// [`HookShell::Cmd`]), so no space and none of the characters cmd.exe gives a meaning to.
fn is_cmd_plain(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && !"\"&|<>^%()!,;=".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(platform: Platform, baton: &str, hub_home: Option<&str>) -> Launch {
        Launch {
            baton: PathBuf::from(baton),
            access: HubAccess::Local {
                agent: "claude".into(),
                home: hub_home.map(PathBuf::from),
                store: None,
            },
            platform,
            baton_on_path: false,
        }
    }

    fn remote_launch(platform: Platform, baton: &str, url: &str) -> Launch {
        Launch {
            baton: PathBuf::from(baton),
            access: HubAccess::Remote(RemoteHub::new(url, "HUB_TOKEN").unwrap()),
            platform,
            baton_on_path: false,
        }
    }

    fn command(launch: &Launch, event: HookEvent, client: Client) -> String {
        let command = launch.hook_command(event, client).unwrap();
        assert!(
            is_baton_hook(&command),
            "not read back as baton's: {command}"
        );
        command
    }

    #[test]
    fn posix_hook_commands_quote_what_needs_it_and_read_back() {
        let plain = launch(Platform::Unix, "/usr/local/bin/baton", None);
        assert_eq!(
            command(&plain, HookEvent::Stop, Client::Claude),
            "/usr/local/bin/baton --as claude hook stop --client claude"
        );

        let odd = launch(
            Platform::Unix,
            "/home/o'neil/my tools/baton",
            Some("/tmp/hub dir"),
        );
        let line = command(&odd, HookEvent::SessionStart, Client::Gemini);
        assert_eq!(
            line,
            "BATON_HOME='/tmp/hub dir' '/home/o'\\''neil/my tools/baton' --as claude hook \
             session-start --client gemini"
        );
        assert_eq!(
            command_words(&line),
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
    }

    #[test]
    fn each_client_gets_its_own_shell_on_windows_and_the_same_on_unix() {
        for client in [Client::Claude, Client::Codex, Client::Gemini] {
            assert_eq!(Platform::Unix.hook_shell(client), HookShell::Posix);
        }
        assert_eq!(
            Platform::Windows.hook_shell(Client::Claude),
            HookShell::PowerShell
        );
        assert_eq!(
            Platform::Windows.hook_shell(Client::Gemini),
            HookShell::PowerShell
        );
        assert_eq!(Platform::Windows.hook_shell(Client::Codex), HookShell::Cmd);
    }

    #[test]
    fn powershell_lines_call_the_program_and_quote_every_kind_of_single_quote() {
        let plain = launch(
            Platform::Windows,
            r"C:\Users\ann\.local\bin\baton.exe",
            None,
        );
        assert_eq!(
            command(&plain, HookEvent::Prompt, Client::Gemini),
            r"& 'C:\Users\ann\.local\bin\baton.exe' --as claude hook prompt --client gemini"
        );

        // A path may hold what PowerShell would expand or end a string at: `$`, a backtick,
        // an ASCII or a typographic single quote.
        let odd = launch(
            Platform::Windows,
            "C:\\Users\\O'Neil $x\\b\u{2019}n`\\baton.exe",
            Some(r"D:\hub's"),
        );
        let line = command(&odd, HookEvent::Stop, Client::Claude);
        assert_eq!(
            line,
            "$env:BATON_HOME = 'D:\\hub''s'; & 'C:\\Users\\O''Neil $x\\b\u{2019}\u{2019}n`\\baton.exe' \
             --as claude hook stop --client claude"
        );
        assert_eq!(
            command_words(&line),
            [
                "C:\\Users\\O'Neil $x\\b\u{2019}n`\\baton.exe",
                "--as",
                "claude",
                "hook",
                "stop",
                "--client",
                "claude"
            ]
        );
    }

    #[test]
    fn cmd_lines_hold_no_quotes_and_fall_back_to_the_path_or_refuse() {
        let plain = launch(
            Platform::Windows,
            r"C:\Users\ann\.local\bin\baton.exe",
            Some(r"D:\hub"),
        );
        let line = command(&plain, HookEvent::Stop, Client::Codex);
        assert_eq!(
            line,
            r"set BATON_HOME=D:\hub&& C:\Users\ann\.local\bin\baton.exe --as claude hook stop --client codex"
        );
        assert!(!line.contains('"'));
        assert_eq!(
            command_words(&line)[..2],
            [r"C:\Users\ann\.local\bin\baton.exe", "--as"]
        );

        // A path with a space cannot be written; baton on the PATH is named by its name.
        let mut spaced = launch(
            Platform::Windows,
            r"C:\Users\Ann Lee\.local\bin\baton.exe",
            None,
        );
        let refusal = spaced
            .hook_command(HookEvent::Stop, Client::Codex)
            .unwrap_err()
            .to_string();
        assert!(refusal.contains("cmd.exe"), "{refusal}");
        assert!(refusal.contains(r"C:\Users\Ann Lee"), "{refusal}");
        spaced.baton_on_path = true;
        assert_eq!(
            command(&spaced, HookEvent::Stop, Client::Codex),
            "baton --as claude hook stop --client codex"
        );

        // The hub home has no such way out.
        let mut home = launch(Platform::Windows, r"C:\b\baton.exe", Some(r"C:\my hub"));
        home.baton_on_path = true;
        for bad in [r"C:\my hub", r"C:\a&b", r"C:\100%", r"C:\(x)", "C:\\\"q\""] {
            home.access = HubAccess::Local {
                agent: "claude".into(),
                home: Some(PathBuf::from(bad)),
                store: None,
            };
            assert!(
                home.hook_command(HookEvent::Prompt, Client::Codex).is_err(),
                "{bad} was let through"
            );
        }
        // Claude and Gemini take the same paths through PowerShell.
        assert!(is_baton_hook(&command(
            &home,
            HookEvent::Prompt,
            Client::Claude
        )));
    }

    /// The check below runs the real baton.exe, which `.ci/wine/run` builds for this target
    /// and names in `BATON_TEST_WINDOWS_BATON`.
    #[cfg(windows)]
    fn windows_baton() -> Option<PathBuf> {
        if let Some(baton) = std::env::var_os("BATON_TEST_WINDOWS_BATON") {
            return Some(PathBuf::from(baton));
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but BATON_TEST_WINDOWS_BATON is not: .ci/wine/run must build baton.exe \
             and name it"
        );
        eprintln!(
            "NOT RUN: the cmd.exe hook line check needs BATON_TEST_WINDOWS_BATON=<baton.exe>"
        );
        None
    }

    /// Codex starts a hook as `%COMSPEC% /C LINE`, LINE one argument quoted by Rust's std:
    /// the line setup writes must reach baton whole, hub home included.
    #[cfg(windows)]
    #[test]
    fn a_cmd_line_reaches_baton_through_cmd_exe_as_codex_starts_it() {
        use std::io::Write;
        use std::process::{Command, Stdio};

        let Some(baton) = windows_baton() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let hub = dir.path().join("hub");
        let workspace = dir.path().join("work");
        std::fs::create_dir_all(&workspace).unwrap();
        let run = |agent: &str, args: &[&str]| {
            let output = crate::process::started_for_test(
                Command::new(&baton)
                    .env("BATON_HOME", &hub)
                    .current_dir(&workspace)
                    .args(["--as", agent])
                    .args(args)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped()),
            )
            .wait_with_output()
            .unwrap();
            assert!(
                output.status.success(),
                "baton {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        };
        let workspace_text = workspace.to_str().unwrap();
        run(
            "claude",
            &[
                "project",
                "init",
                "--name",
                "demo",
                "--workspace",
                workspace_text,
            ],
        );
        run("codex", &["whoami"]);
        run(
            "claude",
            &["send", "--to", "codex", "--subject", "ship the parser"],
        );

        let launch = Launch {
            baton: baton.clone(),
            access: HubAccess::Local {
                agent: "codex".into(),
                home: Some(hub.clone()),
                store: None,
            },
            platform: Platform::Windows,
            baton_on_path: false,
        };
        let line = launch
            .hook_command(HookEvent::SessionStart, Client::Codex)
            .unwrap();
        let shell = std::env::var_os("COMSPEC").unwrap_or_else(|| "cmd.exe".into());
        let mut child = crate::process::started_for_test(
            Command::new(shell)
                .arg("/C")
                .arg(&line)
                .current_dir(&workspace)
                .env_remove("BATON_HOME")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        );
        let input = serde_json::json!({
            "session_id": "s-1",
            "cwd": workspace_text,
            "hook_event_name": "SessionStart",
            "source": "startup",
        });
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{line}: {stderr}");
        let answer: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|error| panic!("{line}: {error}: {stderr}"));
        let context = answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default();
        assert!(context.contains("ship the parser"), "{line}: {answer}");
    }

    #[test]
    fn remote_lines_carry_the_hub_s_url_and_the_token_s_variable_and_no_identity() {
        let posix = remote_launch(
            Platform::Unix,
            "/opt/my tools/baton",
            "http://10.0.0.5:7878/",
        );
        let line = command(&posix, HookEvent::Prompt, Client::Claude);
        assert_eq!(
            line,
            "BATON_URL=http://10.0.0.5:7878 BATON_TOKEN=\"$HUB_TOKEN\" '/opt/my tools/baton' hook \
             prompt --client claude"
        );
        assert_eq!(
            command_words(&line)[..3],
            [
                "BATON_URL=http://10.0.0.5:7878",
                "BATON_TOKEN=$HUB_TOKEN",
                "/opt/my tools/baton"
            ]
        );

        let powershell = remote_launch(
            Platform::Windows,
            r"C:\Users\O'Neil\baton.exe",
            "https://hub.example.com/baton",
        );
        assert_eq!(
            command(&powershell, HookEvent::Stop, Client::Claude),
            "$env:BATON_URL = 'https://hub.example.com/baton'; $env:BATON_TOKEN = $env:HUB_TOKEN; \
             & 'C:\\Users\\O''Neil\\baton.exe' hook stop --client claude"
        );
        // Gemini CLI fills in `$VAR` before it runs a line: it is given the variable's name.
        assert_eq!(
            command(&powershell, HookEvent::Stop, Client::Gemini),
            "$env:BATON_URL = 'https://hub.example.com/baton'; $env:BATON_TOKEN_ENV = 'HUB_TOKEN'; \
             & 'C:\\Users\\O''Neil\\baton.exe' hook stop --client gemini"
        );
        let gemini = command(&posix, HookEvent::Prompt, Client::Gemini);
        assert_eq!(
            gemini,
            "BATON_URL=http://10.0.0.5:7878 BATON_TOKEN_ENV=HUB_TOKEN '/opt/my tools/baton' hook \
             prompt --client gemini"
        );
        assert!(!gemini.contains('$'), "{gemini}");

        let cmd = remote_launch(Platform::Windows, r"C:\b\baton.exe", "http://10.0.0.5:7878");
        let line = command(&cmd, HookEvent::SessionStart, Client::Codex);
        assert_eq!(
            line,
            r"set BATON_URL=http://10.0.0.5:7878&& set BATON_TOKEN=%HUB_TOKEN%&& C:\b\baton.exe hook session-start --client codex"
        );
        assert!(!line.contains('"'));
        for line in [&line, &command(&posix, HookEvent::Stop, Client::Codex)] {
            assert!(!line.contains("--as"), "{line}");
        }
        // A URL cmd.exe would take apart is refused there, as a hub home is.
        let percent = remote_launch(Platform::Windows, r"C:\b\baton.exe", "http://hub/a%20b");
        let refusal = percent
            .hook_command(HookEvent::Stop, Client::Codex)
            .unwrap_err()
            .to_string();
        assert!(refusal.contains("the hub's URL"), "{refusal}");
    }
}
