//! `baton mcp`: serves the board's MCP tools over stdio, as one identity, until stdin closes.
//! stdout carries only protocol frames; anything else goes to stderr.

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;

use baton::error::Error;
use baton::mcp::stdio::LineTransport;
use baton::mcp::{BatonServer, HandshakeFilter};
use baton::names::{self, NameKind};
use baton::project;

use super::Context;

pub fn run(context: &Context) -> Result<i32, Error> {
    // The identity is fixed for the server's life: without one, refuse before serving, so
    // the client shows the reason instead of a server that fails every call.
    let Some(agent) = context.agent() else {
        return Err(Error::invalid_with_hint(
            Error::NoIdentity.to_string(),
            "e.g. `baton mcp --as claude`, or BATON_AGENT=claude in the server's environment",
        ));
    };
    names::check(NameKind::Agent, &agent)?;
    // A project named at start must exist, or every call would fail the same way; refusing
    // now shows the client (and the user reading its log) why.
    if let Some(project) = &context.global.project {
        project::check_exists(&*context.hub.store, project)?;
    }
    // Whoever a tool hands work to is woken as by the CLI (the hub carries `--no-wake`);
    // the lines saying so go to stderr, as the CLI's do.
    let server = BatonServer::new(
        context.hub.clone(),
        agent,
        context.global.project.clone(),
        |outcome| eprintln!("{}", super::wake::describe(outcome)),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Error::invalid(format!("cannot start the MCP server: {error}")))?;
    runtime.block_on(serve(server))?;
    Ok(0)
}

async fn serve(server: BatonServer) -> Result<(), Error> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let transport = HandshakeFilter::new(LineTransport::new(stdin, stdout));
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // The client went away before starting a session: nothing was asked, nothing failed.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(Error::invalid(format!("MCP: {error}"))),
    };
    running
        .waiting()
        .await
        .map_err(|error| Error::invalid(format!("MCP: {error}")))?;
    Ok(())
}
