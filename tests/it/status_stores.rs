//! `status` and `inbox` say the same, byte for byte, on the files and on PostgreSQL (SPEC
//! sections 4, 5 and 16): a command on PostgreSQL reads a board's tasks as heads and decodes
//! whole only those it shows, pipelines its reads and reads the agent's record once, and what
//! it prints and exits with must not change for it. One board is built by the same commands
//! at the same pinned times on both stores, with every way a task comes to an inbox (to do,
//! changes requested, a question, a review for the sender or a named reviewer, a stalled
//! lease, a dependency that ended), tasks that are nobody's yet (blocked, held by another's
//! reservation), more than a preview's ten, and unread messages.

use crate::common::{Run, TestEnv};

/// When every command of the board's making runs.
const MADE: &str = "2026-12-01T10:00:00Z";
/// When it is looked at: past the 30-minute lease of the tasks claimed at [`MADE`].
const LOOKED: &str = "2026-12-01T11:00:00Z";

fn at(env: &TestEnv, now: &str, agent: &str, args: &[&str]) -> Run {
    env.run_env(agent, args, &[("BATON_NOW", now)])
}

/// The board, made on `env` by the same commands whatever its store.
fn make_board(env: &TestEnv) {
    env.register(&["lead", "dev", "rev"]);
    let made = |agent: &str, args: &[&str]| {
        at(env, MADE, agent, args).ok();
    };
    let send = |to: &str, subject: &str, more: &[&str]| {
        let mut args = vec!["send", "--no-wake", "--to", to, "--subject", subject];
        args.extend_from_slice(more);
        made("lead", &args);
    };
    send("dev", "Parse the dates", &["--priority", "high"]); // T-1: a question
    send(
        "dev",
        "Fix the lexer",
        &["--body", "It drops the last token."],
    ); // T-2: review
    send("dev", "Then ship", &["--after", "2"]); // T-3: blocked
    send("rev", "Look at the old API", &[]); // T-4: canceled
    send("dev", "Port the old API", &["--after", "4"]); // T-5: dependency ended
    send("dev", "Reviewed by rev", &["--reviewer", "rev"]); // T-6: rev's review
    send("dev", "Claimed and gone quiet", &[]); // T-7: stalled
    send("rev", "Reserve the sources", &["--touches", "src/**"]); // T-8
    send(
        "dev",
        "Touch the sources",
        &["--files", "src/a.rs", "--touches", "src/a.rs"],
    ); // T-9
    send("dev", "Send back", &["--review"]); // T-10: changes requested
    for n in 0..12 {
        let priority = ["low", "normal", "urgent"][n % 3];
        let subject = format!("Chore {n}: \"quoted\", naïve");
        let body = format!("Line one\nline two \u{1b}[31mred {n}");
        send("dev", &subject, &["--priority", priority, "--body", &body]);
    }
    made("dev", &["claim", "1"]);
    made("dev", &["ask", "1", "--body", "Which calendar?"]);
    made("dev", &["claim", "2"]);
    made("dev", &["review", "2", "--body", "Done, see the test."]);
    made("lead", &["cancel", "4"]);
    made("dev", &["claim", "6"]);
    made("dev", &["review", "6", "--body", "Please look."]);
    made("dev", &["claim", "7"]);
    made("rev", &["claim", "8"]);
    made("dev", &["claim", "10"]);
    made("dev", &["review", "10", "--body", "First go."]);
    made("lead", &["request-changes", "10", "--body", "Not yet."]);
    made("lead", &["msg", "--to", "dev", "Standup at noon"]);
    made("rev", &["msg", "--to", "dev", "Ping me when T-9 is free"]);
}

/// Everything a look prints and exits with, in order, each agent in turn (a look records
/// what it showed as seen, and an agent's look renews its due leases: the next look sees
/// that, on both stores alike).
fn looks(env: &TestEnv) -> Vec<(String, i32, String)> {
    let mut seen = Vec::new();
    for agent in ["dev", "lead", "rev", "dev", "lead"] {
        for args in [
            &["status"][..],
            &["status", "--json"],
            &["status", "--quiet"],
            &["inbox", "--peek", "--json"],
        ] {
            let run = at(env, LOOKED, agent, args);
            seen.push((format!("{agent} {}", args.join(" ")), run.code, run.stdout));
        }
    }
    seen
}

#[test]
fn status_and_inbox_print_the_same_on_the_files_and_on_postgresql() {
    let mut files = TestEnv::new();
    files.store_url = None;
    let Some(postgres) = TestEnv::on_postgres() else {
        return;
    };
    make_board(&files);
    make_board(&postgres);
    let on_files = looks(&files);
    let on_postgres = looks(&postgres);
    // The board holds what the looks are about.
    // dev: the twelve chores (urgent first) and T-10 sent back; not T-3 (blocked), T-7
    // (claimed) nor T-9 (held by rev's reservation of src/**).
    assert_eq!(
        on_files[0].2,
        "baton: 13 tasks and 2 unread messages for dev in default (T-13 to do; T-16 to do; \
         T-19 to do; T-22 to do; T-10 changes requested; +8 more); run `baton inbox`\n"
    );
    let lead = &on_files[4].2;
    for reason in ["question", "review", "stalled", "T-5"] {
        assert!(
            lead.contains(reason),
            "lead's status names {reason}: {lead}"
        );
    }
    for ((what, code, text), (_, pg_code, pg_text)) in on_files.iter().zip(&on_postgres) {
        assert_eq!(code, pg_code, "{what}: exit codes differ");
        assert_eq!(text, pg_text, "{what}: the files and PostgreSQL differ");
    }
}
