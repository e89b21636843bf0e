//! The agent clients baton works with (Claude Code, Codex, Gemini CLI, opencode) and the
//! moments their hooks run at: one type for each, and every per-client spelling (names,
//! hook events, hook answers, wake commands) as data in one table, [`DEFINITIONS`].
//!
//! Both `hook` (answering a client) and `setup` (wiring one) read this table, so a client's
//! name for an event is written once. Where a client keeps its files depends on the
//! variables it honours; that stays with setup, one module per client.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::Serialize;

/// An agent client baton can wire and answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Client {
    Claude,
    Codex,
    Gemini,
    Opencode,
}

/// The moments a hook runs at, named for what they mean rather than per client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// The start of a session: the inbox joins the context.
    SessionStart,
    /// Each prompt: the inbox joins the context.
    Prompt,
    /// The agent is about to stop: it goes on while tasks wait for it.
    Stop,
}

/// What baton knows of one client: one row of [`DEFINITIONS`].
struct Definition {
    client: Client,
    /// The client's name, which is also its program's name and the default agent name.
    name: &'static str,
    /// What the agent is registered as good at until the user says otherwise.
    default_strengths: &'static str,
    /// The client's shell hooks; `None` for a client without any.
    hooks: Option<ClientHooks>,
    /// The plugin file setup installs for a client whose hooks are plugins, which run
    /// `baton hook` themselves and read its answers in baton's own shape.
    plugin: Option<ClientPlugin>,
    /// How the client shows baton a tool call before it edits files (SPEC 18.3).
    edit_guard: EditGuard,
    /// The headless command that wakes the agent; the supervisor appends the prompt.
    wake: &'static [WakeWord],
    /// Wake commands earlier batons' setup registered, replaced when setup runs again.
    former_wakes: &'static [&'static [&'static str]],
    /// The flag that lets a wake run write one more directory, for a client whose sandbox
    /// keeps a git worktree's repository read-only: Codex's `workspace-write` makes the
    /// `.git` it finds read-only, and a worktree's index and refs are in the main
    /// repository's. Given its git directories, a run in a task's worktree can commit.
    writable_dir_flag: Option<&'static str>,
}

/// How a client runs baton's hooks and reads their answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientHooks {
    /// The client's own names for [`HookEvent::ALL`], in that order.
    event_names: [&'static str; 3],
    /// How long the client gives a hook before it gives up on it.
    pub timeout: HookTimeout,
    /// The `decision` that keeps the agent working when it is about to stop.
    pub keep_working_decision: &'static str,
    /// What the hook prints when it has nothing to add.
    pub nothing_to_add: &'static str,
    /// The shell the client runs a hook's command with on Windows. On Unix every client runs
    /// it with a POSIX shell (`sh -c`, `bash -c` or the user's `$SHELL`).
    pub windows_shell: HookShell,
}

/// A shell a client hands a hook's command line to, which decides how setup writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookShell {
    /// `sh`, `bash`, `zsh`: single quotes, `NAME=value` before the program.
    Posix,
    /// Windows PowerShell 5.1 or PowerShell 7: `& 'program'`, `$env:NAME = 'value';`.
    PowerShell,
    /// cmd.exe, given the line as one argument after `/C` by a program that quotes it the
    /// way Rust's std does (Codex): a `"` inside reaches cmd.exe as `\"`, so the line can
    /// hold no quotes at all.
    Cmd,
}

/// A client whose hooks are plugins: the file setup puts in its plugin directory, and what
/// it holds. The plugin runs `baton hook EVENT --client NAME` and passes the answer on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientPlugin {
    /// The plugin's file name in the client's plugin directory.
    pub file_name: &'static str,
    /// The plugin itself.
    pub source: &'static str,
}

