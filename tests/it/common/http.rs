//! HTTP on loopback for the tests, over std's sockets: a running `baton serve` ([`Served`]),
//! a small HTTP/1.1 client (enough to send any request, a forged `Host` included, and to
//! read an event stream as it comes), and a server that records what it is sent and answers
//! as a test says ([`Loopback`]: alert receivers, fake hubs, chromedriver's client).

#![allow(dead_code)]

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::{TestEnv, exit_within, stdout_lines};

/// How long a client waits for an answer before the test fails (chromedriver's slowest, a
/// new session that starts a browser, included).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// `baton token add NAME` in `env`: the token, alone on stdout.
pub fn add_token(env: &TestEnv, name: &str) -> String {
    env.run("", &["token", "add", name]).ok().trim().to_string()
}

/// A loopback port nobody listens on, for a server a test starts (or starts again) on it
/// later. Taken below the range the system hands out for port 0 and for connections
/// (32768 and up on Linux), so that no other test's server or client is given it in the
/// meantime; only another test choosing here could, one chance in thousands.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static TRIES: AtomicU64 = AtomicU64::new(0);
    let seed = u64::from(std::process::id())
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos() as u64);
    for _ in 0..1000 {
        let mixed = (seed
            ^ TRIES
                .fetch_add(1, Ordering::Relaxed)
                .wrapping_mul(0x9E37_79B9))
        .wrapping_mul(6364136223846793005)
            >> 33;
        let port = 20_000 + (mixed % 12_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port between 20000 and 32000");
}

/// `127.0.0.1:PORT` of a [`free_port`], for a server that must come back on the same one.
pub fn free_address() -> String {
    format!("127.0.0.1:{}", free_port())
}

/// Loopback addresses nothing listens on, nor will: ports no test binds and the system
/// never hands out (a port found free and let go may be another test's server a moment
/// later).
pub const CLOSED: [&str; 2] = ["127.0.0.1:1", "127.0.0.1:2"];

/// `baton serve` in a test's hub, on a free loopback port.
pub struct Served {
    child: Option<Child>,
    /// `127.0.0.1:PORT`.
    pub address: String,
    /// The URL it printed, login token in the fragment.
    pub url: String,
    /// The login token of the human it runs as.
    pub login: String,
    stdout: Receiver<String>,
}

impl Served {
    /// `baton --as HUMAN serve --listen 127.0.0.1:0`, once it has printed its URL.
    pub fn start(env: &TestEnv, human: &str) -> Served {
        Served::start_with(env, human, &[])
    }

    pub fn start_with(env: &TestEnv, human: &str, extra: &[&str]) -> Served {
        Served::start_with_vars(env, human, extra, &[])
    }

    /// As [`Served::start_with`], with `vars` set in the server's environment.
    pub fn start_with_vars(
        env: &TestEnv,
        human: &str,
        extra: &[&str],
        vars: &[(&str, &str)],
    ) -> Served {
        Served::start_at(env, human, "127.0.0.1:0", extra, vars)
    }

    /// `baton --as HUMAN serve --listen ADDRESS EXTRA…` with `vars` set: the most general
    /// form, for a server that comes back on the address it had.
    pub fn start_at(
        env: &TestEnv,
        human: &str,
        address: &str,
        extra: &[&str],
        vars: &[(&str, &str)],
    ) -> Served {
        let mut command = env.command(&env.work());
        command
            .args(["--as", human, "serve", "--listen", address])
            .args(extra)
            .envs(vars.iter().copied());
        Served::spawn(command)
    }

    /// [`Served::start`] in a process that may open at most `descriptors` files and sockets
    /// (`ulimit -n`, soft and hard), as on a system that allows few: 1,024 is Linux's usual
    /// soft limit.
    #[cfg(unix)]
    pub fn start_with_descriptors(env: &TestEnv, human: &str, descriptors: u64) -> Served {
        let baton = env.command(&env.work());
        let mut command = std::process::Command::new("sh");
        command
            .arg("-c")
            .arg(format!("ulimit -n {descriptors} && exec \"$0\" \"$@\""))
            .arg(baton.get_program())
            .args(["--as", human, "serve", "--listen", "127.0.0.1:0"])
            .current_dir(env.work())
            .stdin(Stdio::null());
        for (name, value) in baton.get_envs() {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        Served::spawn(command)
    }

    /// Runs `command`, a `baton serve`, until it has printed its URL.
    fn spawn(mut command: std::process::Command) -> Served {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().expect("baton serve starts");
        let stdout = stdout_lines(&mut child);
        let url = match stdout.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                let output = child.wait_with_output().unwrap();
                panic!(
                    "baton serve printed no URL; stderr:\n{}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        };
        let rest = url.strip_prefix("http://").expect("an http URL");
        let (address, fragment) = rest.split_once("/#token=").expect("a login token");
        Served {
            child: Some(child),
            address: address.to_string(),
            url: url.clone(),
            login: fragment.to_string(),
            stdout,
        }
    }

    pub fn port(&self) -> u16 {
        self.address.rsplit_once(':').unwrap().1.parse().unwrap()
    }

    /// The page's address: the URL it printed without the login token.
    pub fn base(&self) -> &str {
        &self.url[..self.url.find('#').expect("a fragment")]
    }

    /// A request with `token` as its bearer (none when empty), `Host` the server's own.
    #[track_caller]
    pub fn request(&self, method: &str, path: &str, token: &str, body: Option<&Value>) -> Reply {
        try_request(&self.address, method, path, token, body)
            .unwrap_or_else(|error| panic!("{method} {path} to {}: {error}", self.address))
    }

    pub fn get(&self, path: &str, token: &str) -> Reply {
        self.request("GET", path, token, None)
    }

    pub fn post(&self, path: &str, token: &str, body: &Value) -> Reply {
        self.request("POST", path, token, Some(body))
    }

    /// Opens `/api/v1/events` as `token`, returning once the server answered (the stream is
    /// then subscribed to every change that follows); its events arrive on the receiver as
    /// they come.
    pub fn events(&self, token: &str) -> Receiver<Value> {
        events_at(&self.address, token)
    }

    /// Opens `/api/v1/events` as `token` and reads the answer's head: the connection, left
    /// open, when the stream opened; else the whole refusal.
    pub fn open_events(&self, token: &str) -> Result<BufReader<TcpStream>, Reply> {
        let stream = open(
            &self.address,
            "GET",
            "/api/v1/events",
            &[
                ("Host", &self.address),
                ("Authorization", &format!("Bearer {token}")),
                ("Accept", "text/event-stream"),
            ],
        );
        stream.set_read_timeout(Some(ANSWER_TIMEOUT)).unwrap();
        let mut reader = BufReader::new(stream);
        let head = read_head(&mut reader).expect("the event stream's head");
        if head.status == 200 {
            return Ok(reader);
        }
        let length = head
            .header("content-length")
            .and_then(|length| length.parse().ok())
            .expect("a refusal's length");
        let mut body = vec![0; length];
        reader.read_exact(&mut body).expect("the refusal's body");
        Err(Reply {
            status: head.status,
            headers: head.headers,
            body: String::from_utf8(body).expect("a refusal in UTF-8"),
        })
    }

    /// SIGTERM, without waiting: the server drains (docs/load-balancer.md).
    pub fn terminate(&self) {
        let child = self.child.as_ref().expect("the server runs");
        let status = std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// SIGTERM, then the exit status and what it wrote to stderr.
    pub fn stop(self) -> (ExitStatus, String) {
        self.terminate();
        self.stop_waited()
    }

    /// Once it has exited (after [`Served::terminate`]): its exit status and stderr.
    pub fn stop_waited(mut self) -> (ExitStatus, String) {
        let mut child = self.child.take().unwrap();
        let status = exit_within(
            &mut child,
            Duration::from_secs(30),
            "baton serve, sent SIGTERM",
            String::new,
        );
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (status, stderr)
    }

    /// SIGKILL, as a crash or the OOM killer ends it: nothing of its own runs after.
    pub fn kill(mut self) {
        let mut child = self.child.take().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// Lines it printed on stdout after the URL.
    pub fn more_stdout(&self) -> Vec<String> {
        self.stdout.try_iter().collect()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `/api/v1/events` at `address` (a hub, or a balancer in front) as `token`: see
/// [`Served::events`].
pub fn events_at(address: &str, token: &str) -> Receiver<Value> {
    let stream = open(
        address,
        "GET",
        "/api/v1/events",
        &[
            ("Host", address),
            ("Authorization", &format!("Bearer {token}")),
            ("Accept", "text/event-stream"),
        ],
    );
    let (events, arrived) = mpsc::channel();
    let (opened, is_open) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let head = read_head(&mut reader).expect("the event stream's head");
        assert_eq!(
            head.status, 200,
            "the event stream opens: {:?}",
            head.headers
        );
        let _ = opened.send(());
        let chunked = head.header("transfer-encoding") == Some("chunked");
        let mut text = String::new();
        loop {
            let piece = if chunked {
                match read_chunk(&mut reader) {
                    Some(piece) => piece,
                    None => return,
                }
            } else {
                let mut buffer = vec![0; 4096];
                match reader.read(&mut buffer) {
                    Ok(0) | Err(_) => return,
                    Ok(read) => buffer[..read].to_vec(),
                }
            };
            text.push_str(&String::from_utf8_lossy(&piece));
            while let Some(end) = text.find("\n\n") {
                let event: String = text.drain(..end + 2).collect();
                for line in event.lines() {
                    if let Some(data) = line.strip_prefix("data: ")
                        && events.send(serde_json::from_str(data).unwrap()).is_err()
                    {
                        return;
                    }
                }
            }
        }
    });
    // The server answers once the stream is subscribed to the hub's changes: from here
    // on, no change is missed.
    is_open
        .recv_timeout(ANSWER_TIMEOUT)
        .expect("the event stream answers 200");
    arrived
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {} {}", self.status, self.body))
    }

    /// Asserts a 200 and gives the JSON body.
    #[track_caller]
    pub fn ok(&self) -> Value {
        assert_eq!(self.status, 200, "{}", self.body);
        self.json()
    }
}

/// A request to `address` with `token` as its bearer (none when empty), `Host` the
/// address itself and `body` as JSON; what went wrong on the way as an error.
pub fn try_request(
    address: &str,
    method: &str,
    path: &str,
    token: &str,
    body: Option<&Value>,
) -> io::Result<Reply> {
    let mut headers = vec![("Host".to_string(), address.to_string())];
    if !token.is_empty() {
        headers.push(("Authorization".to_string(), format!("Bearer {token}")));
    }
    let body = body.map(|body| body.to_string());
    if body.is_some() {
        headers.push(("Content-Type".to_string(), "application/json".to_string()));
    }
    try_send(address, method, path, &headers, body.as_deref())
}

/// One request on a connection of its own, read to its end.
#[track_caller]
pub fn send(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&str>,
) -> Reply {
    try_send(address, method, path, headers, body)
        .unwrap_or_else(|error| panic!("{method} {path} to {address}: {error}"))
}

/// A request to `/mcp` of `hub`, written by hand, as `token`: `session` is none for
/// `initialize`, else the session's id, sent with the `protocol` version it negotiated.
pub fn mcp_request(
    hub: &Served,
    method: &str,
    token: &str,
    session: Option<&str>,
    protocol: &str,
    body: &Value,
) -> Reply {
    let mut headers = vec![
        ("Host".to_string(), hub.address.clone()),
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
        (
            "Accept".to_string(),
            "application/json, text/event-stream".to_string(),
        ),
    ];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id".to_string(), session.to_string()));
        headers.push(("MCP-Protocol-Version".to_string(), protocol.to_string()));
    }
    let body = (method == "POST").then(|| body.to_string());
    send(&hub.address, method, "/mcp", &headers, body.as_deref())
}

/// [`send`], with what went wrong on the way (no server, a connection cut short) as an
/// error rather than a failed test. The body is read as its head says: chunked, by its
/// `Content-Length` (chromedriver keeps a connection open whatever the request asks), or
/// to the connection's end.
pub fn try_send(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&str>,
) -> io::Result<Reply> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(ANSWER_TIMEOUT))?;
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = body.unwrap_or("");
    if !body.is_empty() || method == "POST" {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes())?;
    read_reply(&mut BufReader::new(stream))
}

/// An answer read from `reader`: its head, then its body as the head says (see
/// [`try_send`]).
pub fn read_reply(reader: &mut BufReader<TcpStream>) -> io::Result<Reply> {
    let mut reader = reader;
    let head = read_head(&mut reader)?;
    let mut bytes = Vec::new();
    if head.header("transfer-encoding") == Some("chunked") {
        while let Some(piece) = read_chunk(&mut reader) {
            bytes.extend(piece);
        }
    } else if let Some(length) = head
        .header("content-length")
        .and_then(|length| length.parse::<usize>().ok())
    {
        bytes.resize(length, 0);
        reader.read_exact(&mut bytes)?;
    } else {
        reader.read_to_end(&mut bytes)?;
    }
    Ok(Reply {
        status: head.status,
        headers: head.headers,
        body: String::from_utf8(bytes).map_err(|_| invalid("a body that is not UTF-8"))?,
    })
}

/// A request's head written on a connection of its own, left open for the caller to read
/// (an event stream) or to hold without reading (a stalled client).
pub fn open(address: &str, method: &str, path: &str, headers: &[(&str, &str)]) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream
}

