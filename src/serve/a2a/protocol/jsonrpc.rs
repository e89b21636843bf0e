//! JSON-RPC 2.0 as A2A binds it: a request read, or refused with the error JSON-RPC gives;
//! the error codes of both; an answer and a refusal as sent.

use serde_json::{Map, Value, json};

use super::Version;

/// A JSON-RPC request as read: its id (echoed in the answer), method and params.
#[derive(Debug, Clone)]
pub struct Request {
    pub id: Value,
    pub method: String,
    pub params: Value,
}

/// JSON-RPC's and A2A's error codes.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Implementation-defined: the request's token was refused (A2A leaves the code to the
    /// binding; the HTTP status says 401 as well).
    pub const UNAUTHENTICATED: i64 = -32000;
    pub const TASK_NOT_FOUND: i64 = -32001;
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    pub const PUSH_NOTIFICATION_NOT_SUPPORTED: i64 = -32003;
    pub const UNSUPPORTED_OPERATION: i64 = -32004;
    pub const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
    pub const VERSION_NOT_SUPPORTED: i64 = -32009;
    /// Implementation-defined, past A2A's own (-32001 to -32009): the caller has as many
    /// streams or waits open as it may (429 in the API's terms).
    pub const RESOURCE_EXHAUSTED: i64 = -32029;
}

/// A refusal, as a JSON-RPC error: the code, baton's words (one line), and what A2A's
/// error details carry (a reason in A2A's terms, baton's hint and exit code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub reason: &'static str,
    pub hint: Option<String>,
    pub exit_code: Option<i32>,
}

impl RpcError {
    pub fn new(code: i64, reason: &'static str, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            reason,
            hint: None,
            exit_code: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> RpcError {
        self.hint = Some(hint.into());
        self
    }

    /// The `error` member: 1.0's details are a list of typed objects (an `ErrorInfo`, its
    /// metadata strings), 0.3's are free-form.
    fn to_json(&self, version: Version) -> Value {
        let mut metadata = Map::new();
        if let Some(hint) = &self.hint {
            metadata.insert("hint".into(), Value::String(hint.clone()));
        }
        if let Some(exit_code) = self.exit_code {
            metadata.insert("exitCode".into(), Value::String(exit_code.to_string()));
        }
        let data = match version {
            Version::V1 => json!([{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": self.reason,
                "domain": "baton",
                "metadata": metadata,
            }]),
            Version::V03 => {
                let mut data = metadata;
                data.insert("reason".into(), Value::String(self.reason.to_string()));
                Value::Object(data)
            }
        };
        json!({ "code": self.code, "message": self.message, "data": data })
    }
}

/// Reads one JSON-RPC request; a body that is not one is refused as JSON-RPC says (parse
/// error, invalid request), with the id when one could be read.
pub fn request(body: &[u8]) -> Result<Request, (Value, RpcError)> {
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        (
            Value::Null,
            RpcError::new(
                code::PARSE_ERROR,
                "PARSE_ERROR",
                format!("the body is not JSON: {error}"),
            ),
        )
    })?;
    let Value::Object(mut object) = value else {
        let what = match value {
            Value::Array(_) => "batches are not served: send one request per POST",
            _ => "a JSON-RPC request is an object",
        };
        return Err((
            Value::Null,
            RpcError::new(code::INVALID_REQUEST, "INVALID_REQUEST", what),
        ));
    };
    let id = match object.remove("id") {
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id,
        Some(_) => {
            return Err((
                Value::Null,
                RpcError::new(
                    code::INVALID_REQUEST,
                    "INVALID_REQUEST",
                    "the request's `id` must be a string or a number",
                ),
            ));
        }
        None => Value::Null,
    };
    let invalid = |message: &str| {
        Err((
            id.clone(),
            RpcError::new(code::INVALID_REQUEST, "INVALID_REQUEST", message),
        ))
    };
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return invalid("a JSON-RPC 2.0 request says \"jsonrpc\": \"2.0\"");
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        _ => return invalid("the request names no `method`"),
    };
    let params = object.remove("params").unwrap_or(Value::Object(Map::new()));
    Ok(Request { id, method, params })
}

/// A successful answer to the request `id`.
pub fn result(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// A refusal of the request `id`, in the details of `version`.
pub fn error(id: &Value, error: &RpcError, version: Version) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": error.to_json(version) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_that_are_not_json_rpc_are_refused_as_json_rpc_says() {
        let refused = |body: &str| request(body.as_bytes()).unwrap_err();
        assert_eq!(refused("{").1.code, code::PARSE_ERROR);
        assert_eq!(refused("[]").1.code, code::INVALID_REQUEST);
        assert_eq!(refused("3").1.code, code::INVALID_REQUEST);
        let (id, error) = refused(r#"{"id": 7, "method": "GetTask"}"#);
        assert_eq!((id, error.code), (json!(7), code::INVALID_REQUEST));
        let (_, error) = refused(r#"{"jsonrpc": "2.0", "id": {}, "method": "GetTask"}"#);
        assert_eq!(error.code, code::INVALID_REQUEST);
        let read = request(br#"{"jsonrpc": "2.0", "id": "a", "method": "GetTask"}"#).unwrap();
        assert_eq!(
            (read.id, read.method, read.params),
            (json!("a"), "GetTask".into(), json!({}))
        );
    }
}
