//! The Agent Card as both versions read it.

use serde::Serialize;
use serde_json::{Value, json};

/// An Agent Card, readable by clients of both versions: 1.0's members
/// (`supportedInterfaces`, `securityRequirements`, the typed security scheme) beside 0.3's
/// (`url`, `preferredTransport`, `protocolVersion`, `security`, the scheme's `type`); each
/// version's readers skip the other's.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    pub name: String,
    pub description: String,
    pub version: String,
    pub supported_interfaces: Vec<Value>,
    pub url: String,
    pub preferred_transport: &'static str,
    pub protocol_version: &'static str,
    pub capabilities: Value,
    pub security_schemes: Value,
    pub security_requirements: Value,
    pub security: Value,
    pub default_input_modes: Vec<&'static str>,
    pub default_output_modes: Vec<&'static str>,
    pub skills: Vec<Skill>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    pub id: String,
    pub name: String,
    pub description: String,
    pub tags: Vec<String>,
}

/// The name the bearer scheme goes by in a card.
const BEARER: &str = "bearer";

impl AgentCard {
    /// A card whose JSON-RPC endpoint is `url`.
    pub fn new(name: String, description: String, url: String, skills: Vec<Skill>) -> AgentCard {
        let interface = |version: &str| json!({ "url": url, "protocolBinding": "JSONRPC", "protocolVersion": version });
        let words = "a baton token (`baton token add NAME` on the hub), sent as \
                     `Authorization: Bearer TOKEN`; it is the caller's identity";
        AgentCard {
            name,
            description,
            version: env!("CARGO_PKG_VERSION").to_string(),
            supported_interfaces: vec![interface("1.0"), interface("0.3")],
            url: url.clone(),
            preferred_transport: "JSONRPC",
            protocol_version: "0.3.0",
            capabilities: json!({
                "streaming": true,
                "pushNotifications": false,
                "extendedAgentCard": false,
                "stateTransitionHistory": false,
            }),
            security_schemes: json!({
                BEARER: {
                    "httpAuthSecurityScheme": { "scheme": "Bearer", "description": words },
                    "type": "http",
                    "scheme": "bearer",
                    "description": words,
                }
            }),
            security_requirements: json!([{ "schemes": { BEARER: { "list": [] } } }]),
            security: json!([{ BEARER: [] }]),
            default_input_modes: vec!["text/plain"],
            default_output_modes: vec!["text/plain"],
            skills,
        }
    }
}