/// [`open`], returning once the server has answered 200: its head read, the rest left for
/// the caller to read or to hold unread.
pub fn open_answered(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> BufReader<TcpStream> {
    let stream = open(address, method, path, headers);
    stream.set_read_timeout(Some(ANSWER_TIMEOUT)).unwrap();
    let mut reader = BufReader::new(stream);
    let head = read_head(&mut reader).expect("an answer's head");
    assert_eq!(head.status, 200, "{path} answers: {:?}", head.headers);
    reader.get_ref().set_read_timeout(None).unwrap();
    reader
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

struct Head {
    status: u16,
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

/// The value of the header `name` (in any case) among `headers`.
fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

fn read_head(reader: &mut impl BufRead) -> io::Result<Head> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| invalid(&format!("not an HTTP status line: {line:?}")))?;
    let headers = read_headers(reader)?;
    Ok(Head { status, headers })
}

/// Header lines up to the blank line that ends them.
fn read_headers(reader: &mut impl BufRead) -> io::Result<Vec<(String, String)>> {
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(invalid("the connection closed before the headers ended"));
        }
        let line = line.trim_end();
        if line.is_empty() {
            return Ok(headers);
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| invalid(&format!("not a header: {line:?}")))?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
}

/// The next chunk of a chunked body; `None` at its end or when the connection closes.
fn read_chunk(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut size = String::new();
    if reader.read_line(&mut size).ok()? == 0 {
        return None;
    }
    let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
    if size == 0 {
        return None;
    }
    let mut piece = vec![0; size + 2];
    reader.read_exact(&mut piece).ok()?;
    piece.truncate(size);
    Some(piece)
}

