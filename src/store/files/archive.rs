//! The archive of a project's finished tasks: `archive/<YYYY-MM>.jsonl`, appended to under
//! the board lock and never rewritten. Nothing is deleted: `show` still finds archived
//! tasks.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::jsonl;
use crate::board::search::Search;
use crate::board::task::{Task, TaskId};
use crate::file::atomic::{self, FileIdentity};
use crate::home::Home;
use crate::store::StoreError;

/// Appends `tasks`, moved off the board of `project`, to the archive file of the month each
/// was last updated in. The archive is appended (and synced) before the board is written,
/// so a crash in between leaves a task in both places, never in neither; readers take the
/// board's copy. The caller holds the board lock.
pub fn append(home: &Home, project: &str, tasks: &[Task]) -> Result<(), StoreError> {
    // By month, in order (a board carried over from another tool may span many).
    let mut by_month: BTreeMap<String, Vec<&Task>> = BTreeMap::new();
    for task in tasks {
        by_month
            .entry(task.updated_at.month())
            .or_default()
            .push(task);
    }
    let dir = home.archive_dir(project);
    for (month, tasks) in by_month {
        jsonl::append(&dir.join(format!("{month}.jsonl")), &tasks)?;
    }
    Ok(())
}

/// The archive files of tasks (`<YYYY-MM>.jsonl`; archived mail sits beside them), sorted.
pub fn task_files(home: &Home, project: &str) -> Result<Vec<PathBuf>, StoreError> {
    let dir = home.archive_dir(project);
    let mut files: Vec<_> = match fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| name.ends_with(".jsonl") && !name.starts_with("mail-"))
            })
            .collect(),
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(StoreError::io(&dir)(error)),
    };
    files.sort();
    Ok(files)
}

/// Finds an archived task; the last copy wins (a crash can leave two). Only the lines of
/// that id are parsed ([`id_of_line`]), newest month first.
pub fn find(home: &Home, project: &str, id: TaskId) -> Result<Option<Task>, StoreError> {
    let files = task_files(home, project)?;
    let mut found = None;
    for file in files.iter().rev() {
        let lines = jsonl::read_where::<Task>(file, |line| id_of_line(line) == Some(id.0))?;
        if let Some(task) = lines.records.into_iter().rev().find(|task| task.id == id) {
            found = Some(task);
            break;
        }
    }
    Ok(found)
}

/// Every archived task of `project`, file by file (oldest month first), each file's in the
/// order it was archived; a task archived twice (a crash can leave two) is there twice.
pub fn all(home: &Home, project: &str) -> Result<Vec<Task>, StoreError> {
    all_noting(home, project, &mut Vec::new())
}

/// [`all`], each line that did not parse named in `unreadable`.
pub fn all_noting(
    home: &Home,
    project: &str,
    unreadable: &mut Vec<String>,
) -> Result<Vec<Task>, StoreError> {
    let mut tasks = Vec::new();
    for file in task_files(home, project)? {
        tasks.extend(jsonl::read_all::<Task>(&file)?.records_noting(&file, unreadable));
    }
    Ok(tasks)
}

/// The archived tasks of `project` that `search` asks for, oldest first, each once (the last
/// copy, as [`find`] takes it). Only the lines that may hold what it asks for are parsed
/// ([`Search::may_match_stored`]), and each task parsed is asked again whole.
pub fn search(home: &Home, project: &str, search: &Search) -> Result<Vec<Task>, StoreError> {
    let mut scratch = Vec::new();
    let mut found: Vec<Task> = Vec::new();
    for file in task_files(home, project)? {
        let lines =
            jsonl::read_where::<Task>(&file, |line| search.may_match_stored(line, &mut scratch))?;
        found.extend(
            lines
                .records
                .into_iter()
                .filter(|task| search.matches(task)),
        );
    }
    Ok(crate::store::boards::last_copies(found))
}

/// The `schema` of `archive/ids.json`.
const ID_INDEX_SCHEMA: u32 = 1;

/// `archive/ids.json`: the highest task id in each archive file, and the file as it was when
/// it was read for it. Only a cache: it can always be made again from the archive.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct IdIndex {
    schema: u32,
    files: BTreeMap<String, ReadUpTo>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct ReadUpTo {
    inode: u64,
    length: u64,
    highest: u64,
}

/// The highest id in the archive (0 for none), so that no new task reuses one. Archive files
/// are only ever appended to, so each is read once: `archive/ids.json` keeps how far each was
/// read and the highest id in that part; a file that grew is read from there on, and one
/// that shrank or was replaced (another inode), or is new, is read whole. A `send` with
/// nothing archived since the last one costs a directory listing and a small read, however
/// large the archive. The caller holds the board lock, which every archive write holds too.
pub fn highest_id(home: &Home, project: &str) -> Result<u64, StoreError> {
    let files = task_files(home, project)?;
    if files.is_empty() {
        return Ok(0);
    }
    let index_path = home.archive_dir(project).join("ids.json");
    // Unreadable, torn by a power cut or newer: made again from the archive.
    let known = fs::read(&index_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<IdIndex>(&bytes).ok())
        .filter(|index| index.schema == ID_INDEX_SCHEMA)
        .unwrap_or_default();
    let mut index = IdIndex {
        schema: ID_INDEX_SCHEMA,
        files: BTreeMap::new(),
    };
    for path in &files {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        let Some(now) = FileIdentity::at(path)? else {
            continue;
        };
        let read = match known.files.get(name) {
            Some(read) if read.inode == now.inode && read.length == now.length => *read,
            Some(read) if read.inode == now.inode && read.length < now.length => {
                let (highest, length) = highest_in(path, read.length)?;
                ReadUpTo {
                    inode: now.inode,
                    length,
                    highest: highest.max(read.highest),
                }
            }
            _ => {
                let (highest, length) = highest_in(path, 0)?;
                ReadUpTo {
                    inode: now.inode,
                    length,
                    highest,
                }
            }
        };
        index.files.insert(name.to_string(), read);
    }
    let highest = index.files.values().map(|read| read.highest).max();
    if index != known {
        // A cache: if it cannot be written, the next send reads the archive again.
        if let Ok(text) = serde_json::to_vec(&index) {
            let _ = atomic::replace_unsynced(&index_path, &text);
        }
    }
    Ok(highest.unwrap_or(0))
}

