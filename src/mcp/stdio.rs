//! The stdio transport of `baton mcp`: one JSON-RPC message per line each way.
//!
//! rmcp's own line transport stays silent on a line that is not JSON and on a batch, and
//! drops an over-long line without a word, so a client waiting on those requests hangs
//! until its timeout. This one reads each line with a bound, answers every line it cannot
//! pass on with a JSON-RPC error, and goes on with the next line.

use std::io;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::ErrorCode;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

/// The longest request line read. A request carries at most a few texts of 256 KiB (the
/// input rules of SPEC section 10), so this leaves ample room and still bounds memory.
pub const MAX_LINE: usize = 4 * 1024 * 1024;

/// A server transport over a reader and a writer (stdin and stdout).
pub struct LineTransport<R, W> {
    reader: BufReader<R>,
    /// The line read so far. It lives here, not in [`LineTransport::receive`], because
    /// rmcp drops a pending `receive` whenever it has something to send: the next call
    /// goes on with the same line.
    line: Vec<u8>,
    /// Set while skipping the rest of an over-long line, already answered.
    is_skipping: bool,
    writer: Arc<Mutex<W>>,
    /// Error answers being written, each on a task of its own so that a dropped `receive`
    /// cannot cut one short; awaited before the transport reports the end of input.
    answers: Vec<JoinHandle<()>>,
}

/// How one bounded read of a line ended.
enum Read {
    /// A whole line is in `line`.
    Line,
    /// The line passed [`MAX_LINE`]; what was read of it is gone.
    TooLong,
    /// The input ended (or failed); a last line without its newline is not a message.
    End,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub fn new(reader: R, writer: W) -> Self {
        LineTransport {
            reader: BufReader::with_capacity(64 * 1024, reader),
            line: Vec::new(),
            is_skipping: false,
            writer: Arc::new(Mutex::new(writer)),
            answers: Vec::new(),
        }
    }

    /// Reads up to the next newline into `line`, never holding more than [`MAX_LINE`].
    /// Only whole steps are taken between awaits, so a dropped call loses nothing.
    async fn read_line(&mut self) -> Read {
        loop {
            let available = match self.reader.fill_buf().await {
                Ok([]) | Err(_) => return Read::End,
                Ok(available) => available,
            };
            let newline = available.iter().position(|&byte| byte == b'\n');
            let taken = newline.map_or(available.len(), |at| at + 1);
            let outcome = if self.is_skipping {
                self.is_skipping = newline.is_none();
                None
            } else if self.line.len() + taken > MAX_LINE {
                self.line.clear();
                self.is_skipping = newline.is_none();
                Some(Read::TooLong)
            } else {
                self.line.extend_from_slice(&available[..taken]);
                newline.map(|_| Read::Line)
            };
            self.reader.consume(taken);
            if let Some(outcome) = outcome {
                return outcome;
            }
        }
    }

    /// Writes `answer` as one line, on a task of its own.
    fn answer(&mut self, answer: Value) {
        self.answers.retain(|task| !task.is_finished());
        let writer = self.writer.clone();
        self.answers.push(tokio::spawn(async move {
            let mut frame = answer.to_string().into_bytes();
            frame.push(b'\n');
            // A client that stopped reading learns nothing from an error here either.
            let _ = write_frame(&writer, &frame).await;
        }));
    }
}