/// How a client lets `baton hook pre-edit` see a tool call before the tool edits files, and
/// how it takes a refusal (SPEC 18.3). Checked in the installed clients: CLIENTS.md,
/// "Before a tool edits files".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditGuard {
    /// The client's event before a tool runs (`PreToolUse`, `BeforeTool`); for a client
    /// whose hooks are baton's plugin, the plugin's hook.
    pub event_name: &'static str,
    /// The tools it lets baton see, and where their input names the paths they change.
    pub tools: &'static [EditTool],
    /// How the hook says no.
    pub deny: DenyShape,
}

/// A tool that edits files, and where its input (`tool_input`) names what it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditTool {
    pub name: &'static str,
    pub paths: PathsAt,
}

/// Where a tool's input names the paths it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathsAt {
    /// The first of these string fields that is there: one path.
    Field(&'static [&'static str]),
    /// This field holds a patch in the `apply_patch` format, which names its files on its
    /// `*** Add File:`, `*** Update File:`, `*** Delete File:` and `*** Move to:` lines.
    Patch(&'static str),
}

/// How a client takes the pre-edit hook's refusal on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenyShape {
    /// `{"hookSpecificOutput":{"hookEventName":…,"permissionDecision":"deny",
    /// "permissionDecisionReason":…}}` (Claude Code, Codex).
    PermissionDecision,
    /// `{"decision":"deny","reason":…}` (Gemini CLI).
    Decision,
    /// `{"deny":…}`, which baton's plugin throws as an Error whose message the model reads.
    Plugin,
}

/// Claude Code's tools that edit files: Edit and Write name `file_path` (absolute),
/// NotebookEdit `notebook_path`; MultiEdit is in older versions' lists.
const CLAUDE_EDIT_TOOLS: &[EditTool] = &[
    EditTool {
        name: "Edit",
        paths: PathsAt::Field(&["file_path"]),
    },
    EditTool {
        name: "Write",
        paths: PathsAt::Field(&["file_path"]),
    },
    EditTool {
        name: "MultiEdit",
        paths: PathsAt::Field(&["file_path"]),
    },
    EditTool {
        name: "NotebookEdit",
        paths: PathsAt::Field(&["notebook_path", "file_path"]),
    },
];

/// A hook's time limit, in the unit the client's configuration counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookTimeout {
    Seconds(u64),
    Milliseconds(u64),
}

impl HookTimeout {
    /// The number written in the client's configuration.
    pub fn in_client_unit(self) -> u64 {
        match self {
            HookTimeout::Seconds(amount) | HookTimeout::Milliseconds(amount) => amount,
        }
    }
}

