//! Where lineage events go, and how a request to an endpoint says who sends it.
//!
//! The endpoint's credentials are one of two, as the OpenLineage client's conventions give them:
//! `OPENLINEAGE_API_KEY`, sent as a bearer token, or a user and password in `OPENLINEAGE_URL`
//! (`http://user:password@host/`), sent as HTTP Basic authentication, as the OpenLineage Python
//! client's HTTP library sends them. A request carries one `Authorization` header, so both at once
//! is a usage error, not a silent choice; neither is ever logged or printed, and the URL a log names
//! has neither.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use percent_encoding::percent_decode_str;
use tokio::sync::mpsc;

use super::event::RunEvent;
use crate::{Error, Result};

/// Where events go.
#[derive(Debug, Clone)]
pub enum Transport {
    /// POSTed to `url` (its path, else `/api/v1/lineage`; without credentials), authenticated by
    /// `auth`.
    Http { url: url::Url, auth: Auth },
    /// Appended to a file, one JSON event a line.
    File(PathBuf),
}

/// How a request to the endpoint says who sends it. Its `Debug` shows which, never the secret.
#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    None,
    /// HTTP Basic authentication: the user and password of the URL, percent-decoded.
    Basic {
        user: String,
        password: String,
    },
    /// `Authorization: Bearer KEY`: `OPENLINEAGE_API_KEY`.
    Bearer(String),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::None => "None",
            Self::Basic { .. } => "Basic(…)",
            Self::Bearer(_) => "Bearer(…)",
        })
    }
}

impl Transport {
    /// HTTP to `url`, which must be an http(s) URL, with the credentials it holds or `api_key`
    /// (not both). It may carry credentials: no error prints it.
    pub fn http(url: &str, api_key: Option<String>) -> Result<Self> {
        let mut url = url::Url::parse(url.trim())
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| Error::Usage("--openlineage-url (OPENLINEAGE_URL) is not an http(s) URL".into()))?;
        let decoded = |text: &str| percent_decode_str(text).decode_utf8_lossy().into_owned();
        let credentials = (!url.username().is_empty() || url.password().is_some())
            .then(|| (decoded(url.username()), url.password().map(decoded).unwrap_or_default()));
        let auth = match (credentials, api_key) {
            (Some(_), Some(_)) => {
                return Err(Error::Usage(
                    "--openlineage-url (OPENLINEAGE_URL) holds credentials (user:password@) and OPENLINEAGE_API_KEY \
                     is set: a lineage request carries one of them; remove them from the URL to send the API key as \
                     a bearer token, or unset OPENLINEAGE_API_KEY to send them as HTTP Basic authentication"
                        .into(),
                ));
            }
            (Some((user, password)), None) => Auth::Basic { user, password },
            (None, Some(key)) => Auth::Bearer(key),
            (None, None) => Auth::None,
        };
        // Both setters fail only for a URL that cannot have credentials, which an http(s) one can.
        let _ = (url.set_username(""), url.set_password(None));
        Ok(Self::Http { url, auth })
    }
}

/// Failed requests in a row after which an endpoint is given up on for the command.
const GIVE_UP_AFTER: u32 = 3;

/// Where the delivery task writes.
pub(super) enum Sink {
    Http { client: reqwest::Client, url: url::Url, auth: Auth, shown: String },
    File(std::fs::File),
}

impl Sink {
    pub(super) fn http(url: &url::Url, auth: Auth, timeout: Duration) -> Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .map_err(|e| Error::Usage(format!("OPENLINEAGE_URL: cannot make an HTTP client: {e}")))?;
        let mut url = url.clone();
        if url.path().trim_matches('/').is_empty() {
            url.set_path("/api/v1/lineage");
        }
        // Logs name the endpoint without credentials or query.
        let shown = format!(
            "{}://{}{}",
            url.scheme(),
            url.host_str().unwrap_or_default(),
            url.port().map_or_else(String::new, |p| format!(":{p}"))
        );
        Ok(Self::Http { client, url, auth, shown })
    }

    /// Delivers each event in order until the queue closes.
    pub(super) async fn deliver(mut self, mut events: mpsc::UnboundedReceiver<RunEvent>) {
        let (mut failed_in_a_row, mut dropped) = (0, 0_u64);
        while let Some(event) = events.recv().await {
            if failed_in_a_row >= GIVE_UP_AFTER {
                dropped += 1;
                continue;
            }
            match self.send(&event).await {
                Ok(()) => failed_in_a_row = 0,
                Err(error) => {
                    failed_in_a_row += 1;
                    dropped += 1;
                    tracing::warn!(to = %self.shown(), %error, "OpenLineage: an event was not delivered");
                }
            }
        }
        if dropped > 0 {
            tracing::warn!(to = %self.shown(), dropped, "OpenLineage: events not delivered (the runs are unaffected)");
        }
    }

    fn shown(&self) -> &str {
        match self {
            Self::Http { shown, .. } => shown,
            Self::File(_) => "--openlineage-file",
        }
    }

    async fn send(&mut self, event: &RunEvent) -> std::result::Result<(), String> {
        let body = serde_json::to_vec(event).map_err(|e| e.to_string())?;
        match self {
            Self::File(file) => {
                let mut line = body;
                line.push(b'\n');
                file.write_all(&line).and_then(|()| file.flush()).map_err(|e| e.to_string())
            }
            Self::Http { client, url, auth, .. } => {
                let request =
                    client.post(url.clone()).header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
                let request = match auth {
                    Auth::None => request,
                    Auth::Basic { user, password } => request.basic_auth(user, Some(password)),
                    Auth::Bearer(key) => request.bearer_auth(key),
                };
                let response = request.send().await.map_err(|e| without_url(&e))?;
                let status = response.status();
                if status.is_success() { Ok(()) } else { Err(format!("the endpoint answered {status}")) }
            }
        }
    }
}

/// A request's error without its URL (which may carry credentials).
fn without_url(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    let mut cause = std::error::Error::source(error);
    let mut text = kind.to_owned();
    while let Some(e) = cause {
        text = format!("{text}: {e}");
        cause = e.source();
    }
    text
}
