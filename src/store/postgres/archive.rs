//! The archive on PostgreSQL: the finished tasks moved off each board, in the order they
//! moved, read by a change in its own transaction or by anyone outside one.

use std::sync::{Arc, Mutex, PoisonError};

use postgres::Row;

use super::client::{self, Client, Statements};
use super::documents::select_document;
use super::pool::{self, is_connection_lost};
use super::{Failed, PgStore, encode};
use crate::board::search::{self, Search};
use crate::board::task::{Task, TaskId};
use crate::store::boards::last_copies;
use crate::store::transaction::Archive;
use crate::store::{Origin, Place, StoreError, Stored};

impl PgStore {
    /// Appends `tasks` to the archive of `project`, in their order.
    pub(super) fn insert_archive(
        &self,
        client: &mut impl Statements,
        project: &str,
        tasks: &[Task],
    ) -> Result<(), Failed> {
        if tasks.is_empty() {
            return Ok(());
        }
        let (ids, texts, labels, words) = archive_rows(tasks)?;
        client
            .execute(INSERT_ARCHIVE, &[&project, &ids, &texts, &labels, &words])
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }

    /// The archived tasks of `project` that `search` asks for, oldest first, each once: the
    /// rows its label and its folded words are found in (by the indexes made for them:
    /// `archive_by_label`, and `archive_words_trgm` where the database has pg_trgm), each
    /// asked again whole.
    pub(super) fn searched_archive(
        &self,
        project: &str,
        search: &Search,
    ) -> Result<Vec<Task>, StoreError> {
        let texts = self.run(|client| select_searched(client, project, search))?;
        let tasks = decode_archive(self.shown(), project, &texts)?;
        let found = tasks.into_iter().filter(|task| search.matches(task));
        Ok(last_copies(found.collect()))
    }

    /// The task `id` as it was last archived in `project`, if it was.
    pub(super) fn archived(&self, project: &str, id: TaskId) -> Result<Option<Task>, StoreError> {
        let text = self.run(|client| select_archived(client, project, id))?;
        text.map(|text| decode_archived(self.shown(), project, &text))
            .transpose()
    }

    /// The archive of `project`, in the order the tasks moved there.
    pub(super) fn read_archive(&self, project: &str) -> Result<Vec<Task>, StoreError> {
        let texts = self.run(|client| select_archive(client, project))?;
        decode_archive(self.shown(), project, &texts)
    }

    /// The archive of `project` as `client` sees it, in the order the tasks moved there.
    pub(super) fn archive(
        &self,
        client: &mut impl Statements,
        project: &str,
    ) -> Result<Vec<Task>, Failed> {
        let texts = select_archive(client, project).map_err(|error| self.failed(&error))?;
        decode_archive(self.shown(), project, &texts)
    }
}

/// The archive of a project as a change reads it: in the change's own transaction.
pub(super) struct ArchiveInTransaction {
    pub(super) client: Arc<Mutex<Option<Client>>>,
    pub(super) pool_shown: String,
    pub(super) project: String,
    /// The project's record as this transaction read it (`None`: not read yet): read under
    /// the board's lock, which guards it, it holds still until the commit, so the changes
    /// of a batch read it once (or not at all, when it came with the `BEGIN`).
    pub(super) record: Mutex<Option<Option<Vec<u8>>>>,
    /// The highest id in the archive, as it came with the `BEGIN` (a change that makes a
    /// task needs it for the new id): not asked again. `None`: asked when needed.
    pub(super) highest: Option<u64>,
}

impl std::fmt::Debug for ArchiveInTransaction {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ArchiveInTransaction")
            .field("store", &self.pool_shown)
            .field("project", &self.project)
            .finish()
    }
}

impl ArchiveInTransaction {
    fn query<T>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, client::Error>,
    ) -> Result<T, StoreError> {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(client) = client.as_mut() else {
            return Err(StoreError::Unfinished);
        };
        work(client).map_err(|error| {
            let detail = pool::describe(&error);
            match is_connection_lost(&error) {
                true => StoreError::Unreachable {
                    store: self.pool_shown.clone(),
                    detail,
                    lasting: false,
                },
                false => StoreError::Database {
                    store: self.pool_shown.clone(),
                    detail,
                },
            }
        })
    }
}

impl Archive for ArchiveInTransaction {
    fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        let text = self.query(|client| select_archived(client, &self.project, id))?;
        text.map(|text| decode_archived(&self.pool_shown, &self.project, &text))
            .transpose()
    }

    fn tasks(&self) -> Result<Vec<Task>, StoreError> {
        let texts = self.query(|client| select_archive(client, &self.project))?;
        decode_archive(&self.pool_shown, &self.project, &texts)
    }

    fn highest_id(&self) -> Result<u64, StoreError> {
        if let Some(highest) = self.highest {
            return Ok(highest);
        }
        self.query(|client| highest_archived(client, &self.project))
    }

    /// Read on the change's connection: a command that changes a board then opens one
    /// connection, not a second (with its own login) for the record.
    fn project_record(&self) -> Option<Result<Option<Vec<u8>>, StoreError>> {
        let mut record = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(read) = &*record {
            return Some(Ok(read.clone()));
        }
        let read = self.query(|client| select_document(client, "project", &self.project));
        if let Ok(read) = &read {
            *record = Some(read.clone());
        }
        Some(read)
    }
}

