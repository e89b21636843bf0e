//! A board written to its file and read back: the same tasks, in serde_json's bytes, with
//! unchanged tasks copied as they were read.

use proptest::prelude::*;
use serde::Serialize;

use super::super::board::{origin, parse, parse_strict, read_path, write_board};
use crate::board::Board;
use crate::board::action::ActionKind;
use crate::board::task::{self, Head, Priority, Status, Task, TaskId};
use crate::board::testing::{new_task, pending_board, start, step, take};
use crate::time::Timestamp;

/// The board as the file store writes it.
fn written(board: &Board) -> Vec<u8> {
    let mut text = Vec::new();
    write_board(&mut text, board).unwrap();
    text
}

#[test]
fn tasks_read_again_from_the_file_in_any_order_are_the_tasks_written() {
    // Many small tasks and a few larger than what is read at once, so reads hit, miss
    // and straddle the stretch of the file held.
    let mut board = pending_board(400);
    for id in (1..=400).step_by(97) {
        let body = "é".repeat(32 * 1024 + id as usize);
        board.modify(TaskId(id), |task| task.body = body).unwrap();
    }
    let text = written(&board);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("board.json");
    std::fs::write(&path, &text).unwrap();
    let ids: Vec<TaskId> = board.heads().map(|head| head.id).collect();
    for order in [ids.clone(), ids.iter().rev().copied().collect()] {
        let from_file = read_path(path.clone(), "p").unwrap();
        for id in order {
            let read = from_file.task_owned(id).unwrap().unwrap();
            assert_eq!(Some(&read), board.task(id).unwrap(), "{id}");
        }
    }
}

/// Pretty JSON of the whole board the plain serde way: what baton wrote before it
/// learned to copy unchanged tasks, and must still write byte for byte.
fn serde_pretty(board: &Board) -> Vec<u8> {
    #[derive(Serialize)]
    struct Plain<'a> {
        schema: u32,
        project: &'a str,
        next_id: u64,
        tasks: Vec<&'a Task>,
    }
    let plain = Plain {
        schema: board.schema,
        project: &board.project,
        next_id: board.next_id,
        tasks: board.tasks().map(Result::unwrap).collect(),
    };
    let mut text = serde_json::to_vec_pretty(&plain).unwrap();
    text.push(b'\n');
    text
}

#[test]
fn boards_are_written_as_serde_json_writes_them_pretty() {
    let now: Timestamp = "2026-11-29T12:00:00.123Z".parse().unwrap();
    let mut board = Board::new("p");
    assert_eq!(written(&board), serde_pretty(&board));
    for _ in 0..3 {
        new_task(&mut board, "ada", "bob", false, vec![], now);
    }
    board
        .modify(TaskId(2), |task| {
            task.subject = "quotes \" and \\ and ünïcode and \n newline".into();
            task.thread.push(task::ThreadEntry {
                at: now,
                by: "ada".into(),
                kind: ActionKind::Ask,
                text: "why?".into(),
            });
            task.after = vec![TaskId(1)];
        })
        .unwrap();
    let text = written(&board);
    assert_eq!(
        String::from_utf8_lossy(&text),
        String::from_utf8_lossy(&serde_pretty(&board))
    );
    // Read back, then changed in the middle: still the same bytes as serde's.
    let path = std::path::Path::new("/hub/projects/p/board.json");
    let mut reread = parse(&origin("p", path), &text).unwrap();
    reread
        .modify(TaskId(2), |task| task.status = Status::Working)
        .unwrap();
    new_task(&mut reread, "bob", "ada", true, vec![], now);
    assert_eq!(written(&reread), serde_pretty(&reread));
}