/// The highest task id in `path` from byte `from` on, and the file's length as read.
fn highest_in(path: &Path, from: u64) -> Result<(u64, u64), StoreError> {
    let mut file = File::open(path).map_err(StoreError::io(path))?;
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(from))
        .and_then(|_| file.read_to_end(&mut bytes))
        .map_err(StoreError::io(path))?;
    let highest = bytes
        .split(|&byte| byte == b'\n')
        .filter_map(id_of_line)
        .max()
        .unwrap_or(0);
    Ok((highest, from + bytes.len() as u64))
}

/// The id of the task on one archive line. baton writes a task with its id first, so that
/// is read straight off the line; any other line is parsed. A torn line still counts its
/// id: a number skipped is harmless, a number reused is not.
fn id_of_line(line: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: u64,
    }
    if let Some(rest) = line.strip_prefix(b"{\"id\":") {
        let digits = rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
        if let Some(id) = std::str::from_utf8(&rest[..digits])
            .ok()
            .and_then(|digits| digits.parse().ok())
        {
            return Some(id);
        }
    }
    serde_json::from_slice::<IdOnly>(line)
        .ok()
        .map(|task| task.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_off_archive_lines_of_any_shape() {
        assert_eq!(id_of_line(br#"{"id":12,"subject":"x"}"#), Some(12));
        assert_eq!(id_of_line(br#"{"id":7"#), Some(7), "a torn line counts");
        assert_eq!(id_of_line(br#"{ "subject": "x", "id": 31 }"#), Some(31));
        assert_eq!(id_of_line(b"garbage"), None);
        assert_eq!(id_of_line(b""), None);
    }

    #[test]
    fn find_takes_the_last_copy_of_the_id_whatever_the_line_s_shape() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        let at = crate::time::now();
        let with = |id: u64, subject: &str| {
            let mut task = Task::example(crate::board::task::Status::Completed, at);
            task.id = TaskId(id);
            task.subject = subject.into();
            serde_json::to_string(&task).unwrap()
        };
        // The id last, as another writer might put it: found by the line's parse.
        let mut reordered: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&with(7, "reordered")).unwrap();
        let id = reordered.remove("id").unwrap();
        reordered.insert("id".into(), id);
        let archive = home.archive_dir("p");
        fs::create_dir_all(&archive).unwrap();
        fs::write(
            archive.join("2026-10.jsonl"),
            format!("{}\n{}\n", with(7, "older month"), with(8, "eight")),
        )
        .unwrap();
        fs::write(
            archive.join("2026-11.jsonl"),
            format!(
                "{}\n{}\n{{\"id\":7,\"subj\n{}\n",
                with(70, "seventy"),
                with(7, "first copy"),
                serde_json::Value::Object(reordered)
            ),
        )
        .unwrap();
        let found = |id| {
            find(&home, "p", TaskId(id))
                .unwrap()
                .map(|task| task.subject)
        };
        assert_eq!(found(7).as_deref(), Some("reordered"), "the last copy wins");
        assert_eq!(found(8).as_deref(), Some("eight"), "an older month");
        assert_eq!(found(70).as_deref(), Some("seventy"), "not 7 by its digits");
        assert_eq!(found(9), None);
    }

    #[test]
    fn the_highest_archived_id_follows_appends_and_replacements() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        assert_eq!(highest_id(&home, "p").unwrap(), 0, "no archive");
        let archive = home.archive_dir("p");
        fs::create_dir_all(&archive).unwrap();
        let month = archive.join("2026-11.jsonl");
        fs::write(&month, "{\"id\":40}\n{\"id\":3}\n").unwrap();
        fs::write(archive.join("mail-2026-11.jsonl"), "{\"id\":900}\n").unwrap();
        assert_eq!(highest_id(&home, "p").unwrap(), 40);
        assert!(archive.join("ids.json").exists());
        // Appended: only the new part is read, and the old highest still counts.
        let mut file = fs::OpenOptions::new().append(true).open(&month).unwrap();
        std::io::Write::write_all(&mut file, b"{\"id\":41}\n{\"id\":5}\n").unwrap();
        assert_eq!(highest_id(&home, "p").unwrap(), 41);
        // Replaced by a smaller file: read whole again.
        fs::write(&month, "{\"id\":9}\n").unwrap();
        assert_eq!(highest_id(&home, "p").unwrap(), 9);
        fs::write(archive.join("2026-12.jsonl"), "{\"id\":77}\n").unwrap();
        assert_eq!(highest_id(&home, "p").unwrap(), 77);
        fs::write(archive.join("ids.json"), "not json").unwrap();
        assert_eq!(
            highest_id(&home, "p").unwrap(),
            77,
            "a bad cache is made again"
        );
    }
}