/// Moves tasks into the archive of project $1, in order: their ids ($2), texts ($3), labels
/// ($4) and words ($5), as [`archive_rows`] gives them.
pub(super) const INSERT_ARCHIVE: &str = "INSERT INTO archive (project, id, task, labels, words) \
     SELECT $1, r.id, r.task, string_to_array(r.labels, ','), r.words \
     FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[]) \
         WITH ORDINALITY AS r(id, task, labels, words, n) ORDER BY r.n";

/// The columns [`INSERT_ARCHIVE`] takes of `tasks`: ids, texts, labels and words.
pub(super) type ArchiveRows = (Vec<i64>, Vec<String>, Vec<String>, Vec<String>);

pub(super) fn archive_rows(tasks: &[Task]) -> Result<ArchiveRows, Failed> {
    let ids: Vec<i64> = tasks.iter().map(|task| task.id.0 as i64).collect();
    let texts = tasks
        .iter()
        .map(encode)
        .collect::<Result<Vec<String>, Failed>>()?;
    let (labels, words): (Vec<String>, Vec<String>) = tasks.iter().map(searched).unzip();
    Ok((ids, texts, labels, words))
}

/// What the archive keeps beside a task for a search: its labels, comma-separated (names
/// hold no comma), and its words, folded ([`search::folded_words`]).
fn searched(task: &Task) -> (String, String) {
    (task.labels.join(","), search::folded_words(task))
}

/// Fills in what the archive keeps for a search of each task archived before it kept it
/// (schema 3 → 4), a few thousand rows at a time, in the migration's transaction. A row
/// whose task does not read gets its text folded whole, so that a search still finds it
/// and then says it does not read.
pub(super) fn fill_searched(client: &mut impl Statements) -> Result<(), client::Error> {
    let mut after = 0i64;
    loop {
        let rows = client.query(
            "SELECT place, task FROM archive WHERE place > $1 ORDER BY place LIMIT 5000",
            &[&after],
        )?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = last.get(0);
        let places: Vec<i64> = rows.iter().map(|row| row.get(0)).collect();
        let (labels, words): (Vec<String>, Vec<String>) = rows
            .iter()
            .map(|row| {
                let text: String = row.get(1);
                match serde_json::from_str::<Task>(&text) {
                    Ok(task) => searched(&task),
                    Err(_) => (String::new(), search::fold(&text)),
                }
            })
            .unzip();
        client.execute(
            "UPDATE archive SET labels = string_to_array(r.labels, ','), words = r.words \
             FROM unnest($1::bigint[], $2::text[], $3::text[]) AS r(place, labels, words) \
             WHERE archive.place = r.place",
            &[&places, &labels, &words],
        )?;
    }
}

/// The texts of the archived tasks of `project` whose label and folded words are those
/// `search` asks for (none asked: every one), in the order they moved there. A search's
/// words stand in a `LIKE` pattern with its wildcards escaped.
fn select_searched(
    client: &mut impl Statements,
    project: &str,
    search: &Search,
) -> Result<Vec<String>, client::Error> {
    let pattern = search.folded_text().map(|words| {
        let escaped = words
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        format!("%{escaped}%")
    });
    Ok(client
        .query(
            "SELECT task FROM archive WHERE project = $1 \
                 AND ($2::text IS NULL OR labels @> ARRAY[$2::text]) \
                 AND ($3::text IS NULL OR words LIKE $3) \
             ORDER BY place",
            &[&project, &search.label(), &pattern],
        )?
        .iter()
        .map(|row| row.get(0))
        .collect())
}

/// The highest id archived in `project` (0: none).
pub(super) fn highest_archived(
    client: &mut impl Statements,
    project: &str,
) -> Result<u64, client::Error> {
    let highest = client.query_one(HIGHEST_ARCHIVED, &[&project])?;
    Ok(highest_of(&highest))
}

/// The highest id archived in project $1 (0: none).
pub(super) const HIGHEST_ARCHIVED: &str =
    "SELECT coalesce(max(id), 0) FROM archive WHERE project = $1";

/// The id in the row [`HIGHEST_ARCHIVED`] answers.
pub(super) fn highest_of(row: &Row) -> u64 {
    row.get::<_, i64>(0).max(0) as u64
}

/// The archived task of `project` whose text is `text`.
fn decode_archived(shown: &str, project: &str, text: &str) -> Result<Task, StoreError> {
    serde_json::from_str(text).map_err(|error| {
        let what = Stored::Archive {
            project: project.to_string(),
        };
        let origin = Origin {
            place: Place::Database {
                store: shown.to_string(),
                name: what.name(),
            },
            what,
        };
        StoreError::corrupt(&origin)(error.to_string())
    })
}

/// The archived tasks of `project` whose texts are `texts`.
fn decode_archive(shown: &str, project: &str, texts: &[String]) -> Result<Vec<Task>, StoreError> {
    texts
        .iter()
        .map(|text| decode_archived(shown, project, text))
        .collect()
}

/// The text of task `id` as it was last archived in `project`.
fn select_archived(
    client: &mut impl Statements,
    project: &str,
    id: TaskId,
) -> Result<Option<String>, client::Error> {
    Ok(client
        .query_opt(
            "SELECT task FROM archive WHERE project = $1 AND id = $2 \
             ORDER BY place DESC LIMIT 1",
            &[&project, &(id.0 as i64)],
        )?
        .map(|row| row.get(0)))
}

/// The texts of the archive of `project`, in the order the tasks moved there.
fn select_archive(
    client: &mut impl Statements,
    project: &str,
) -> Result<Vec<String>, client::Error> {
    Ok(client
        .query(
            "SELECT task FROM archive WHERE project = $1 ORDER BY place",
            &[&project],
        )?
        .iter()
        .map(|row| row.get(0))
        .collect())
}
