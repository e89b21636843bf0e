//! The mail on PostgreSQL: each project's messages by number, the read positions, and the
//! messages the sweep moved to the mail's archive; a change of the mail holds the mail's
//! lock, as `mail.lock` is held on the files.

use std::collections::HashMap;

use postgres::types::ToSql;

use super::client::{self, Statements};
use super::listen::{Kind, Notice};
use super::{Failed, MAIL_LOCKS, PgStore, encode};
use crate::board::mail::{Message, ReadPositions};
use crate::store::document::Wait;
use crate::store::mailbox::{MailCommitted, Mailbox};
use crate::store::{GaveUp, Origin, StoreError, Stored, versioned};
use crate::time::Timestamp;

impl PgStore {
    /// The mail of `project`, oldest first. A message a newer baton wrote, that this one
    /// cannot read, is skipped and kept.
    pub(super) fn read_mail(&self, project: &str) -> Result<Vec<Message>, StoreError> {
        let lines = self.run(|client| select_mail(client, project))?;
        Ok(readable(&lines))
    }

    /// How far each agent has read the mail of `project`.
    pub(super) fn read_positions_of(&self, project: &str) -> Result<ReadPositions, StoreError> {
        let text = self.run(|client| select_positions(client, project))?;
        Ok(self
            .decode_positions(project, text.as_deref())?
            .unwrap_or_default())
    }

    /// [`crate::store::Mailboxes::positions_and_mail`]: both read in one round trip, in
    /// that order.
    pub(super) fn read_positions_and_mail(
        &self,
        project: &str,
    ) -> Result<(ReadPositions, Vec<Message>), StoreError> {
        let params: [&(dyn ToSql + Sync); 1] = [&project];
        let mut answers = self.run(|client| {
            client.pipelined(&[(SELECT_POSITIONS, &params), (SELECT_MAIL, &params)])
        })?;
        let (lines, positions) = (answers.swap_remove(1), answers.swap_remove(0));
        let text = positions.first().map(|row| row.get::<_, String>(0));
        let positions = self
            .decode_positions(project, text.as_deref())?
            .unwrap_or_default();
        let lines: Vec<(i64, String)> = lines.iter().map(|row| (row.get(0), row.get(1))).collect();
        Ok((positions, readable(&lines)))
    }

