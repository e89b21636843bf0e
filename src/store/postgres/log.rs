//! The activity log on PostgreSQL: each project's records numbered from 1, gapless and in
//! commit order, read whole, by time, or on as it grows.

use super::client::{self, Statements};
use super::listen::{Kind, Notice};
use super::{Failed, PgStore, encode};
use crate::board::record::ActivityRecord;
use crate::store::{LogTail, StoreError};
use crate::time::Timestamp;

impl PgStore {
    /// The activity records of `project`, oldest first: those at or after `since`, and of
    /// them the last `last`.
    pub(super) fn read_log(
        &self,
        client: &mut impl Statements,
        project: &str,
        since: Option<Timestamp>,
        last: Option<usize>,
    ) -> Result<Vec<ActivityRecord>, Failed> {
        let since = since.map_or(i64::MIN, |since| since.datetime().timestamp_millis());
        let last = last.map(|last| i64::try_from(last).unwrap_or(i64::MAX));
        let rows = client
            .query(
                "SELECT record FROM activity WHERE project = $1 AND at_millis >= $2 \
                 ORDER BY seq DESC LIMIT $3",
                &[&project, &since, &last],
            )
            .map_err(|error| self.failed(&error))?;
        // A record a newer baton wrote, that this one cannot read, is passed over, as a
        // line of the file is.
        let mut records: Vec<ActivityRecord> = rows
            .iter()
            .filter_map(|row| serde_json::from_str(row.get::<_, &str>(0)).ok())
            .collect();
        records.reverse();
        Ok(records)
    }

    /// Appends `records` to the log of `project`, numbered on from its last; the caller
    /// holds the project's lock, so the numbers are gapless and in commit order. Each is
    /// told (on commit) to the feeds.
    pub(super) fn append_log(
        &self,
        client: &mut impl Statements,
        project: &str,
        records: &[ActivityRecord],
    ) -> Result<(), Failed> {
        if records.is_empty() {
            return Ok(());
        }
        let last = last_seq(client, project).map_err(|error| self.failed(&error))?;
        self.insert_records(client, project, last, records)?;
        self.notify(client, &log_notices(project, Some(last), records))
    }

    /// Writes `records` into the log of `project`, numbered on from `after`.
    pub(super) fn insert_records(
        &self,
        client: &mut impl Statements,
        project: &str,
        after: i64,
        records: &[ActivityRecord],
    ) -> Result<(), Failed> {
        if records.is_empty() {
            return Ok(());
        }
        let (at, texts) = record_rows(records)?;
        client
            .execute(INSERT_RECORDS, &[&project, &at, &texts, &after])
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }

    /// The log of `project` read on from its last record now.
    pub(super) fn tail(&self, project: &str) -> Result<Box<dyn LogTail>, StoreError> {
        let last = self.run(|client| last_seq(client, project))?;
        Ok(Box::new(Tail {
            store: self.clone(),
            project: project.to_string(),
            last,
        }))
    }
}

/// The number of the last record in the log of `project` (0: none).
fn last_seq(client: &mut impl Statements, project: &str) -> Result<i64, client::Error> {
    Ok(client.query_one(LAST_SEQ, &[&project])?.get(0))
}

/// The number of the last record of project $1 (0 for none).
pub(super) const LAST_SEQ: &str = "SELECT coalesce(max(seq), 0) FROM activity WHERE project = $1";

/// Appends records to the log of project $1, numbered on from $4: their times in
/// milliseconds ($2) and texts ($3), as [`record_rows`] gives them.
pub(super) const INSERT_RECORDS: &str = "INSERT INTO activity (project, seq, at_millis, record) \
     SELECT $1, $4 + r.n, r.at, r.record \
     FROM unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS r(at, record, n)";

/// Appends records to the log of project $1, numbered on from its last one (read in the same
/// statement): their times in milliseconds ($2) and texts ($3), as [`record_rows`] gives
/// them; and sends on channel $5 each record's notice, in order: the texts $4 (one per
/// record, as [`log_notices`] makes them, with no number), each given its record's number
/// (`s`). One round trip where [`LAST_SEQ`], then [`INSERT_RECORDS`] and the notices, took
/// two.
pub(super) const APPEND_RECORDS: &str = "WITH last AS \
         (SELECT coalesce(max(seq), 0) AS seq FROM activity WHERE project = $1), \
     written AS (INSERT INTO activity (project, seq, at_millis, record) \
         SELECT $1, last.seq + r.n, r.at, r.record \
         FROM last, unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS r(at, record, n)) \
     SELECT pg_notify($5, (n.text::jsonb || jsonb_build_object('s', last.seq + n.i))::text) \
     FROM last, unnest($4::text[]) WITH ORDINALITY AS n(text, i) ORDER BY n.i";

/// The columns [`INSERT_RECORDS`] takes of `records`: times and texts.
pub(super) fn record_rows(records: &[ActivityRecord]) -> Result<(Vec<i64>, Vec<String>), Failed> {
    let at: Vec<i64> = records
        .iter()
        .map(|record| record.at.datetime().timestamp_millis())
        .collect();
    let texts = records
        .iter()
        .map(encode)
        .collect::<Result<Vec<String>, Failed>>()?;
    Ok((at, texts))
}

/// What the feeds are told of `records` appended to the log of `project` after `last`
/// (`None`: with no numbers, which [`APPEND_RECORDS`] gives them).
pub(super) fn log_notices(
    project: &str,
    last: Option<i64>,
    records: &[ActivityRecord],
) -> Vec<Notice> {
    records
        .iter()
        .zip(1..)
        .map(|(record, n)| Notice {
            project: project.to_string(),
            kind: Kind::Log,
            action: Some(record.action.to_string()),
            task: record.task.map(|task| task.0),
            seq: last.map(|last| (last + n).max(0) as u64),
        })
        .collect()
}

/// The log of a project read on as it grows: the records numbered past the last one read.
struct Tail {
    store: PgStore,
    project: String,
    last: i64,
}

impl LogTail for Tail {
    fn fresh_lines(&mut self) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(i64, String)> = self.store.run(|client| {
            Ok(client
                .query(
                    "SELECT seq, record FROM activity WHERE project = $1 AND seq > $2 \
                     ORDER BY seq",
                    &[&self.project, &self.last],
                )?
                .iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect())
        })?;
        if let Some((seq, _)) = rows.last() {
            self.last = *seq;
        }
        Ok(rows.into_iter().map(|(_, record)| record).collect())
    }
}
