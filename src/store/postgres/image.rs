//! A project's whole state on PostgreSQL read as one image, and written from one (`baton
//! store copy`): through the same statements the changes write and read with.

use super::board::Fields;
use super::client::Statements;
use super::documents::{delete_document, select_document, write_document};
use super::listen::Kind;
use super::mail::{readable, select_mail, select_mail_archive, select_positions, texts_of};
use super::{BOARD_LOCKS, Failed, MAIL_LOCKS, PgStore, encode};
use crate::store::StoreError;
use crate::store::copy::{BoardImage, ProjectImage};
use crate::store::document::Wait;

impl PgStore {
    /// [`crate::store::Store::export_project`]: one moment's state of the project, whatever
    /// commits meanwhile.
    pub(super) fn export(&self, project: &str) -> Result<ProjectImage, StoreError> {
        self.read(|transaction| {
            let fail = |error| self.failed(&error);
            let record = select_document(transaction, "project", project).map_err(fail)?;
            let read = self.read_board(transaction, project)?;
            let board = match read.exists {
                true => Some(BoardImage::of(&read.board, &self.board_origin(project))?),
                false => None,
            };
            let log = self.read_log(transaction, project, None, None)?;
            let archive = self.archive(transaction, project)?;
            // A message a newer baton wrote, that this one cannot read, is passed over, as
            // everywhere else.
            let mail = readable(&select_mail(transaction, project).map_err(fail)?);
            let mail_archive = readable(&select_mail_archive(transaction, project).map_err(fail)?);
            let positions = select_positions(transaction, project).map_err(fail)?;
            let read_positions = self.decode_positions(project, positions.as_deref())?;
            Ok(ProjectImage {
                record,
                board,
                log,
                archive,
                mail,
                read_positions,
                mail_archive,
                unreadable: Vec::new(),
            }
            .normalized())
        })
    }

    /// [`crate::store::Store::import_project`]: the project's state replaced by `image`, in
    /// one transaction under its board's and its mail's locks.
    pub(super) fn import(&self, project: &str, image: &ProjectImage) -> Result<(), StoreError> {
        let mut connection = self.begin()?;
        for (class, what) in [(BOARD_LOCKS, "board"), (MAIL_LOCKS, "mail")] {
            let what = format!("the {what} lock of project {project}");
            self.take_lock(&mut connection, class, project, &what, Wait::AsTheStoreDoes)?;
        }
        let client = connection.client();
        let fail = |error| self.failed(&error);
        match &image.record {
            Some(record) => write_document(client, "project", project, record).map(drop),
            None => delete_document(client, "project", project).map(drop),
        }
        .map_err(fail)?;
        for table in [
            "tasks",
            "board_previous",
            "activity",
            "archive",
            "mail",
            "mail_archive",
            "read_positions",
        ] {
            client
                .execute(
                    &format!("DELETE FROM {table} WHERE project = $1"),
                    &[&project],
                )
                .map_err(fail)?;
        }
        match &image.board {
            Some(board) => {
                let tasks = board
                    .tasks
                    .iter()
                    .map(|task| Ok((task.id.0 as i64, encode(task)?)))
                    .collect::<Result<Vec<(i64, String)>, Failed>>()?;
                self.insert_tasks(client, project, &tasks)?;
                let fields = Fields::new(board.schema, board.next_id, &board.reservations)?;
                self.write_board_fields(client, project, &fields, None)?;
            }
            None => {
                client
                    .execute("DELETE FROM boards WHERE project = $1", &[&project])
                    .map_err(fail)?;
            }
        }
        self.insert_records(client, project, 0, &image.log)?;
        self.insert_archive(client, project, &image.archive)?;
        self.insert_mail(client, project, &texts_of(&image.mail)?)?;
        let archived = texts_of(&image.mail_archive)?
            .into_iter()
            .zip(&image.mail_archive)
            .map(|((seq, text), message)| (seq, message.at.month(), text))
            .collect::<Vec<_>>();
        self.insert_mail_archive(client, project, &archived)?;
        if let Some(positions) = &image.read_positions {
            self.write_positions(client, project, positions)?;
        }
        self.notify(
            client,
            &[
                PgStore::notice(project, Kind::Board),
                PgStore::notice(project, Kind::Mailbox),
            ],
        )?;
        connection.commit().map_err(|error| self.failed(&error))
    }
}
