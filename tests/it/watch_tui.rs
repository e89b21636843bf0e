//! The terminal board (`baton watch` on a terminal, SPEC section 15), driven through a
//! pseudo-terminal as a person would: it sees what the CLI does, and its keys act.
//!
//! The test reads what the board writes and keeps an 80x24 screen of it (a small terminal:
//! cursor moves and text; colours and modes are skipped), because a redraw writes only the
//! cells that changed and a string can arrive in pieces.

use std::fs::File;
use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use nix::pty::{Winsize, openpty};

use crate::common::http::{Served, add_token};
use crate::common::{TestEnv, eventually_seeing, task_in};

const ROWS: usize = 24;
const COLUMNS: usize = 80;
/// Generous, for a machine under load: the waits end as soon as the screen shows it.
const DEADLINE: Duration = Duration::from_secs(60);

/// A screen kept from the bytes a program writes to its terminal.
struct Screen {
    cells: Vec<Vec<char>>,
    row: usize,
    column: usize,
    /// Every byte written so far, for the failure message and the last look.
    written: Vec<u8>,
}

impl Screen {
    fn new() -> Screen {
        Screen {
            cells: vec![vec![' '; COLUMNS]; ROWS],
            row: 0,
            column: 0,
            written: Vec::new(),
        }
    }

