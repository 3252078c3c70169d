//! The fault-injecting proxy (`scripts/s3-fault-proxy.py`) in front of the S3 test server: one
//! per test, started here and stopped by PID when dropped. A test points a lakehouse's
//! `AWS_ENDPOINT_URL` at [`Proxy::endpoint`], sets the faults of the next run with
//! [`Proxy::inject`], and reads back what the proxy saw with [`Proxy::requests`].

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde::Deserialize;
use serde_json::{Value, json};

/// Requests of one kind, as the proxy matches them: method, a regular expression searched in the
/// %-decoded path and query, and optionally a header and a pattern its value must match.
#[derive(Debug, Clone, Copy)]
pub struct Requests {
    pub name: &'static str,
    method: &'static str,
    path: &'static str,
    header: Option<(&'static str, &'static str)>,
}

/// The PUT of a commit, `_delta_log/<version>.json`, made with `If-None-Match: *`.
pub const LOG_ENTRY: Requests = Requests {
    name: "the log-entry PUT",
    method: "PUT",
    path: r"/_delta_log/\d{20}\.json$",
    header: Some(("If-None-Match", r"^\*$")),
};

/// The PUT of a data file of a table (`part-….parquet`).
pub const DATA_FILE: Requests =
    Requests { name: "a data-file PUT", method: "PUT", path: r"/part-[^/]*\.parquet$", header: None };

/// A LIST (`GET ?list-type=2`) of a table's `_delta_log/`.
pub const LOG_LIST: Requests = Requests {
    name: "a LIST of _delta_log/",
    method: "GET",
    path: r"list-type=2&prefix=[^&]*/_delta_log/",
    header: None,
};

/// The GET of a checkpoint, `_delta_log/<version>.checkpoint.parquet`.
pub const CHECKPOINT: Requests = Requests {
    name: "the GET of a checkpoint",
    method: "GET",
    path: r"/_delta_log/\d{20}\.checkpoint\.parquet$",
    header: None,
};

/// What the proxy does to a matching request.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// Answers this status (500, 503) without forwarding the request.
    Status(u16),
    /// Forwards the request (it lands) and answers this status.
    ForwardThenStatus(u16),
    /// Waits this many seconds, then forwards the request, unless the client has gone.
    Delay(f64),
    /// Forwards the request (it lands) and answers after this many seconds.
    DelayAnswer(f64),
    /// Reads half the request's body and closes the connection (it never lands).
    DropRequest,
    /// Forwards the request (it lands), sends half the answer and closes the connection.
    DropResponse,
    /// Closes the connection (it never lands); the server is gone for this many seconds.
    Gone(f64),
}

impl Fault {
    fn rule(self) -> Value {
        match self {
            Self::Status(status) => json!({"action": "status", "status": status}),
            Self::ForwardThenStatus(status) => json!({"action": "forward_then_status", "status": status}),
            Self::Delay(seconds) => json!({"action": "delay", "seconds": seconds}),
            Self::DelayAnswer(seconds) => json!({"action": "delay_answer", "seconds": seconds}),
            Self::DropRequest => json!({"action": "drop_request"}),
            Self::DropResponse => json!({"action": "drop_response"}),
            Self::Gone(seconds) => json!({"action": "gone", "seconds": seconds}),
        }
    }
}

/// One request the proxy saw.
#[derive(Debug, Clone, Deserialize)]
pub struct Seen {
    pub method: String,
    /// Path and query, %-decoded.
    pub target: String,
    /// The `Range` header (`bytes=FIRST-LAST`), where the request has one.
    pub range: Option<String>,
    /// `forward`, or the action of the rule that acted on it.
    pub action: String,
    /// Whether the S3 server got it.
    pub landed: bool,
    /// The status the client got; `None` where the connection was closed.
    pub status: Option<u16>,
}

/// A running proxy.
pub struct Proxy {
    child: Child,
    /// `http://127.0.0.1:PORT`: the endpoint a lakehouse under test uses.
    pub endpoint: String,
    control: String,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

impl Proxy {
    /// Starts a proxy in front of the S3 test server (`LAKEWRITER_TEST_S3_ENDPOINT`).
    pub fn start() -> Self {
        let upstream = std::env::var("LAKEWRITER_TEST_S3_ENDPOINT").unwrap_or_else(|_| {
            panic!("the storage-fault tests need the S3 test server: run them with `scripts/test`")
        });
        // The test command's Python; the proxy needs its standard library only.
        let python = std::env::var("LAKEWRITER_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
        let mut child = Command::new(python)
            .arg(repository().join("scripts/s3-fault-proxy.py"))
            .arg(&upstream)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the fault proxy");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("the proxy's first line");
        let words: Vec<&str> = line.split_whitespace().collect();
        let [_, proxy, _, control] = words[..] else { panic!("not the proxy's first line: {line:?}") };
        Self { child, endpoint: format!("http://{proxy}"), control: control.to_owned() }
    }

    /// Sends a control request (a GET without a body); its JSON answer.
    fn control(&self, method: &str, path: &str, body: &Value) -> Value {
        let body = if method == "GET" { String::new() } else { body.to_string() };
        let mut stream = TcpStream::connect(&self.control).expect("the proxy's control port");
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.control,
            body.len()
        );
        stream.write_all(request.as_bytes()).expect("control request");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("control answer");
        let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
        assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "{path}: {head}");
        serde_json::from_str(body).expect("a JSON answer")
    }

    /// From now on, `fault` hits the `nth` (1-based) request of `requests` and the `times - 1`
    /// after it (`times = 0`: every one from the nth on). Replaces every earlier fault and
    /// forgets the requests seen.
    pub fn inject(&self, requests: Requests, fault: Fault, nth: usize, times: usize) {
        let mut rule = fault.rule();
        rule["method"] = json!(requests.method);
        rule["path"] = json!(requests.path);
        rule["nth"] = json!(nth);
        rule["times"] = json!(times);
        if let Some((name, pattern)) = requests.header {
            rule["headers"] = json!({ name: pattern });
        }
        self.clear();
        self.control("POST", "/__faults", &json!({ "rules": [rule] }));
    }

    /// No faults, no requests seen.
    pub fn clear(&self) {
        self.control("POST", "/__reset", &json!({}));
    }

    /// Ends an absence of the server ([`Fault::Gone`]); returns once it listens again.
    pub fn back(&self) {
        self.control("POST", "/__back", &json!({}));
    }

    /// Every request seen since the last [`Proxy::inject`] or [`Proxy::clear`], in order.
    pub fn requests(&self) -> Vec<Seen> {
        let answer = self.control("GET", "/__requests", &json!({}));
        serde_json::from_value(answer["requests"].clone()).expect("the requests seen")
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
