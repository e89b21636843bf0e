//! The tools of reservations (SPEC section 18.2): `reserve`, `unreserve` and
//! `reservations`, a router of their own added to the server's.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::schemars::{self, JsonSchema};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::{BatonServer, ProjectArgs, TaskNumber, ToolResult, text_schema};
use crate::session::reservations::{ReserveAsk, UnreserveAsk};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReserveArgs {
    /// Paths/globs from the workspace root (src/date/**, docs/) or KIND:NAME
    pub patterns: Vec<String>,
    /// Your task it is for
    #[serde(default)]
    pub task: Option<TaskNumber>,
    /// How long, in minutes (default: the project's lease; at most 7 days)
    #[serde(default)]
    pub minutes: Option<u64>,
    /// Let others hold it shared too
    #[serde(default)]
    pub shared: bool,
    #[serde(default)]
    #[schemars(schema_with = "text_schema")]
    pub reason: Option<String>,
    #[serde(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UnreserveArgs {
    /// The patterns as reserved; all of yours when left out
    #[serde(default)]
    pub patterns: Option<Vec<String>>,
    /// Another agent's (coordinator or human only)
    #[serde(default)]
    #[schemars(schema_with = "text_schema")]
    pub agent: Option<String>,
    #[serde(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReservationsArgs {
    /// Only yours
    #[serde(default)]
    pub mine: bool,
    #[serde(flatten)]
    pub project: ProjectArgs,
}

#[tool_router(router = reserve_tools, vis = "pub(super)")]
impl BatonServer {
    #[tool(description = "Reserve paths you will change; others' overlapping work waits.")]
    async fn reserve(&self, Parameters(args): Parameters<ReserveArgs>) -> ToolResult {
        let ask = ReserveAsk {
            patterns: args.patterns,
            task: args.task.map(|TaskNumber(id)| id),
            seconds: args.minutes.map(|minutes| minutes.saturating_mul(60)),
            shared: args.shared,
            reason: args.reason,
        };
        self.respond(args.project.project, move |desk| desk.reserve(ask))
            .await
    }

    #[tool(description = "End your reservations (all, or the patterns named).")]
    async fn unreserve(&self, Parameters(args): Parameters<UnreserveArgs>) -> ToolResult {
        let ask = UnreserveAsk {
            patterns: args.patterns,
            agent: args.agent.filter(|agent| !agent.is_empty()),
        };
        let report_wake = self.report_wake;
        self.respond(args.project.project, move |desk| {
            let ended = desk.unreserve(ask)?;
            ended.woken.iter().for_each(report_wake);
            Ok(ended)
        })
        .await
    }

    #[tool(
        description = "Who holds which paths now.",
        annotations(read_only_hint = true)
    )]
    async fn reservations(&self, Parameters(args): Parameters<ReservationsArgs>) -> ToolResult {
        let mine = args.mine;
        self.respond_list(args.project.project, "reservations", move |desk| {
            desk.reservations(mine)
        })
        .await
    }
}