/// One request a [`Loopback`] server took.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// As sent; [`Request::header`] finds one in any case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("a UTF-8 body")
    }
}

/// An HTTP/1.1 server on loopback, a thread per connection: it reads each request whole,
/// records it, then answers it as the test says. Recorded before answered, so whoever got
/// the answer finds the request among [`Loopback::requests`].
pub struct Loopback {
    /// `127.0.0.1:PORT`.
    pub address: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Loopback {
    /// `answer` writes its answer to a request it took on the stream (or holds the stream,
    /// or says nothing).
    pub fn start(answer: impl Fn(&Request, &mut TcpStream) + Send + Sync + 'static) -> Loopback {
        Loopback::on(
            TcpListener::bind("127.0.0.1:0").expect("a loopback port"),
            answer,
        )
    }

    /// On a listener the test bound itself (a port it chose first).
    pub fn on(
        listener: TcpListener,
        answer: impl Fn(&Request, &mut TcpStream) + Send + Sync + 'static,
    ) -> Loopback {
        let address = listener.local_addr().unwrap().to_string();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&requests);
        let answer = Arc::new(answer);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let record = Arc::clone(&record);
                let answer = Arc::clone(&answer);
                std::thread::spawn(move || {
                    let Some(request) = read_request(&stream) else {
                        return;
                    };
                    record.lock().unwrap().push(request.clone());
                    answer(&request, &mut stream);
                });
            }
        });
        Loopback { address, requests }
    }

    /// The requests taken so far, in the order they were read.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

/// A whole request (its body by `Content-Length`); `None` when the connection ends first.
fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let headers = read_headers(&mut reader).ok()?;
    let length: usize = header(&headers, "content-length")
        .and_then(|length| length.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

/// An answer with `status` and a JSON body, the connection closed after it.
pub fn answer_json(stream: &mut TcpStream, status: u16, value: &Value) {
    let body = value.to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
}