/// One word of a wake command.
enum WakeWord {
    Word(&'static str),
    /// This flag and the hub home's absolute path, when the hub is on this machine; nothing
    /// for a hub reached over HTTP, whose files the woken agent never writes.
    HubHome(&'static str),
    /// These words, when the hub keeps its state in a database rather than in its home's
    /// files: what the woken client needs to reach it.
    OnDatabase(&'static [&'static str]),
}

use WakeWord::{HubHome, OnDatabase, Word};

/// Claude Code's hooks, whose shape Codex's take too.
const CLAUDE_CODE_HOOKS: ClientHooks = ClientHooks {
    event_names: ["SessionStart", "UserPromptSubmit", "Stop"],
    timeout: HookTimeout::Seconds(10),
    keep_working_decision: "block",
    // Both take silence for "nothing to add".
    nothing_to_add: "",
    // Claude Code runs a hook that says `"shell": "powershell"` with PowerShell (pwsh, else
    // Windows PowerShell), whether or not Git Bash is installed; setup says so.
    windows_shell: HookShell::PowerShell,
};

/// Every client, in [`Client`]'s order. Each wake command ends where the client takes its
/// prompt whatever the prompt says: after `--`, or as the value of the flag that names it.
const DEFINITIONS: [Definition; 4] = [
    Definition {
        client: Client::Claude,
        name: "claude",
        default_strengths: "careful multi-file changes, refactoring, code review, tests",
        hooks: Some(CLAUDE_CODE_HOOKS),
        plugin: None,
        edit_guard: EditGuard {
            event_name: "PreToolUse",
            tools: CLAUDE_EDIT_TOOLS,
            deny: DenyShape::PermissionDecision,
        },
        // `--allowedTools` takes any number of values: without the `--` it swallows the
        // prompt, and `claude -p` stops with "Input must be provided".
        wake: &[
            Word("claude"),
            Word("-p"),
            Word("--permission-mode"),
            Word("acceptEdits"),
            Word("--allowedTools"),
            Word("mcp__baton"),
            Word("--"),
        ],
        former_wakes: &[&[
            "claude",
            "-p",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "mcp__baton",
        ]],
        writable_dir_flag: None,
    },
    Definition {
        client: Client::Codex,
        name: "codex",
        default_strengths: "focused implementation, debugging, shell and build work",
        // Codex's hooks take Claude Code's shape, but on Windows it runs them as
        // `%COMSPEC% /C <command>`.
        hooks: Some(ClientHooks {
            windows_shell: HookShell::Cmd,
            ..CLAUDE_CODE_HOOKS
        }),
        plugin: None,
        // Its file edits go through `apply_patch`, whose input is the raw patch with paths
        // relative to `cwd`. Edits by shell commands reach the hook only as command text.
        edit_guard: EditGuard {
            event_name: "PreToolUse",
            tools: &[EditTool {
                name: "apply_patch",
                paths: PathsAt::Patch("command"),
            }],
            deny: DenyShape::PermissionDecision,
        },
        // Its sandbox lets a shell command write only in the workspace and /tmp: the hub,
        // where `baton claim` writes, is added, or the agent could change nothing.
        wake: &[
            Word("codex"),
            Word("exec"),
            Word("--skip-git-repo-check"),
            Word("-s"),
            Word("workspace-write"),
            HubHome("--add-dir"),
            // Nor may it open a socket: the `baton` in its shell could not reach a database.
            OnDatabase(&["-c", "sandbox_workspace_write.network_access=true"]),
            Word("--"),
        ],
        former_wakes: &[&[
            "codex",
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
        ]],
        writable_dir_flag: Some("--add-dir"),
    },
    Definition {
        client: Client::Gemini,
        name: "gemini",
        default_strengths: "reading large codebases, research, long documents, summaries",
        hooks: Some(ClientHooks {
            event_names: ["SessionStart", "BeforeAgent", "AfterAgent"],
            timeout: HookTimeout::Milliseconds(10_000),
            keep_working_decision: "deny",
            // Gemini CLI wants JSON on stdout and nothing else.
            nothing_to_add: "{}\n",
            // `powershell.exe -NoProfile -NonInteractive -Command` (or pwsh) on Windows.
            windows_shell: HookShell::PowerShell,
        }),
        plugin: None,
        // `file_path` may be relative to `cwd`, as the model wrote it.
        edit_guard: EditGuard {
            event_name: "BeforeTool",
            tools: &[
                EditTool {
                    name: "write_file",
                    paths: PathsAt::Field(&["file_path"]),
                },
                EditTool {
                    name: "replace",
                    paths: PathsAt::Field(&["file_path"]),
                },
            ],
            deny: DenyShape::Decision,
        },
        // Headless in a folder the user has not trusted it exits at once (55), and the
        // wake runs in the project's workspace, where the user bound baton to work.
        wake: &[
            Word("gemini"),
            Word("--skip-trust"),
            Word("--approval-mode"),
            Word("auto_edit"),
            Word("-p"),
        ],
        former_wakes: &[&["gemini", "--approval-mode", "auto_edit", "-p"]],
        writable_dir_flag: None,
    },
    Definition {
        client: Client::Opencode,
        name: "opencode",
        default_strengths: "general coding with the model provider of your choice",
        // Its hooks are JavaScript plugins, not shell commands: baton's plugin runs
        // `baton hook` and passes the answer on.
        hooks: None,
        plugin: Some(ClientPlugin {
            file_name: "baton.js",
            source: include_str!("../hooks/opencode/baton.js"),
        }),
        // The plugin's `tool.execute.before` runs before every tool, with no matcher: it
        // asks baton about these tools alone (setup writes their names into the plugin).
        edit_guard: EditGuard {
            event_name: "tool.execute.before",
            tools: &[
                EditTool {
                    name: "edit",
                    paths: PathsAt::Field(&["filePath"]),
                },
                EditTool {
                    name: "write",
                    paths: PathsAt::Field(&["filePath"]),
                },
                EditTool {
                    name: "apply_patch",
                    paths: PathsAt::Patch("patchText"),
                },
            ],
            deny: DenyShape::Plugin,
        },
        wake: &[Word("opencode"), Word("run"), Word("--")],
        former_wakes: &[&["opencode", "run"]],
        writable_dir_flag: None,
    },
];

impl Client {
    pub const ALL: [Client; 4] = [
        Client::Claude,
        Client::Codex,
        Client::Gemini,
        Client::Opencode,
    ];