async fn write_frame<W: AsyncWrite + Unpin>(writer: &Mutex<W>, frame: &[u8]) -> io::Result<()> {
    let mut writer = writer.lock().await;
    writer.write_all(frame).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let frame = serde_json::to_vec(&item).map(|mut frame| {
            frame.push(b'\n');
            frame
        });
        let writer = self.writer.clone();
        async move { write_frame(&writer, &frame.map_err(io::Error::other)?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Read::Line => {}
                Read::TooLong => {
                    self.answer(error(
                        Value::Null,
                        ErrorCode::INVALID_REQUEST,
                        &format!(
                            "Invalid Request: the line is longer than {} MiB; it was dropped \
                             unread",
                            MAX_LINE / (1024 * 1024)
                        ),
                    ));
                    continue;
                }
                Read::End => {
                    for task in self.answers.drain(..) {
                        let _ = task.await;
                    }
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            match judge(&line) {
                Verdict::Message(message) => return Some(*message),
                Verdict::Skip => {}
                Verdict::Answer(answer) => self.answer(answer),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.shutdown().await
    }
}

/// What becomes of one line from the client.
#[derive(Debug)]
enum Verdict {
    /// A message for the server (boxed: it is large, and the other verdicts small).
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do: a blank line, or a notification or response the server cannot read
    /// (JSON-RPC answers neither, and answering a response could start an endless echo).
    Skip,
    /// Not a message the server can take: this error answer goes back instead.
    Answer(Value),
}

fn judge(line: &[u8]) -> Verdict {
    // A byte order mark may open the stream (RFC 8259 section 8.1 lets a reader skip it).
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.trim_ascii();
    if line.is_empty() {
        return Verdict::Skip;
    }
    if let Ok(message) = serde_json::from_slice(line) {
        return Verdict::Message(Box::new(message));
    }
    match serde_json::from_slice::<Value>(line) {
        Err(_) => Verdict::Answer(error(
            Value::Null,
            ErrorCode::PARSE_ERROR,
            "Parse error: the line is not JSON",
        )),
        Ok(Value::Array(batch)) => Verdict::Answer(batch_answer(&batch)),
        Ok(value) if needs_no_answer(&value) => Verdict::Skip,
        Ok(value) => Verdict::Answer(error(
            request_id(&value),
            ErrorCode::INVALID_REQUEST,
            "Invalid Request: not a JSON-RPC 2.0 message this server takes",
        )),
    }
}

/// Why a batch is refused: MCP dropped JSON-RPC batching in its 2025-06-18 revision, and
/// every client baton serves sends one message per line.
const NO_BATCHES: &str = "Invalid Request: batches are not supported (MCP has had none since \
     2025-06-18); send each message on a line of its own";

/// The answer to a batch: JSON-RPC 2.0's own shape for it, an array with an answer for
/// each request, so a client waiting on any of their ids hears back at once rather than
/// at its timeout. A batch with no request in it (empty, or notifications only) gets one
/// error instead of silence.
fn batch_answer(batch: &[Value]) -> Value {
    let answers: Vec<Value> = batch
        .iter()
        .filter(|item| !needs_no_answer(item))
        .map(|item| error(request_id(item), ErrorCode::INVALID_REQUEST, NO_BATCHES))
        .collect();
    if answers.is_empty() {
        return error(Value::Null, ErrorCode::INVALID_REQUEST, NO_BATCHES);
    }
    Value::Array(answers)
}

/// A JSON-RPC notification (a method and no id) or a response (a result or an error and
/// no method).
fn needs_no_answer(value: &Value) -> bool {
    match value.get("method") {
        Some(method) => method.is_string() && value.get("id").is_none(),
        None => value.get("result").is_some() || value.get("error").is_some(),
    }
}

/// The id to answer `value` with: its own when it is a valid one, else null.
fn request_id(value: &Value) -> Value {
    match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// A JSON-RPC 2.0 error answer. Written as JSON here rather than through rmcp, whose
/// error message leaves out an unknown id where JSON-RPC 2.0 wants `"id": null`.
fn error(id: Value, code: ErrorCode, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match judge(line.as_bytes()) {
            Verdict::Answer(answer) => answer,
            other => panic!("expected an error answer to {line:?}, got {other:?}"),
        }
    }

    #[test]
    fn lines_that_are_not_json_get_a_parse_error_with_a_null_id() {
        for line in [
            "{not json",
            "{\"jsonrpc\": \"2.0\", \"id\": 1",
            "\u{1b}[2J",
            "nul\0l",
        ] {
            let answer = answer(line);
            assert_eq!(answer["error"]["code"], -32700, "{line:?}");
            assert!(answer["id"].is_null(), "{line:?}");
            assert_eq!(answer["jsonrpc"], "2.0");
        }
    }

    #[test]
    fn a_batch_gets_an_error_for_each_request_and_never_silence() {
        let answers = answer(
            r#"[{"jsonrpc":"2.0","id":7,"method":"ping"},
                {"jsonrpc":"2.0","method":"notifications/initialized"},
                {"jsonrpc":"2.0","id":"x","method":"tools/list"}, 5]"#,
        );
        let answers = answers.as_array().unwrap();
        let ids: Vec<&Value> = answers.iter().map(|answer| &answer["id"]).collect();
        assert_eq!(ids, [&json!(7), &json!("x"), &Value::Null]);
        assert!(
            answers
                .iter()
                .all(|answer| answer["error"]["code"] == -32600)
        );
        for line in [
            "[]",
            r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
        ] {
            let answer = answer(line);
            assert_eq!(answer["error"]["code"], -32600, "{line}");
            assert!(answer["id"].is_null(), "{line}");
        }
    }

    #[test]
    fn json_that_is_no_message_is_an_invalid_request_and_keeps_its_id() {
        let answer = answer(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":5}"#);
        assert_eq!(answer["error"]["code"], -32600);
        assert_eq!(answer["id"], 3);
        for line in ["5", "\"ping\"", "{}", r#"{"id":{"a":1},"method":"ping"}"#] {
            let answer = self::answer(line);
            assert_eq!(answer["error"]["code"], -32600, "{line}");
            assert!(answer["id"].is_null(), "{line}");
        }
    }

    #[test]
    fn messages_pass_and_blank_lines_are_skipped() {
        let ping = judge(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n");
        assert!(matches!(ping, Verdict::Message(_)), "{ping:?}");
        assert!(matches!(judge(b"  \r\n"), Verdict::Skip));
        // Unreadable notifications and responses are dropped, never answered.
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":5,"error":5}"#,
            r#"{"result":{}}"#,
        ] {
            assert!(matches!(judge(line.as_bytes()), Verdict::Skip), "{line}");
        }
    }

    #[tokio::test]
    async fn an_over_long_line_is_answered_and_the_next_is_served() {
        let mut input = vec![b' '; MAX_LINE + 10];
        input.extend_from_slice(b"{}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
        let (mut client, server_output) = tokio::io::duplex(1024);
        let mut transport = LineTransport::new(std::io::Cursor::new(input), server_output);
        let message = transport
            .receive()
            .await
            .expect("the ping after the long line");
        let message = serde_json::to_value(&message).unwrap();
        assert_eq!(message["id"], 2);
        assert!(transport.receive().await.is_none(), "the end of input");
        drop(transport);
        let mut output = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut client, &mut output)
            .await
            .unwrap();
        let answer: Value = serde_json::from_str(output.trim_end()).unwrap();
        assert_eq!(answer["error"]["code"], -32600);
        assert!(answer["id"].is_null());
    }
}