#[test]
fn unchanged_tasks_keep_their_bytes_and_changed_ones_are_written_anew() {
    let text = r#"{"schema":1,"next_id":3,"project":"p","extra":[1],"tasks":[
{"id":1,"subject":"hand\u0020made","from":"ada","to":"bob","status":"pending",
 "created_at":"2026-11-29T12:00:00Z","updated_at":"2026-11-29T12:00:00Z","kept":{"a":1}} ,
{"id":2,"subject":"two","from":"ada","to":"bob","status":"pending","priority":"high",
 "created_at":"2026-11-29T12:00:00.000Z","updated_at":"2026-11-29T12:00:00.000Z"}]}"#;
    let path = std::path::Path::new("/hub/projects/p/board.json");
    let mut board = parse(&origin("p", path), text.as_bytes()).unwrap();
    assert_eq!(board.task(TaskId(1)).unwrap().unwrap().subject, "hand made");
    board
        .modify(TaskId(2), |task| task.status = Status::Working)
        .unwrap();
    let out = String::from_utf8(written(&board)).unwrap();
    let first = &text[text.find("{\"id\":1").unwrap()..text.find("} ,").unwrap() + 1];
    assert!(out.contains(first), "task 1 copied as it was:\n{out}");
    assert!(out.contains("\"status\": \"working\""), "{out}");
    let reread = parse(&origin("p", path), out.as_bytes()).unwrap();
    assert_eq!(reread, board);
    assert_eq!(reread.head(TaskId(2)).unwrap().priority, Priority::High);
}

#[test]
fn a_board_read_from_its_file_lets_a_write_replace_the_file_and_reads_on() {
    // As a command does: the board is read, and written while it is still in use.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("board.json");
    std::fs::write(&path, written(&pending_board(2))).unwrap();
    let read = read_path(path.clone(), "p").unwrap();
    let mut next = read.clone();
    next.modify(TaskId(2), |task| task.subject = "changed".into())
        .unwrap();
    // Refused on Windows (under Wine, say) were the board holding its file open.
    let backup = dir.path().join("board.json.bak");
    crate::file::atomic::replace(&path, &written(&next), Some(&backup)).unwrap();
    let subjects = |board: &Board| -> Vec<String> {
        board
            .tasks()
            .map(|task| task.unwrap().subject.clone())
            .collect()
    };
    assert_eq!(
        subjects(&read),
        ["task 1", "task 2"],
        "what was read reads on"
    );
    let reread = read_path(path, "p").unwrap();
    assert_eq!(subjects(&reread), ["task 1", "changed"]);
}

/// A board file cut short in place by hand under a board read from it: the tasks past the
/// cut read as damaged, and a write that would copy them is refused; nothing panics, and
/// nothing of another text passes for them.
#[cfg(unix)]
#[test]
fn a_file_cut_short_under_a_board_read_from_it_is_damage_not_other_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("board.json");
    let text = written(&pending_board(300));
    std::fs::write(&path, &text).unwrap();
    let read = read_path(path.clone(), "p").unwrap();
    // Cut in place (what an editor that writes in place, or `>`, does), not replaced.
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(text.len() as u64 / 2).unwrap();
    drop(file);
    assert_eq!(read.task(TaskId(1)).unwrap().unwrap().subject, "task 1");
    let last = read.task(TaskId(300)).unwrap_err().to_string();
    assert!(last.contains("could not be read again"), "{last}");
    let mut out = Vec::new();
    let refused = write_board(&mut out, &read).unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::UnexpectedEof);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_histories_written_and_read_back_are_the_boards_written(steps in proptest::collection::vec(step(), 1..120)) {
        let mut board = Board::new("p");
        let mut now = start();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.json");
        let staged = dir.path().join("board.json.tmp");
        for step in steps {
            take(&mut board, step, &mut now);

            // Written and read back, the board is the same, and reads as its own heads;
            // the next step then works on the stored text, as every command does.
            // Read from its file (replaced by a rename, as baton replaces it), from the
            // same bytes in memory, and by the strict reader alone: all three agree.
            let text = written(&board);
            std::fs::write(&staged, &text).unwrap();
            std::fs::rename(&staged, &path).unwrap();
            let reread = read_path(path.clone(), "p").unwrap();
            let in_memory = parse(&origin("p", &path), &text).unwrap();
            let strict = parse_strict(&origin("p", &path), &text).unwrap();
            prop_assert!(reread.heads().eq(strict.heads()), "both readers read the same heads");
            prop_assert!(reread.heads().eq(in_memory.heads()));
            prop_assert_eq!(&reread, &board);
            for task in reread.tasks().map(Result::unwrap) {
                prop_assert_eq!(reread.head(task.id), Some(&Head::of(task)));
            }
            prop_assert_eq!(written(&reread), text.clone(), "unchanged tasks are copied as they were");
            prop_assert_eq!(written(&in_memory), text);
            board = reread;
        }
    }
}
