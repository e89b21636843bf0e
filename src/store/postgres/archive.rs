//! The archive on PostgreSQL: the finished tasks moved off each board, in the order they
//! moved, read by a change in its own transaction or by anyone outside one.

use std::sync::{Arc, Mutex, PoisonError};

use super::client::{self, Client, Statements};
use super::pool::{self, is_connection_lost};
use super::{Failed, PgStore, encode};
use crate::board::task::{Task, TaskId};
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
        let ids: Vec<i64> = tasks.iter().map(|task| task.id.0 as i64).collect();
        let texts = tasks
            .iter()
            .map(encode)
            .collect::<Result<Vec<String>, Failed>>()?;
        client
            .execute(
                "INSERT INTO archive (project, id, task) \
                 SELECT $1, r.id, r.task FROM unnest($2::bigint[], $3::text[]) \
                     WITH ORDINALITY AS r(id, task, n) ORDER BY r.n",
                &[&project, &ids, &texts],
            )
            .map_err(|error| self.failed(&error))?;
        Ok(())
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
        self.query(|client| highest_archived(client, &self.project))
    }
}

/// The highest id archived in `project` (0: none).
pub(super) fn highest_archived(
    client: &mut impl Statements,
    project: &str,
) -> Result<u64, client::Error> {
    let highest: i64 = client
        .query_one(
            "SELECT coalesce(max(id), 0) FROM archive WHERE project = $1",
            &[&project],
        )?
        .get(0);
    Ok(highest.max(0) as u64)
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