    /// Takes more bytes and draws the screen again from all of them (a sequence may be cut
    /// between two reads, and the whole output is small).
    fn take(&mut self, bytes: &[u8]) {
        self.written.extend_from_slice(bytes);
        self.cells = vec![vec![' '; COLUMNS]; ROWS];
        self.row = 0;
        self.column = 0;
        let text = String::from_utf8_lossy(&self.written).into_owned();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\u{1b}' => match chars.next() {
                    Some('[') => {
                        let mut parameters = String::new();
                        for c in chars.by_ref() {
                            if ('\u{40}'..='\u{7e}').contains(&c) {
                                self.control(&parameters, c);
                                break;
                            }
                            parameters.push(c);
                        }
                    }
                    // An operating system command, to BEL or ST.
                    Some(']') => {
                        while let Some(c) = chars.next() {
                            if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some())
                            {
                                break;
                            }
                        }
                    }
                    Some('(' | ')') => {
                        chars.next();
                    }
                    _ => {}
                },
                '\r' => self.column = 0,
                '\n' => self.row = (self.row + 1).min(ROWS - 1),
                c if c.is_control() => {}
                c => {
                    if self.column < COLUMNS {
                        self.cells[self.row][self.column] = c;
                    }
                    self.column += 1;
                }
            }
        }
    }

    fn control(&mut self, parameters: &str, command: char) {
        let numbers: Vec<usize> = parameters
            .split(';')
            .map(|number| number.parse().unwrap_or(0))
            .collect();
        let first = numbers.first().copied().unwrap_or(0).max(1);
        match command {
            'H' | 'f' => {
                let column = numbers.get(1).copied().unwrap_or(0).max(1);
                self.row = (first - 1).min(ROWS - 1);
                self.column = (column - 1).min(COLUMNS - 1);
            }
            'G' => self.column = (first - 1).min(COLUMNS - 1),
            'J' if parameters == "2" || parameters == "3" => {
                self.cells = vec![vec![' '; COLUMNS]; ROWS];
            }
            'K' => {
                for cell in &mut self.cells[self.row][self.column.min(COLUMNS)..] {
                    *cell = ' ';
                }
            }
            _ => {}
        }
    }

    fn text(&self) -> String {
        self.cells
            .iter()
            .map(|row| row.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `baton watch` running in a pseudo-terminal, and the screen it drew.
struct Board {
    child: Child,
    terminal: File,
    output: Receiver<Vec<u8>>,
    screen: Screen,
}

impl Board {
    fn start(env: &TestEnv, agent: &str) -> Board {
        Board::start_with(env, agent, &[])
    }

    /// `baton --as AGENT watch` with `vars` set in its environment.
    fn start_with(env: &TestEnv, agent: &str, vars: &[(&str, &str)]) -> Board {
        let size = Winsize {
            ws_row: ROWS as u16,
            ws_col: COLUMNS as u16,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = openpty(&size, None).expect("a pseudo-terminal");
        let mut command = env.command(&env.work());
        command
            .args(["--as", agent, "watch"])
            .env("TERM", "xterm-256color")
            .envs(vars.iter().copied())
            .stdin(Stdio::from(
                pty.slave.try_clone().expect("a copy of the pty"),
            ))
            .stdout(Stdio::from(
                pty.slave.try_clone().expect("a copy of the pty"),
            ))
            .stderr(Stdio::from(pty.slave));
        let child = command.spawn().expect("baton watch starts");
        // The command held the last copies of the slave side: once the child is gone, a read
        // of the master ends.
        drop(command);
        let terminal = File::from(pty.master);
        let mut reader = terminal.try_clone().expect("a copy of the pty");
        let (sender, output) = mpsc::channel();
        thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while let Ok(read @ 1..) = reader.read(&mut buffer) {
                if sender.send(buffer[..read].to_vec()).is_err() {
                    return;
                }
            }
        });
        Board {
            child,
            terminal,
            output,
            screen: Screen::new(),
        }
    }

    /// Waits until the screen shows `text`; returns how long that took.
    #[track_caller]
    fn wait_for(&mut self, text: &str) -> Duration {
        let started = Instant::now();
        loop {
            if self.screen.text().contains(text) {
                return started.elapsed();
            }
            let left = DEADLINE.saturating_sub(started.elapsed());
            match self.output.recv_timeout(left) {
                Ok(bytes) => self.screen.take(&bytes),
                Err(_) => panic!(
                    "the board never showed {text:?}; the screen:\n{}",
                    self.screen.text()
                ),
            }
        }
    }

    /// Waits until the screen passes `check` (a redraw may arrive in pieces); `what` says
    /// what it waits for.
    #[track_caller]
    fn wait_until(&mut self, what: &str, check: impl Fn(&str) -> bool) {
        let started = Instant::now();
        loop {
            if check(&self.screen.text()) {
                return;
            }
            let left = DEADLINE.saturating_sub(started.elapsed());
            match self.output.recv_timeout(left) {
                Ok(bytes) => self.screen.take(&bytes),
                Err(_) => panic!(
                    "the board never showed {what}; the screen:\n{}",
                    self.screen.text()
                ),
            }
        }
    }

    fn press(&mut self, keys: &str) {
        self.terminal
            .write_all(keys.as_bytes())
            .expect("keys reach the board");
    }

    /// Waits for the board to end by itself, reading the rest of what it wrote.
    fn wait_for_exit(&mut self) -> i32 {
        while let Ok(bytes) = self.output.recv_timeout(DEADLINE) {
            self.screen.take(&bytes);
        }
        let status = self.child.wait().expect("baton watch ends");
        status.code().unwrap_or(-1)
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_terminal_board_shows_a_sent_task_and_completes_a_review_by_keys() {
    let env = TestEnv::new();
    env.register(&["boss", "worker"]);
    let mut board = Board::start(&env, "boss");
    board.wait_for("1:board");
    board.wait_for("no tasks here");

    let id = env.send("boss", "worker", "pty-shown-subject", &["--review"]);
    let shown_after = board.wait_for("pty-shown-subject");
    // A figure to read, not a bound (STYLE rule 11).
    println!("the board showed the sent task {shown_after:?} after the send returned");

    env.run("worker", &["claim", &id.to_string()]).ok();
    env.run("worker", &["review", &id.to_string(), "-b", "ready"])
        .ok();
    board.wait_for(&format!("T-{id} review_requested"));

    // y approves the selected task: the prompt asks for an optional note, Enter sends it.
    board.press("y");
    board.wait_for(&format!("approve T-{id}"));
    board.press("looks good\r");
    board.wait_for(&format!("T-{id} completed"));

    let tasks = env.run("boss", &["--json", "board", "--all"]).json();
    let task = task_in(&tasks, id);
    assert_eq!(task["status"], "completed", "{task}");
    // The approval is the human's, with the note typed at the prompt.
    let last = task["thread"].as_array().and_then(|thread| thread.last());
    let last = last.expect("a thread");
    assert_eq!(
        (&last["by"], &last["kind"], &last["text"]),
        (&"boss".into(), &"approval".into(), &"looks good".into()),
        "{task}"
    );

    // q quits and gives the terminal back: the alternate screen left, the cursor shown.
    board.press("q");
    assert_eq!(board.wait_for_exit(), 0);
    let written = String::from_utf8_lossy(&board.screen.written).into_owned();
    assert!(is_restored(&written), "{written:?}");
}

#[test]
fn on_another_machine_the_board_follows_the_hub_and_its_keys_act_there() {
    let hub = TestEnv::new();
    hub.register(&["alice", "codex"]);
    let token = add_token(&hub, "alice");
    let served = Served::start(&hub, "alice");
    let url = format!("http://{}", served.address);
    let here = TestEnv::new();
    let mut board = Board::start_with(
        &here,
        "alice",
        &[("BATON_URL", &url), ("BATON_TOKEN", &token)],
    );
    board.wait_for("as alice");

    let id = hub.send("alice", "codex", "sent-on-the-hub", &["--review"]);
    board.wait_for("sent-on-the-hub");
    hub.run("codex", &["claim", &id.to_string()]).ok();
    hub.run("codex", &["review", &id.to_string(), "-b", "ready"])
        .ok();
    board.wait_for(&format!("T-{id} review_requested"));
    board.press("y");
    board.wait_for(&format!("approve T-{id}"));
    board.press("\r");
    board.wait_for(&format!("T-{id} completed"));
    let tasks = hub.run("alice", &["--json", "board", "--all"]).json();
    assert_eq!(task_in(&tasks, id)["status"], "completed");

    // Messages through the hub: one sent from the board arrives, one received shows.
    board.press("m");
    board.wait_for("message to agent (or @all):");
    board.press("codex\r");
    board.wait_for("message to codex:");
    board.press("thanks-from-afar\r");
    board.wait_for("message #");
    let mail = hub.run("codex", &["messages"]).ok().to_string();
    assert!(mail.contains("thanks-from-afar"), "{mail}");
    hub.run("codex", &["msg", "--to", "alice", "welcome-from-the-hub"])
        .ok();
    board.wait_for("3:messages(1)");
    board.press("3");
    board.wait_for("welcome-from-the-hub");
    board.press("q");
    assert_eq!(board.wait_for_exit(), 0);
}

/// Two hubs on one home: the board follows the first; killed, the board carries on through
/// the second and its notice line says so, naming it, as `watch` says it on stderr.
#[test]
fn when_its_hub_dies_the_board_names_the_hub_it_follows_next() {
    let hub = TestEnv::new();
    hub.register(&["alice", "codex"]);
    let token = add_token(&hub, "alice");
    let first = Served::start(&hub, "alice");
    let second = Served::start(&hub, "alice");
    let urls = format!("http://{},http://{}", first.address, second.address);
    let here = TestEnv::new();
    let mut board = Board::start_with(
        &here,
        "alice",
        &[("BATON_URL", &urls), ("BATON_TOKEN", &token)],
    );
    board.wait_for("as alice");
    hub.send("alice", "codex", "before-the-kill", &[]);
    board.wait_for("before-the-kill");
    first.kill();
    board.wait_for(&format!(
        "baton: connected again, to the hub at http://{}",
        second.address
    ));
    hub.send("alice", "codex", "after-the-kill", &[]);
    board.wait_for("after-the-kill");
    board.press("q");
    assert_eq!(board.wait_for_exit(), 0);
}

#[test]
fn slash_searches_the_board_for_words_and_esc_shows_every_task_again() {
    let env = TestEnv::new();
    env.register(&["boss", "worker"]);
    env.send("boss", "worker", "Fix the parser", &[]);
    env.send("boss", "worker", "Fix the lexer", &[]);
    env.send(
        "boss",
        "worker",
        "Write the docs",
        &["--body", "about the PARSER"],
    );
    let mut board = Board::start(&env, "boss");
    board.wait_for("Write the docs");
    board.wait_for("Fix the lexer");
    board.press("/");
    board.wait_for("search subjects, bodies, threads:");
    board.press("parser\r");
    // The tasks holding the words, in the subject or the body, case aside; the footer
    // says a search is on.
    board.wait_until("the board searched for `parser`", |screen| {
        screen.contains("/ search: parser")
            && screen.contains("Fix the parser")
            && screen.contains("Write the docs")
            && !screen.contains("Fix the lexer")
    });
    let footer = board
        .screen
        .text()
        .lines()
        .nth(23)
        .unwrap_or_default()
        .to_string();
    assert!(
        footer.starts_with("? help  q quit  / search: parser"),
        "{footer:?}"
    );
    // A task sent now that does not hold them stays off the board.
    env.send("boss", "worker", "Fix the tokenizer", &[]);
    env.send("boss", "worker", "Parser errors", &[]);
    board.wait_for("Parser errors");
    assert!(
        !board.screen.text().contains("tokenizer"),
        "{}",
        board.screen.text()
    );
    // `/` and Esc: every task again.
    board.press("/");
    board.wait_for("search subjects, bodies, threads: parser");
    board.press("\u{1b}");
    board.wait_until("every task again", |screen| {
        screen.contains("Fix the lexer")
            && screen.contains("Fix the tokenizer")
            && !screen.contains("search: parser")
    });
    board.press("q");
    assert_eq!(board.wait_for_exit(), 0);
}

#[test]
fn a_key_the_task_does_not_offer_is_refused_in_the_clis_words_before_any_prompt() {
    let env = TestEnv::new();
    env.register(&["boss", "worker"]);
    let id = env.send("boss", "worker", "not yours to approve", &[]);
    let mut board = Board::start(&env, "worker");
    board.wait_for("not yours to approve");
    // The worker cannot approve a task nobody asked it to review: the CLI's refusal, at
    // once, with no words asked for first.
    board.press("y");
    board.wait_for("error: ");
    let cli = env.run("worker", &["approve", &id.to_string()]);
    let refusal = cli.fails(1).lines().next().expect("a line").to_string();
    // As much of it as an 80-column status line holds.
    let start: String = refusal.chars().take(60).collect();
    board.wait_for(&start);
    assert!(
        !board.screen.text().contains(&format!("approve T-{id}")),
        "a prompt was opened:\n{}",
        board.screen.text()
    );
    board.press("q");
    assert_eq!(board.wait_for_exit(), 0);
}

#[test]
fn a_human_assignee_claims_and_finishes_a_task_by_keys() {
    let env = TestEnv::new();
    env.register(&["boss", "alice"]);
    let id = env.send("boss", "alice", "for-alice-by-keys", &[]);
    let mut board = Board::start(&env, "alice");
    board.wait_for("for-alice-by-keys");
    // It waits in alice's inbox, and the footer offers the assignee's keys.
    board.wait_for("2:inbox(1)");
    board.wait_for("c claim");
    board.press("c");
    board.wait_for(&format!("T-{id} working: for-alice-by-keys"));
    // Claimed, it is no longer in the inbox: alice is on it.
    board.wait_for("2:inbox 3:messages");
    board.press("d");
    board.wait_for(&format!("done T-{id}, result:"));
    board.press("shipped it\r");
    board.wait_for(&format!("T-{id} completed"));
    let tasks = env.run("boss", &["--json", "board", "--all"]).json();
    let task = task_in(&tasks, id);
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"], "shipped it", "{task}");
    let kinds: Vec<&str> = crate::common::thread_kinds(&task);
    assert!(
        kinds.contains(&"claim") && kinds.contains(&"result"),
        "{task}"
    );
    board.press("q");
    assert_eq!(board.wait_for_exit(), 0);
}

#[test]
fn cancel_needs_a_confirmation_and_escape_says_nothing_done() {
    let env = TestEnv::new();
    env.register(&["boss", "worker"]);
    let id = env.send("boss", "worker", "maybe-not-needed", &[]);
    let status =
        || task_in(&env.run("boss", &["--json", "board", "--all"]).json(), id)["status"].clone();
    let mut board = Board::start(&env, "boss");
    board.wait_for("maybe-not-needed");
    board.press("x");
    board.wait_for(&format!("cancel T-{id}, reason"));
    board.press("stale\r");
    board.wait_for(&format!("cancel T-{id} for good?"));
    // Esc at the confirmation: nothing is done, and the board says so.
    board.press("\u{1b}");
    board.wait_for(&format!("nothing done: T-{id} stays pending"));
    assert_eq!(status(), "pending");
    // Esc at the reason too.
    board.press("x");
    board.wait_for(&format!("cancel T-{id}, reason"));
    board.press("why\u{1b}");
    board.wait_for(&format!("nothing done: T-{id} stays pending"));
    assert_eq!(status(), "pending");
    // y at the confirmation cancels it.
    board.press("x");
    board.wait_for(&format!("cancel T-{id}, reason"));
    board.press("stale\r");
    board.wait_for(&format!("cancel T-{id} for good?"));
    board.press("y");
    board.wait_for(&format!("T-{id} canceled"));
    assert_eq!(status(), "canceled");
    board.press("q");
    assert_eq!(board.wait_for_exit(), 0);
}

#[test]
fn a_message_sent_from_the_board_arrives_and_one_received_is_read_there() {
    let env = TestEnv::new();
    env.register(&["boss", "worker"]);
    let mut board = Board::start(&env, "boss");
    board.wait_for("1:board");
    // m asks for the receiver; Tab offers the agents but boss, in turn.
    board.press("m");
    board.wait_for("message to agent (or @all):");
    board.press("\t");
    board.wait_for("message to agent (or @all): worker");
    board.press("\r");
    board.wait_for("message to worker:");
    board.press("hello from the board\r");
    board.wait_for("message #1 (text) sent");
    let mail = env.run("worker", &["messages"]).ok().to_string();
    assert!(
        mail.contains("from boss to worker") && mail.contains("hello from the board"),
        "{mail}"
    );

    // One for boss: counted in the header, shown in the messages view, then read.
    env.run("worker", &["msg", "--to", "boss", "a-reply-for-boss"])
        .ok();
    board.wait_for("3:messages(1)");
    board.press("3");
    board.wait_for("a-reply-for-boss");
    board.wait_for("* #2 from worker to boss");
    eventually_seeing(DEADLINE, "boss's message marked read", || {
        let unread = env.run("boss", &["--json", "messages", "--peek"]).json();
        if unread["messages"].as_array().is_some_and(Vec::is_empty) {
            Ok(())
        } else {
            Err(unread.to_string())
        }
    });
    board.press("q");
    assert_eq!(board.wait_for_exit(), 0);
}

#[test]
fn sigterm_ends_the_board_and_gives_the_terminal_back() {
    ends_on(nix::sys::signal::Signal::SIGTERM);
}

#[test]
fn sigint_ends_the_board_and_gives_the_terminal_back() {
    // In raw mode Ctrl-C is a key, but `kill -INT` from elsewhere is still a signal.
    ends_on(nix::sys::signal::Signal::SIGINT);
}

#[test]
fn sigquit_ends_the_board_and_gives_the_terminal_back() {
    ends_on(nix::sys::signal::Signal::SIGQUIT);
}

/// The board, sent `signal` once it shows, ends by itself and gives the terminal back.
fn ends_on(signal: nix::sys::signal::Signal) {
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    let env = TestEnv::new();
    env.register(&["boss"]);
    let mut board = Board::start(&env, "boss");
    board.wait_for("1:board");
    let pid = Pid::from_raw(i32::try_from(board.child.id()).expect("a pid"));
    kill(pid, signal).expect("the signal is sent");
    assert_eq!(board.wait_for_exit(), 0, "after {signal}");
    let written = String::from_utf8_lossy(&board.screen.written).into_owned();
    assert!(is_restored(&written), "after {signal}: {written:?}");
}

/// Whether the terminal was given back at the end: the main screen after the last switch to
/// the alternate one, and the cursor shown.
fn is_restored(written: &str) -> bool {
    let Some(left_at) = written.rfind("\u{1b}[?1049l") else {
        return false;
    };
    written.rfind("\u{1b}[?1049h") < Some(left_at) && written[left_at..].contains("\u{1b}[?25h")
}

#[test]
fn the_task_view_shows_the_tasks_diff_escaped() {
    let env = TestEnv::new();
    env.register(&["boss", "worker"]);
    let work = env.work();
    crate::common::git::repository(&env, &work);
    env.init_project("boss", "app", &work);
    env.run("boss", &["project", "set", "--worktrees", "on"])
        .ok();
    let id = env.send("boss", "worker", "diffed-task", &[]);
    env.run("worker", &["claim", &id.to_string()]).ok();
    let shown = env.run("boss", &["--json", "show", &id.to_string()]).json();
    let tree = std::path::PathBuf::from(shown["worktree"]["path"].as_str().expect("a worktree"));
    std::fs::write(tree.join("evil.txt"), "\u{1b}[2Jhostile-line \u{202e}x\n").unwrap();
    crate::common::git::git(&env, &tree, &["add", "-A"], &[]).ok();
    crate::common::git::git(&env, &tree, &["commit", "-q", "-m", "evil"], &[]).ok();

    let mut board = Board::start(&env, "boss");
    board.wait_for("diffed-task");
    board.press("\r");
    board.wait_for("diff:");
    // Down to the end of the task view, where the hunks are.
    for _ in 0..4 {
        board.press("\u{1b}[6~");
    }
    board.wait_for("evil.txt | +1 -0");
    // Drawn as text: a raw escape would have cleared the screen rather than show.
    board.wait_for("+\\u{1b}[2Jhostile-line \\u{202e}x");
    board.press("q");
    assert_eq!(board.wait_for_exit(), 0);
}
