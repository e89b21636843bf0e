//! The tools of reservations (SPEC section 18.2): `reserve`, `unreserve` and
//! `reservations`, a router of their own added to the server's.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::schemars::{self, JsonSchema, Schema, SchemaGenerator, json_schema};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::{BatonServer, ProjectArgs, TaskNumber, ToolResult, text_schema};
use crate::session::reservations::{ReserveAsk, UnreserveAsk};

/// A number that may be left out, as a plain schema (no `null`, no `format`).
fn whole_number(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 1 })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReserveArgs {
    /// Paths/globs from the workspace root (src/date/**, docs/) or KIND:NAME
    pub patterns: Vec<String>,
    /// Your task it is for
    #[serde(default)]
    #[schemars(schema_with = "whole_number")]
    pub task: Option<TaskNumber>,
    /// How long, in minutes (default: the project's lease; at most 7 days)
    #[serde(default)]
    #[schemars(schema_with = "whole_number")]
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
    /// The patterns as reserved
    #[serde(default)]
    pub patterns: Vec<String>,
    /// All of them instead
    #[serde(default)]
    pub all: bool,
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

    #[tool(description = "End your reservations: the patterns named, or all.")]
    async fn unreserve(&self, Parameters(args): Parameters<UnreserveArgs>) -> ToolResult {
        let ask = UnreserveAsk {
            patterns: (!args.all).then_some(args.patterns),
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
