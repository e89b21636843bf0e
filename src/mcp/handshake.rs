//! The MCP handshake as baton settles it, around the line transport: what a client sends
//! before the lifecycle begins, and the probe of the stateless era, answered here.

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ConstString, DiscoverRequestMethod, GetMeta,
    ProtocolVersion, ServerJsonRpcMessage,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ErrorData, RoleServer};

use super::supported_versions;

/// The server transport around the line transport that settles the handshake:
/// - it drops the notifications and responses a client sends before the lifecycle has
///   begun (rmcp ends the whole connection on any of them, and a client that gave up
///   waiting on a probe, `notifications/cancelled`, should not lose its server for it);
/// - it answers every `server/discover` at once with -32601 itself. A client that probes
///   the stateless 2026-07-28 era first (Claude Code does) falls back to `initialize` on
///   that error, and only an `initialize` connection takes channel pushes (see
///   [`super::NEWEST_VERSION`]). rmcp would answer the probe itself with the versions served,
///   which a client may read as an invitation to go on without `initialize`.
///
/// Everything else passes untouched.
pub struct HandshakeFilter<T> {
    inner: T,
    has_begun: bool,
}

impl<T> HandshakeFilter<T> {
    pub fn new(inner: T) -> Self {
        HandshakeFilter {
            inner,
            has_begun: false,
        }
    }
}

/// Whether rmcp starts serving on `request`: `initialize`, or a request that brings the
/// whole inline `_meta` with a version served. A probe (`ping`, `server/discover`) or a
/// request it answers with an error leaves it waiting for the lifecycle still.
pub(super) fn begins_lifecycle(request: &ClientRequest) -> bool {
    match request {
        ClientRequest::InitializeRequest(_) => true,
        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
        request => {
            let meta = request.get_meta();
            meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
                && meta
                    .protocol_version()
                    .is_some_and(|version| supported_versions().contains(&version))
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for HandshakeFilter<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = std::result::Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let message = self.inner.receive().await?;
            if let ClientJsonRpcMessage::Request(request) = &message
                // By name: a discover without params is read as a custom request.
                && request.request.method() == DiscoverRequestMethod::VALUE
            {
                let refusal = ServerJsonRpcMessage::error(
                    ErrorData::method_not_found::<DiscoverRequestMethod>(),
                    Some(request.id.clone()),
                );
                // On a task of its own: rmcp may drop this `receive` while it waits, and
                // the answer must not be cut short. A client that stopped reading learns
                // nothing from a write error either.
                let answer = self.inner.send(refusal);
                tokio::spawn(async move {
                    let _ = answer.await;
                });
                continue;
            }
            if self.has_begun {
                return Some(message);
            }
            match &message {
                ClientJsonRpcMessage::Request(request) => {
                    self.has_begun = begins_lifecycle(&request.request);
                    return Some(message);
                }
                _ => continue,
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = std::result::Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