    /// [`crate::store::Mailboxes::change_mail`]: the mail and the read positions read under the
    /// mail's lock, and what `change` made of them written in the same transaction.
    pub(super) fn change_mailbox(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Mailbox) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        let mut connection = self.begin()?;
        let what = format!("the mail lock of project {project}");
        self.take_lock(
            &mut connection,
            MAIL_LOCKS,
            project,
            &what,
            Wait::AsTheStoreDoes,
        )?;
        let client = connection.client();
        let fail = |error: client::Error| self.failed(&error);
        let lines = select_mail(client, project).map_err(fail)?;
        let positions = select_positions(client, project).map_err(fail)?;
        let positions = self
            .decode_positions(project, positions.as_deref())?
            .unwrap_or_default();
        let last = lines
            .iter()
            .map(|(seq, _)| seq.max(&0).unsigned_abs())
            .chain([positions.archived_through])
            .chain(positions.positions.values().copied())
            .max()
            .unwrap_or(0);
        let messages = readable(&lines);
        let mut sent_at: HashMap<u64, Timestamp> = messages
            .iter()
            .map(|message| (message.seq, message.at))
            .collect();
        let mut stored: HashMap<i64, String> = lines.into_iter().collect();
        let mut mailbox = Mailbox::new(now, messages, positions, last);
        if change(&mut mailbox).is_err() {
            return Ok(());
        }
        let MailCommitted {
            added,
            positions,
            leaving,
        } = mailbox.commit();
        if !added.is_empty() {
            let texts = texts_of(&added)?;
            self.insert_mail(client, project, &texts)?;
            stored.extend(texts);
            let notices: Vec<Notice> = added
                .iter()
                .map(|message| Notice {
                    seq: Some(message.seq),
                    ..PgStore::notice(project, Kind::Mail)
                })
                .collect();
            self.notify(client, &notices)?;
        }
        if let Some(positions) = &positions {
            self.write_positions(client, project, positions)?;
        }
        if !leaving.is_empty() {
            // Each leaving message to the archive by the month it was sent in, kept as it
            // was stored.
            for message in &added {
                sent_at.insert(message.seq, message.at);
            }
            let mut archived: Vec<(i64, String, String)> = leaving
                .iter()
                .filter_map(|seq| {
                    let text = stored.remove(&(*seq as i64))?;
                    let at = sent_at.get(seq)?;
                    Some((*seq as i64, at.month(), text))
                })
                .collect();
            archived.sort_by_key(|(seq, _, _)| *seq);
            self.insert_mail_archive(client, project, &archived)?;
            let seqs: Vec<i64> = archived.iter().map(|(seq, _, _)| *seq).collect();
            client
                .execute(
                    "DELETE FROM mail WHERE project = $1 AND seq = ANY($2)",
                    &[&project, &seqs],
                )
                .map_err(fail)?;
            if added.is_empty() {
                self.notify(client, &[PgStore::notice(project, Kind::Mailbox)])?;
            }
        }
        connection.commit().map_err(|error| self.failed(&error))
    }

    /// The read positions of `project`, to name them in words.
    fn positions_origin(&self, project: &str) -> Origin {
        self.origin(Stored::ReadPositions {
            project: project.to_string(),
        })
    }

    /// The read positions of `project` whose text is `text` (`None`: none kept).
    pub(super) fn decode_positions(
        &self,
        project: &str,
        text: Option<&str>,
    ) -> Result<Option<ReadPositions>, StoreError> {
        let origin = self.positions_origin(project);
        text.map(|text| versioned::decode(&origin, text.as_bytes()))
            .transpose()
    }

    /// Writes `messages` (each its number and text) into the mail of `project`.
    pub(super) fn insert_mail(
        &self,
        client: &mut impl Statements,
        project: &str,
        messages: &[(i64, String)],
    ) -> Result<(), Failed> {
        if messages.is_empty() {
            return Ok(());
        }
        let seqs: Vec<i64> = messages.iter().map(|(seq, _)| *seq).collect();
        let texts: Vec<&str> = messages.iter().map(|(_, text)| text.as_str()).collect();
        client
            .execute(
                "INSERT INTO mail (project, seq, message) \
                 SELECT $1, r.seq, r.message FROM unnest($2::bigint[], $3::text[]) \
                     AS r(seq, message)",
                &[&project, &seqs, &texts],
            )
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }

    /// Writes `messages` (each its number, the month it was sent in, and its text) into the
    /// mail's archive of `project`, in their order.
    pub(super) fn insert_mail_archive(
        &self,
        client: &mut impl Statements,
        project: &str,
        messages: &[(i64, String, String)],
    ) -> Result<(), Failed> {
        if messages.is_empty() {
            return Ok(());
        }
        let seqs: Vec<i64> = messages.iter().map(|(seq, _, _)| *seq).collect();
        let months: Vec<&str> = messages
            .iter()
            .map(|(_, month, _)| month.as_str())
            .collect();
        let texts: Vec<&str> = messages.iter().map(|(_, _, text)| text.as_str()).collect();
        client
            .execute(
                "INSERT INTO mail_archive (project, seq, month, message) \
                 SELECT $1, r.seq, r.month, r.message \
                 FROM unnest($2::bigint[], $3::text[], $4::text[]) WITH ORDINALITY \
                     AS r(seq, month, message, n) ORDER BY r.n",
                &[&project, &seqs, &months, &texts],
            )
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }

    /// Writes `positions` as the read positions of `project`, over any kept.
    pub(super) fn write_positions(
        &self,
        client: &mut impl Statements,
        project: &str,
        positions: &ReadPositions,
    ) -> Result<(), Failed> {
        let text = versioned::text_of(&self.positions_origin(project), positions)?;
        let text = String::from_utf8_lossy(&text).into_owned();
        client
            .execute(
                "INSERT INTO read_positions (project, positions) VALUES ($1, $2) \
                 ON CONFLICT (project) DO UPDATE SET positions = excluded.positions",
                &[&project, &text],
            )
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }
}

/// Each message with its number and the text it is stored as.
pub(super) fn texts_of(messages: &[Message]) -> Result<Vec<(i64, String)>, Failed> {
    messages
        .iter()
        .map(|message| Ok((message.seq as i64, encode(message)?)))
        .collect()
}

/// The messages of `lines` (each a number and a text) this baton can read; one a newer
/// baton wrote is passed over.
pub(super) fn readable(lines: &[(i64, String)]) -> Vec<Message> {
    lines
        .iter()
        .filter_map(|(_, text)| serde_json::from_str(text).ok())
        .collect()
}

/// The mail of `project`, each message its number and text, oldest first.
pub(super) fn select_mail(
    client: &mut impl Statements,
    project: &str,
) -> Result<Vec<(i64, String)>, client::Error> {
    Ok(client
        .query(SELECT_MAIL, &[&project])?
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect())
}

/// The mail's archive of `project`, each message its number and text, in number order.
pub(super) fn select_mail_archive(
    client: &mut impl Statements,
    project: &str,
) -> Result<Vec<(i64, String)>, client::Error> {
    Ok(client
        .query(
            "SELECT seq, message FROM mail_archive WHERE project = $1 ORDER BY seq",
            &[&project],
        )?
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect())
}

/// The messages of project $1, each its number and text, in number order.
const SELECT_MAIL: &str = "SELECT seq, message FROM mail WHERE project = $1 ORDER BY seq";

/// The text of the read positions of project $1, if any are kept.
const SELECT_POSITIONS: &str = "SELECT positions FROM read_positions WHERE project = $1";

/// The text of the read positions of `project`, if any are kept.
pub(super) fn select_positions(
    client: &mut impl Statements,
    project: &str,
) -> Result<Option<String>, client::Error> {
    Ok(client
        .query_opt(SELECT_POSITIONS, &[&project])?
        .map(|row| row.get(0)))
}
