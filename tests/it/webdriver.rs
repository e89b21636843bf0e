//! A small W3C WebDriver client for the web board's test (web.rs): chromedriver started on a
//! free loopback port, spoken to over HTTP/1.1 with the tests' client (http.rs), one
//! headless Chromium session in a profile of its own. Only what the test needs: navigate,
//! find by CSS, click, type, read text, run a script, look for an alert, size the window,
//! open and switch tabs.

use std::fs::File;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::http::{free_port, try_send};

/// The key under which WebDriver names an element (W3C's web element identifier).
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// What chromedriver answered when a command failed: its `error` code and `message`.
#[derive(Debug)]
pub struct WebDriverError {
    pub error: String,
    pub message: String,
}

impl std::fmt::Display for WebDriverError {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(out, "{}: {}", self.error, self.message)
    }
}

/// chromedriver and one browser session; both end when this is dropped.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    profile: tempfile::TempDir,
}

impl Browser {
    /// Starts `chromedriver` and a headless Chromium session, the browser's languages set
    /// to `languages` (its setting, sent as `Accept-Language`: `de-DE,de`) when given.
    pub fn start(chromedriver: &Path, languages: Option<&str>) -> Browser {
        let profile = tempfile::tempdir().expect("a temporary directory");
        let log = profile.path().join("chromedriver.log");
        let (driver, port) = start_driver(chromedriver, &log);
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
            profile,
        };
        let user_data = browser.profile.path().join("chromium");
        let mut options = json!({"args": [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            format!("--user-data-dir={}", user_data.display()),
        ]});
        if let Some(languages) = languages {
            options["prefs"] = json!({ "intl.accept_languages": languages });
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": options,
        }}});
        let created = browser
            .request("POST", "/session", Some(&capabilities))
            .unwrap_or_else(|error| {
                panic!(
                    "chromedriver could not start a browser: {error}\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            });
        browser.session = created["sessionId"]
            .as_str()
            .expect("a session id")
            .to_string();
        browser
    }

    /// Opens `url` and waits for the page to load.
    pub fn goto(&self, url: &str) {
        self.command("POST", "url", json!({ "url": url }))
            .expect("the page opens");
    }

    /// The first element matching `css`, if there is one now.
    pub fn find(&self, css: &str) -> Option<String> {
        let found = self.command(
            "POST",
            "element",
            json!({"using": "css selector", "value": css}),
        );
        match found {
            Ok(value) => Some(value[ELEMENT_KEY].as_str().expect("an element").to_string()),
            Err(error) if error.error == "no such element" => None,
            Err(error) => panic!("finding {css}: {error}"),
        }
    }

    /// Clicks the element matching `css` as a user would (it must be shown), retrying while
    /// the page replaces it under the click, until `deadline`.
    pub fn click(&self, css: &str, deadline: Instant) {
        self.on_element(css, deadline, "click", |element| {
            self.command("POST", &format!("element/{element}/click"), json!({}))
        });
    }

    /// Types `text` into the element matching `css`.
    pub fn type_into(&self, css: &str, text: &str, deadline: Instant) {
        self.on_element(css, deadline, "type into", |element| {
            self.command(
                "POST",
                &format!("element/{element}/value"),
                json!({ "text": text }),
            )
        });
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page and returns
    /// what it returns.
    pub fn execute(&self, script: &str, args: &[Value]) -> Value {
        self.command(
            "POST",
            "execute/sync",
            json!({"script": script, "args": args}),
        )
        .unwrap_or_else(|error| panic!("the script failed: {error}\n{script}"))
    }

    /// Sets the size of the browser's window; what the page gets is its viewport, a little
    /// less where the browser draws anything around it.
    pub fn set_window_size(&self, width: u32, height: u32) {
        self.command(
            "POST",
            "window/rect",
            json!({"width": width, "height": height}),
        )
        .expect("the window takes the size");
    }

    /// Opens a new tab, as a link from another program opens one, and switches to it;
    /// returns the handle of the tab it came from.
    pub fn new_tab(&self) -> String {
        let current = self.current_tab();
        let opened = self
            .command("POST", "window/new", json!({"type": "tab"}))
            .expect("a new tab opens");
        let handle = opened["handle"].as_str().expect("a handle").to_string();
        self.switch_to(&handle);
        current
    }

    /// The handle of the tab commands go to.
    pub fn current_tab(&self) -> String {
        self.command("GET", "window", Value::Null)
            .expect("the current tab")
            .as_str()
            .expect("a handle")
            .to_string()
    }

    /// Sends the commands that follow to the tab `handle`.
    pub fn switch_to(&self, handle: &str) {
        self.command("POST", "window", json!({ "handle": handle }))
            .expect("the tab is there");
    }

    /// The text of the alert, confirm or prompt the page has open, if any.
    pub fn alert_text(&self) -> Option<String> {
        match self.command("GET", "alert/text", Value::Null) {
            Ok(value) => Some(value.as_str().unwrap_or_default().to_string()),
            Err(error) if error.error == "no such alert" => None,
            Err(error) => panic!("asking for an alert: {error}"),
        }
    }

    /// Runs `act` on the element matching `css`, again while the element is missing,
    /// replaced (stale) or not yet interactable, until `deadline`.
    fn on_element(
        &self,
        css: &str,
        deadline: Instant,
        what: &str,
        act: impl Fn(&str) -> Result<Value, WebDriverError>,
    ) {
        let mut last = None;
        while Instant::now() < deadline {
            if let Some(element) = self.find(css) {
                match act(&element) {
                    Ok(_) => return,
                    Err(error)
                        if matches!(
                            error.error.as_str(),
                            "stale element reference"
                                | "element not interactable"
                                | "element click intercepted"
                        ) =>
                    {
                        last = Some(error)
                    }
                    Err(error) => panic!("{what} {css}: {error}"),
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "could not {what} {css} before the deadline; last: {}",
            last.map(|error| error.to_string())
                .unwrap_or_else(|| "not found".to_string())
        );
    }

    /// A command on this session: `path` is under `/session/{id}/`.
    fn command(&self, method: &str, path: &str, body: Value) -> Result<Value, WebDriverError> {
        let path = format!("/session/{}/{path}", self.session);
        let body = (method == "POST").then_some(body);
        self.request(method, &path, body.as_ref())
    }

    /// One request to chromedriver; its `value` on success.
    fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, WebDriverError> {
        let (status, value) =
            http(self.port, method, path, body).map_err(|error| WebDriverError {
                error: "transport".to_string(),
                message: error.to_string(),
            })?;
        let value = value.get("value").cloned().unwrap_or(Value::Null);
        if status == 200 {
            return Ok(value);
        }
        Err(WebDriverError {
            error: value["error"].as_str().unwrap_or("unknown").to_string(),
            message: value["message"].as_str().unwrap_or_default().to_string(),
        })
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let path = format!("/session/{}", self.session);
            let _ = http(self.port, "DELETE", &path, None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Starts chromedriver on a free port and waits until it says it is ready. A port taken
/// between choosing and binding it makes chromedriver exit: another port is tried.
fn start_driver(chromedriver: &Path, log: &Path) -> (Child, u16) {
    for _ in 0..3 {
        let port = free_port();
        let mut child = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(File::create(log).expect("the log file"))
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("{} does not start: {error}", chromedriver.display()));
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if child.try_wait().expect("chromedriver's state").is_some() {
                break;
            }
            if let Ok((200, status)) = http(port, "GET", "/status", None)
                && status["value"]["ready"] == true
            {
                return (child, port);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!(
        "chromedriver did not get ready:\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

/// One WebDriver command: the status code and the body as JSON (null when empty).
fn http(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> std::io::Result<(u16, Value)> {
    let address = format!("127.0.0.1:{port}");
    let headers = [
        ("Host".to_string(), address.clone()),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    let body = body.map(Value::to_string);
    let reply = try_send(&address, method, path, &headers, body.as_deref())?;
    let value = if reply.body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&reply.body).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "a body that is not JSON")
        })?
    };
    Ok((reply.status, value))
}
