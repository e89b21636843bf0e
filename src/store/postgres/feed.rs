//! The change feed on PostgreSQL: a change tells every process of it with NOTIFY, sent when
//! (and if) its transaction commits, and each process hears them on one listening
//! connection ([`super::listen`]).

use std::sync::Arc;

use super::client::Statements;
use super::listen::{self, Kind, Listener, Notice};
use super::{Failed, PgStore, started_once};
use crate::store::document::Document;
use crate::store::{ChangeFeed, Scope, StoreError};

impl PgStore {
    /// A feed fed by this process's listening connection (LISTEN/NOTIFY).
    pub(super) fn feed(&self, scope: &Scope) -> Result<Box<dyn ChangeFeed>, StoreError> {
        self.listener()?.feed(scope, self.shown())
    }

    /// The listening thread of this process, started on first use (once the schema is
    /// known good).
    fn listener(&self) -> Result<Arc<Listener>, StoreError> {
        started_once(&self.shared.listener, || {
            self.run(|_| Ok(()))?;
            Listener::start(
                self.pool().address.clone(),
                self.pool().tls()?,
                self.shown(),
            )
        })
    }

    /// Sends `notices` to every listening process, when (and if) the transaction of `client`
    /// commits.
    pub(super) fn notify(
        &self,
        client: &mut impl Statements,
        notices: &[Notice],
    ) -> Result<(), Failed> {
        if notices.is_empty() {
            return Ok(());
        }
        let texts: Vec<String> = notices.iter().map(Notice::text).collect();
        client
            .execute(NOTIFY, &[&listen::CHANNEL, &texts])
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }

    /// Tells the feeds of a change of `document` where they follow it (the tokens).
    pub(super) fn notify_document(
        &self,
        client: &mut impl Statements,
        document: &Document,
    ) -> Result<(), Failed> {
        match document {
            Document::Tokens => self.notify(client, &[PgStore::notice("", Kind::Tokens)]),
            _ => Ok(()),
        }
    }

    /// A notice of `kind` in `project`, naming nothing more.
    pub(super) fn notice(project: &str, kind: Kind) -> Notice {
        Notice {
            project: project.to_string(),
            kind,
            action: None,
            task: None,
            seq: None,
        }
    }
}

/// Tells channel $1 the notices $2 (their texts), in order, when the transaction commits.
pub(super) const NOTIFY: &str = "SELECT pg_notify($1, n.text) FROM unnest($2::text[]) WITH ORDINALITY AS n(text, i) ORDER BY n.i";