    fn definition(self) -> &'static Definition {
        DEFINITIONS
            .iter()
            .find(|definition| definition.client == self)
            // Every client has its row; a test walks them all.
            .expect("every client is in DEFINITIONS")
    }

    /// The client's name, which is also its program's name and the default agent name.
    pub fn name(self) -> &'static str {
        self.definition().name
    }

    /// The client named `name`, in any case.
    pub fn from_name(name: &str) -> Option<Client> {
        Client::ALL
            .into_iter()
            .find(|client| client.name().eq_ignore_ascii_case(name))
    }

    /// What the agent is registered as good at until the user says otherwise.
    pub fn default_strengths(self) -> &'static str {
        self.definition().default_strengths
    }

    /// How the client runs shell hooks, or `None` when it has none.
    pub fn hooks(self) -> Option<&'static ClientHooks> {
        self.definition().hooks.as_ref()
    }

    /// The plugin setup installs for the client, or `None` when its hooks are shell hooks
    /// (or it has none).
    pub fn plugin(self) -> Option<&'static ClientPlugin> {
        self.definition().plugin.as_ref()
    }

    /// How the client shows `baton hook pre-edit` a tool call before it edits files.
    pub fn edit_guard(self) -> &'static EditGuard {
        &self.definition().edit_guard
    }

    /// Whether the client runs `baton hook`: through shell hooks, or through baton's plugin.
    pub fn runs_hooks(self) -> bool {
        self.hooks().is_some() || self.plugin().is_some()
    }

    /// The headless command that wakes the agent of the hub home `hub` on this machine, or
    /// (`None`) of a hub reached over HTTP; the supervisor appends the prompt as the last
    /// argument.
    pub fn wake_command(self, hub: Option<&Path>) -> Vec<String> {
        self.wake_command_on(hub, false)
    }

    /// [`Client::wake_command`] for a hub whose state is in a database when `database`.
    pub fn wake_command_on(self, hub: Option<&Path>, database: bool) -> Vec<String> {
        let mut command = Vec::new();
        for word in self.definition().wake {
            match (word, hub) {
                (Word(word), _) => command.push(word.to_string()),
                (OnDatabase(words), Some(_)) if database => {
                    command.extend(words.iter().map(|word| word.to_string()));
                }
                (OnDatabase(_), _) => {}
                (HubHome(flag), Some(hub)) => {
                    command.push(flag.to_string());
                    command.push(
                        std::path::absolute(hub)
                            .unwrap_or_else(|_| hub.to_path_buf())
                            .display()
                            .to_string(),
                    );
                }
                (HubHome(_), None) => {}
            }
        }
        command
    }

    /// The client whose program `argv` runs, by the program's file name.
    pub fn of_command(argv: &[String]) -> Option<Client> {
        let program = Path::new(argv.first()?).file_stem()?.to_str()?;
        Client::from_name(program)
    }

    /// `argv`, a wake command of this client's, that may also write each of `dirs` where
    /// the client's sandbox would keep them read-only (Codex's `--add-dir`, before the `--`
    /// that ends its options); as it is for a client with no such sandbox.
    pub fn wake_writing(self, argv: &[String], dirs: &[std::path::PathBuf]) -> Vec<String> {
        let Some(flag) = self.definition().writable_dir_flag else {
            return argv.to_vec();
        };
        let at = match argv.last().map(String::as_str) {
            Some("--") => argv.len() - 1,
            _ => argv.len(),
        };
        let mut words = argv[..at].to_vec();
        for dir in dirs {
            words.push(flag.to_string());
            words.push(dir.display().to_string());
        }
        words.extend_from_slice(&argv[at..]);
        words
    }

    /// Whether `wake` is a wake command an earlier baton's setup registered for this client
    /// (so not one the user chose).
    pub fn is_former_wake_command(self, wake: &[String]) -> bool {
        self.definition()
            .former_wakes
            .iter()
            .any(|words| words.iter().eq(wake.iter()))
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Client {
    type Err = UnknownClient;

    fn from_str(text: &str) -> Result<Client, UnknownClient> {
        Client::from_name(text.trim()).ok_or_else(|| UnknownClient {
            given: text.to_string(),
        })
    }
}

/// A client name baton does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown client `{given}`; baton can set up {}", Client::ALL.map(|client| client.name()).join(", "))]
pub struct UnknownClient {
    pub given: String,
}

impl ClientHooks {
    /// The client's own name for `event`.
    pub fn event_name(&self, event: HookEvent) -> &'static str {
        self.event_names[event as usize]
    }
}

