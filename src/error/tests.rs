//! The words the faces spell (flags on the command line): the command line's are the
//! words baton has always printed, byte for byte; a tool call names arguments instead.

use std::path::{Path, PathBuf};

use super::*;

/// `error` as the CLI prints it (`error: …`, `hint: …`) and as a tool call tells it.
fn told(error: impl Into<Error>) -> [(String, Option<String>); 2] {
    let error = error.into();
    [Face::Cli, Face::Tool].map(|face| (error.message(face), error.hint_for(face)))
}

#[test]
fn the_command_line_reads_the_flags_as_before_and_a_tool_call_their_arguments() {
    let [cli, tool] = told(ProjectError::NoContextWords);
    assert_eq!(cli.0, "context --add needs some words");
    assert_eq!(tool.0, "context `add` needs some words");
    assert_eq!(
        ProjectError::NoContextWords.to_string(),
        "context --add needs some words"
    );

    let [cli, tool] = told(AlertError::NoKind {
        kinds: vec!["question", "stall"],
    });
    assert_eq!(cli.0, "--on names no kind");
    assert_eq!(
        cli.1.as_deref(),
        Some("--on takes some of question,stall, between commas")
    );
    assert_eq!(tool.0, "`on` names no kind");

    let [cli, _] = told(AlertError::NoHost {
        field: AlertUrl::BoardUrl,
        url: "http://".into(),
    });
    assert_eq!(cli.0, "--board-url http:// names no host");
    assert_eq!(
        cli.1.as_deref(),
        Some("--board-url takes an http:// or https:// address, such as https://ntfy.sh/TOPIC")
    );

    let [cli, _] = told(RegistryError::WakeNeedsCommand);
    assert_eq!(cli.0, "--wake needs a command after `--`");

    let [cli, _] = told(SetupError::OneAgentManyClients {
        agent: "codex".into(),
        clients: 2,
    });
    assert_eq!(
        cli.0,
        "--as codex names one agent, but 2 clients were asked for"
    );
    assert_eq!(
        cli.1.as_deref(),
        Some("each client is its own agent: set them up one at a time with --client and --as")
    );

    let [cli, _] = told(SetupError::ListenServiceClients { clients: 3 });
    assert_eq!(
        cli.1.as_deref(),
        Some(
            "wire the clients first, then run setup again for the one to wake with --client \
             NAME --listen-service"
        )
    );

    let [cli, tool] = told(ProjectError::CurrentDirGone);
    assert_eq!(cli, tool, "the process was started with its flags");
    assert_eq!(
        cli.1.as_deref(),
        Some("cd into a directory that exists, or pass --project ID")
    );
}

#[test]
fn a_hub_of_a_list_is_named_by_its_place_with_its_own_hint() {
    let error = Error::from(RemoteError::InList {
        refused: Box::new(RemoteError::NotUrl { url: "hub".into() }),
        place: 2,
        count: 3,
    });
    assert_eq!(error.to_string(), "BATON_URL hub is not a URL (hub 2 of 3)");
    assert_eq!(
        error.hint().as_deref(),
        Some(
            "e.g. BATON_URL=http://buildbox:7878 (what `baton serve` printed, without the #token)"
        )
    );
    assert_eq!(error.exit_code(), 1);
}

#[test]
fn the_domains_refusals_exit_1_and_keep_their_words_when_told_again() {
    let errors: Vec<Error> = vec![
        ProjectError::Exists {
            project: "api".into(),
        }
        .into(),
        TokenError::NoToken {
            agent: "codex".into(),
            holders: Vec::new(),
        }
        .into(),
        WakeError::WokenAlready {
            agent: "codex".into(),
            lock: PathBuf::from("/home/wake/codex.lock"),
        }
        .into(),
        SessionError::NoNoteWords.into(),
    ];
    for error in errors {
        assert_eq!(error.exit_code(), 1, "{error}");
        let again = error.duplicate();
        assert_eq!(again.to_string(), error.to_string());
        assert_eq!(again.hint(), error.hint());
    }
    assert_eq!(
        Error::from(TokenError::NoToken {
            agent: "codex".into(),
            holders: Vec::new(),
        })
        .to_string(),
        "agent codex has no token; agents with tokens: none yet"
    );
}

/// What was damaged chooses the hint, wherever it is kept: a board file's names its backup,
/// a board in a database has none to name, an agent's record names the agent.
#[test]
fn the_hint_for_damage_is_chosen_by_what_was_damaged() {
    let board = || Stored::Board {
        project: "app".into(),
    };
    let in_database = |what: Stored| Origin {
        place: Place::Database {
            store: "postgres://baton@db/baton".into(),
            name: what.name(),
        },
        what,
    };
    let damaged = |origin: Origin| {
        Error::from(StoreError::Corrupt {
            origin,
            detail: "expected value".into(),
        })
    };

    let file = damaged(Origin::file(
        board(),
        Path::new("/hub/projects/app/board.json"),
    ));
    assert_eq!(
        file.to_string(),
        "/hub/projects/app/board.json is unreadable: expected value"
    );
    assert!(file.hint().unwrap().contains("board.json.bak"));
    let row = damaged(in_database(board()));
    assert_eq!(
        row.to_string(),
        "postgres://baton@db/baton#projects/app/board is unreadable: expected value"
    );
    let hint = row.hint().unwrap();
    assert!(
        hint.contains("doctor --restore") && !hint.contains(".bak"),
        "{hint}"
    );

    let agent = Stored::Document(Document::Agent("bob".into()));
    for error in [
        damaged(in_database(agent.clone())),
        damaged(Origin::file(agent, Path::new("/hub/agents/bob.json"))),
    ] {
        assert!(
            error.hint().unwrap().contains("baton agent rm bob"),
            "{error}"
        );
    }

    // A board the model refuses is named by the store that keeps it.
    let refused = Error::from(StoreError::board(
        Origin::file(board(), Path::new("/hub/projects/app/board.json")),
        BoardError::DuplicateId { task: TaskId(3) },
    ));
    assert_eq!(
        refused.to_string(),
        "T-3 is the id of more than one task in /hub/projects/app/board.json; baton will not \
         guess which is meant"
    );
    assert!(
        refused
            .hint()
            .unwrap()
            .contains("in /hub/projects/app/board.json by hand")
    );
    assert_eq!(refused.exit_code(), 4);
}
