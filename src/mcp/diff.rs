//! The `diff` tool (SPEC section 18.4): a task's changes against its base, as `diff --json`
//! gives them; a router of its own added to the server's.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::schemars::{self, JsonSchema};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::{BatonServer, ProjectArgs, TaskNumber, ToolResult};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DiffArgs {
    pub id: TaskNumber,
    /// Only files and counts, no hunks
    #[serde(default)]
    pub stat: bool,
    #[serde(flatten)]
    pub project: ProjectArgs,
}

#[tool_router(router = diff_tools, vis = "pub(super)")]
impl BatonServer {
    #[tool(
        description = "A task's changes against its base: committed, and uncommitted in its worktree.",
        annotations(read_only_hint = true)
    )]
    async fn diff(&self, Parameters(args): Parameters<DiffArgs>) -> ToolResult {
        let TaskNumber(id) = args.id;
        let stat = args.stat;
        self.respond(args.project.project, move |desk| desk.diff(id, stat))
            .await
    }
}