impl EditGuard {
    /// The `EVENT` of `baton hook EVENT` that guards edits.
    pub const EVENT: &'static str = "pre-edit";

    /// The matcher of the tools that edit files, as the client's settings write it (a
    /// regular expression, `Edit|Write`): the tools' names, each exactly.
    pub fn matcher(&self) -> String {
        let names: Vec<&str> = self.tools.iter().map(|tool| tool.name).collect();
        names.join("|")
    }

    /// The tool called `name`, when it is one the guard looks at.
    pub fn tool(&self, name: &str) -> Option<&'static EditTool> {
        self.tools.iter().find(|tool| tool.name == name)
    }
}

impl HookEvent {
    /// In the order of [`ClientHooks`]' event names.
    pub const ALL: [HookEvent; 3] = [HookEvent::SessionStart, HookEvent::Prompt, HookEvent::Stop];

    /// The `EVENT` of `baton hook EVENT`.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::Prompt => "prompt",
            HookEvent::Stop => "stop",
        }
    }

    /// The event called `name`, in any case: baton's own name, or any client's name for it,
    /// so a hook can be wired by hand with the name the client's documentation uses.
    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|event| {
            event.name().eq_ignore_ascii_case(name)
                || Client::ALL
                    .iter()
                    .filter_map(|client| client.hooks())
                    .any(|hooks| hooks.event_name(*event).eq_ignore_ascii_case(name))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_codex_wake_in_a_worktree_may_write_the_repository_s_git_directories() {
        let words = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let dirs = [
            std::path::PathBuf::from("/repo/.git"),
            std::path::PathBuf::from("/repo/.git/worktrees/T-3"),
        ];
        let codex = Client::Codex.wake_command(Some(Path::new("/hub")));
        assert_eq!(Client::of_command(&codex), Some(Client::Codex));
        assert_eq!(
            Client::Codex.wake_writing(&codex, &dirs),
            words(&[
                "codex",
                "exec",
                "--skip-git-repo-check",
                "-s",
                "workspace-write",
                "--add-dir",
                // The hub's directory as this system spells an absolute path.
                &codex[6],
                "--add-dir",
                "/repo/.git",
                "--add-dir",
                "/repo/.git/worktrees/T-3",
                "--",
            ]),
            "before the `--` the prompt follows"
        );
        // A command of the user's own without `--`: at its end, before the prompt.
        let own = words(&["/usr/local/bin/codex", "exec"]);
        assert_eq!(Client::of_command(&own), Some(Client::Codex));
        assert_eq!(
            Client::Codex.wake_writing(&own, &dirs[..1]),
            words(&["/usr/local/bin/codex", "exec", "--add-dir", "/repo/.git"])
        );
        // The other clients' sandboxes, where they have one, leave git be.
        for client in [Client::Claude, Client::Gemini, Client::Opencode] {
            let wake = client.wake_command(None);
            assert_eq!(Client::of_command(&wake), Some(client));
            assert_eq!(client.wake_writing(&wake, &dirs), wake, "{client}");
        }
        assert_eq!(Client::of_command(&words(&["my-agent"])), None);
    }

    #[test]
    fn every_client_has_one_row_and_events_index_their_names() {
        for client in Client::ALL {
            let rows = DEFINITIONS.iter().filter(|row| row.client == client);
            assert_eq!(rows.count(), 1, "{client}");
        }
        for (index, event) in HookEvent::ALL.into_iter().enumerate() {
            assert_eq!(event as usize, index);
        }
    }

    #[test]
    fn events_go_by_baton_s_name_or_any_client_s_in_any_case() {
        let cases = [
            ("session-start", Some(HookEvent::SessionStart)),
            ("SessionStart", Some(HookEvent::SessionStart)),
            ("sessionstart", Some(HookEvent::SessionStart)),
            ("prompt", Some(HookEvent::Prompt)),
            ("UserPromptSubmit", Some(HookEvent::Prompt)),
            ("BeforeAgent", Some(HookEvent::Prompt)),
            ("stop", Some(HookEvent::Stop)),
            ("STOP", Some(HookEvent::Stop)),
            ("AfterAgent", Some(HookEvent::Stop)),
            ("PreToolUse", None),
            ("session_start", None),
            ("", None),
        ];
        for (name, event) in cases {
            assert_eq!(HookEvent::from_name(name), event, "{name}");
        }
    }

    #[test]
    fn each_edit_guard_matches_the_tools_clients_md_names() {
        let matchers = Client::ALL.map(|client| client.edit_guard().matcher());
        assert_eq!(
            matchers,
            [
                "Edit|Write|MultiEdit|NotebookEdit",
                "apply_patch",
                "write_file|replace",
                "edit|write|apply_patch"
            ]
        );
        assert_eq!(
            Client::Codex
                .edit_guard()
                .tool("apply_patch")
                .unwrap()
                .paths,
            PathsAt::Patch("command")
        );
        assert_eq!(Client::Claude.edit_guard().tool("Bash"), None);
    }

    #[test]
    fn clients_go_by_name_in_any_case() {
        assert_eq!(Client::from_name("Gemini"), Some(Client::Gemini));
        assert_eq!(Client::from_name(" claude"), None);
        assert_eq!(" claude".parse::<Client>().unwrap(), Client::Claude);
        assert_eq!(
            "cursor".parse::<Client>().unwrap_err().to_string(),
            "unknown client `cursor`; baton can set up claude, codex, gemini, opencode"
        );
    }

    #[test]
    fn only_codex_s_wake_command_names_the_hub_and_only_a_local_one() {
        // An absolute path on each system, so it is passed on as written.
        let shown = if cfg!(windows) { r"C:\hub" } else { "/hub" };
        let hub = Path::new(shown);
        assert_eq!(
            Client::Codex.wake_command(Some(hub))[5..],
            ["--add-dir".to_string(), shown.into(), "--".into()]
        );
        assert_eq!(
            Client::Codex.wake_command(None)[4..],
            ["workspace-write".to_string(), "--".into()]
        );
        for client in [Client::Claude, Client::Gemini, Client::Opencode] {
            assert!(!client.wake_command(Some(hub)).contains(&shown.to_string()));
            assert_eq!(client.wake_command(Some(hub)), client.wake_command(None));
        }
    }
}
