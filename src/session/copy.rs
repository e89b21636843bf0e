//! `store copy` with the domains' word on what it carries ([`crate::store::copy`] is the
//! copy): a document is copied only when it reads as the domain that owns it reads it, and
//! the tokens are compared as what their users made, not as what a hub wrote of its own.

use crate::alert::{self, queue};
use crate::names::{self, NameKind};
use crate::project::Project;
use crate::registry::AgentRecord;
use crate::store::copy::{self, Copied, CopyError, Differing, Vetting};
use crate::store::versioned;
use crate::store::{Document, Origin, Store, StoreError};
use crate::tokens;

/// Copies everything `from` holds to `to` ([`copy::copy`]), each document checked by its
/// domain.
pub fn copy_store(
    from: &dyn Store,
    to: &dyn Store,
    differing: Differing,
) -> Result<Copied, CopyError> {
    copy::copy(from, to, differing, &ByDomain)
}

/// Each document as the domain that keeps it reads it.
struct ByDomain;

impl Vetting for ByDomain {
    fn refusal(&self, document: &Document, origin: &Origin, text: &[u8]) -> Option<String> {
        let read = match document {
            Document::Agent(name) => versioned::decode::<AgentRecord>(origin, text)
                .and_then(|record| names_itself(origin, NameKind::Agent, name, &record.name)),
            Document::Project(id) => versioned::decode::<Project>(origin, text)
                .and_then(|record| names_itself(origin, NameKind::Project, id, &record.id)),
            Document::Tokens => tokens::as_compared(origin, text).map(drop),
            Document::Alerts => alert::check_stored(origin, text),
            Document::AlertsDropped | Document::QueuedAlert(_) => {
                queue::check_stored(document, origin, text)
            }
            // This machine's own: never copied.
            Document::SetupManifest | Document::ProjectMap => Ok(()),
        };
        read.err().map(|error| error.to_string())
    }

    fn compared(&self, document: &Document, text: &[u8]) -> Vec<u8> {
        match document {
            Document::Tokens => tokens::as_compared(&Origin::unwritten(), text)
                // What does not read is compared as it is: then it differs from what does.
                .unwrap_or_else(|_| text.to_vec()),
            _ => text.to_vec(),
        }
    }
}

/// A record kept under `expected` must name itself so (and be a name baton allows): a
/// record of `bob` naming `alice` would be read as bob's wherever it is looked up by file.
fn names_itself(
    origin: &Origin,
    kind: NameKind,
    expected: &str,
    named: &str,
) -> Result<(), StoreError> {
    if named == expected && names::check(kind, named).is_ok() {
        return Ok(());
    }
    Err(StoreError::Corrupt {
        origin: origin.clone(),
        detail: format!(
            "names {kind} `{}`, not `{expected}`",
            crate::text::inline(named)
        ),
    })
}
