//! A running `baton serve` for a test, and a small HTTP/1.1 client over a real socket on
//! loopback: enough to send any request (a forged `Host` included) and to read an event
//! stream as it comes.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{TestEnv, stdout_lines};

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
        let mut command = env.command(&env.work());
        command
            .args(["--as", human, "serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .envs(vars.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
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

    /// A request with `token` as its bearer (none when empty), `Host` the server's own.
    pub fn request(&self, method: &str, path: &str, token: &str, body: Option<&Value>) -> Reply {
        let mut headers = vec![("Host".to_string(), self.address.clone())];
        if !token.is_empty() {
            headers.push(("Authorization".to_string(), format!("Bearer {token}")));
        }
        let body = body.map(|body| body.to_string());
        if body.is_some() {
            headers.push(("Content-Type".to_string(), "application/json".to_string()));
        }
        send(&self.address, method, path, &headers, body.as_deref())
    }

    pub fn get(&self, path: &str, token: &str) -> Reply {
        self.request("GET", path, token, None)
    }

    pub fn post(&self, path: &str, token: &str, body: &Value) -> Reply {
        self.request("POST", path, token, Some(body))
    }

    /// Opens `/api/v1/events` as `token`; its events arrive on the receiver as they come.
    pub fn events(&self, token: &str) -> Receiver<Value> {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        write!(
            stream,
            "GET /api/v1/events HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
             Accept: text/event-stream\r\n\r\n",
            self.address
        )
        .unwrap();
        let (events, arrived) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stream);
            let head = read_head(&mut reader);
            assert_eq!(
                head.status, 200,
                "the event stream opens: {:?}",
                head.headers
            );
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
        arrived
    }

    /// SIGTERM, then the exit status and what it wrote to stderr.
    pub fn stop(mut self) -> (ExitStatus, String) {
        let mut child = self.child.take().unwrap();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let mut stderr = String::new();
                child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut stderr)
                    .unwrap();
                return (status, stderr);
            }
            assert!(
                Instant::now() < deadline,
                "baton serve did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
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

/// An HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
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

/// One request on a connection of its own, read to its end.
pub fn send(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&str>,
) -> Reply {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
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
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let head = read_head(&mut reader);
    let mut bytes = Vec::new();
    if head.header("transfer-encoding") == Some("chunked") {
        while let Some(piece) = read_chunk(&mut reader) {
            bytes.extend(piece);
        }
    } else {
        reader.read_to_end(&mut bytes).unwrap();
    }
    Reply {
        status: head.status,
        headers: head.headers,
        body: String::from_utf8(bytes).expect("a UTF-8 body"),
    }
}

struct Head {
    status: u16,
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

fn read_head(reader: &mut impl BufRead) -> Head {
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP status line: {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    Head { status, headers }
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

/// Waits up to 20 s for `found` to give something; the last thing it saw on failure.
#[track_caller]
pub fn eventually<T>(what: &str, mut found: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(value) = found() {
            return value;
        }
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
