//! Record mode: a proxy in front of a real OpenAI-compatible, Anthropic or Ollama server that
//! writes what it answered as a mock-llm scenario, so the session replays offline with
//! `mock-llm --scenario FILE` — the same answers for the same requests.
//!
//! [`Recorder`] binds a port (HTTP/1.1 and `h2c`, as the mock does), forwards every request to
//! the upstream with its credentials, streams the answer back unchanged, and rewrites the
//! scenario file after each chat answer that completed with a 2xx status. Credentials (header
//! values, `key=` query values, the upstream's userinfo) and the values of chosen environment
//! variables never reach the file; no message names the upstream's userinfo. Submodules: `proxy` (forwarding), `capture` (answers → neutral replies), `recording`
//! (the file), `redact` (secrets). Not here: serving scenarios (`server`), which replay uses
//! unchanged.

mod capture;
mod proxy;
mod recording;
mod redact;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use recording::{Answer, Key, Recording, RefusalOut};
use redact::Redactor;

pub use recording::WriteError;

use crate::request::Endpoint;

/// Settings of a recording session.
#[derive(Debug, Clone)]
pub struct RecordConfig {
    /// The real server's root URL (`http://127.0.0.1:8080`); each request's path and query are
    /// appended, so clients use the recorder exactly as they would use the upstream.
    pub upstream: String,
    /// The scenario file to write: JSON by `.json` extension, else YAML.
    pub out: PathBuf,
    /// Address to listen on (default `127.0.0.1:0`).
    pub listen: SocketAddr,
    /// Environment variables whose values are redacted from the file (besides credentials).
    pub redact_env: Vec<String>,
    /// Request headers whose values are credentials besides the well-known ones (any case).
    pub redact_headers: Vec<String>,
    /// How long to wait for the upstream to accept a connection.
    pub connect_timeout: Duration,
}

impl RecordConfig {
    /// Records `upstream` into `out`, listening on a free loopback port.
    pub fn new(upstream: impl Into<String>, out: impl Into<PathBuf>) -> Self {
        RecordConfig {
            upstream: upstream.into(),
            out: out.into(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            redact_env: Vec::new(),
            redact_headers: Vec::new(),
            connect_timeout: Duration::from_secs(10),
        }
    }

    /// Sets the listen address.
    pub fn with_listen(mut self, listen: SocketAddr) -> Self {
        self.listen = listen;
        self
    }

    /// Adds environment variables whose values are never written.
    pub fn with_redact_env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.redact_env.extend(names.into_iter().map(Into::into));
        self
    }

    /// Adds request headers whose values are credentials: forwarded, never written.
    pub fn with_redact_headers<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.redact_headers
            .extend(names.into_iter().map(Into::into));
        self
    }
}

/// Why a recording session could not start.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The upstream is not an `http://` or `https://` URL.
    #[error("--upstream {0:?}: expected an http:// or https:// URL")]
    Upstream(String),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// The (empty) scenario file could not be written at start.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// A chat request on its way: what it is recognised by on replay.
pub(crate) struct Exchange {
    endpoint: Endpoint,
    stream: bool,
    key: Key,
}

/// Whether an upstream status is recorded: success, and the client errors the server gives
/// again for the same request (refusals). Credentials (401/403), rate limits (429), timeouts
/// (408) and server errors (5xx) are passed through but not recorded — they say nothing
/// about the request that a replay should repeat.
pub(crate) fn recorded_status(status: u16) -> bool {
    (200..300).contains(&status)
        || ((400..500).contains(&status) && ![401, 403, 408, 429].contains(&status))
}

/// State shared by the proxy's requests.
pub(crate) struct Shared {
    /// Where requests go, userinfo included (the client sends it as basic credentials).
    upstream: String,
    /// The upstream as every message names it: without its userinfo.
    shown: String,
    client: reqwest::Client,
    redactor: Mutex<Redactor>,
    recording: Mutex<Recording>,
    arrivals: AtomicU64,
    failures: AtomicU64,
    tasks: TaskTracker,
}

impl Shared {
    /// Adds one completed answer and rewrites the file; failures are logged and counted, the
    /// previous file stays in place.
    /// `status` is the upstream's: 2xx answers are captured, others recorded as refusals.
    async fn record(&self, arrival: u64, exchange: Exchange, status: u16, body: &[u8]) {
        let Exchange {
            endpoint,
            stream,
            key,
        } = exchange;
        let redactor = self.redactor.lock().await;
        let answer = if (200..300).contains(&status) {
            match capture::capture(endpoint, stream, body) {
                Ok(c) => Answer::Reply(recording::reply_out(&c, &redactor)),
                Err(e) => {
                    self.failures.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, "mock-llm record: answer not recorded");
                    return;
                }
            }
        } else {
            Answer::Refusal(RefusalOut::from_answer(status, body, &redactor))
        };
        let mut recording = self.recording.lock().await;
        recording.add(arrival, key, answer);
        if let Err(e) = recording.write(&redactor).await {
            self.failures.fetch_add(1, Ordering::Relaxed);
            tracing::error!(error = %e, "mock-llm record: recording not written");
        } else {
            tracing::info!(path = %recording.path().display(), exchanges = recording.len(), "mock-llm record: written");
        }
    }
}

/// A running recording proxy. Dropping it stops it; [`Recorder::shutdown`] also waits until
/// every answer in flight is recorded.
pub struct Recorder {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("addr", &self.addr)
            .field("upstream", &self.shared.shown)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// Checks the upstream URL, writes an empty scenario to `out` (so a bad path fails now),
    /// binds and serves in a background task.
    pub async fn start(config: RecordConfig) -> Result<Self, RecordError> {
        let upstream = config.upstream.trim_end_matches('/').to_owned();
        if !(upstream.starts_with("http://") || upstream.starts_with("https://"))
            || reqwest::Url::parse(&upstream).is_err()
        {
            return Err(RecordError::Upstream(redact::without_userinfo(
                &config.upstream,
            )));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| RecordError::Client(e.to_string()))?;
        let mut redactor =
            Redactor::from_env(&config.redact_env).with_headers(&config.redact_headers);
        redactor.learn_userinfo(&upstream);
        let recording = Recording::new(config.out);
        recording.write(&redactor).await?;
        let addr = config.listen;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| RecordError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| RecordError::Bind { addr, source })?;
        let shared = Arc::new(Shared {
            shown: redact::without_userinfo(&upstream),
            upstream,
            client,
            redactor: Mutex::new(redactor),
            recording: Mutex::new(recording),
            arrivals: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            tasks: TaskTracker::new(),
        });
        let app = axum::Router::new()
            .fallback(proxy::forward)
            .layer(axum::extract::DefaultBodyLimit::max(
                crate::DEFAULT_MAX_BODY_BYTES,
            ))
            .with_state(Arc::clone(&shared));
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(crate::accept::serve(
            listener,
            app,
            Arc::new(AtomicU64::new(0)),
            shutdown.clone(),
        ));
        Ok(Recorder {
            addr,
            shared,
            shutdown,
            task: Some(task),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, no trailing slash; use it as the upstream's root would be used.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The upstream's root URL without its userinfo (`user:password@`), as messages name it.
    pub fn upstream_display(&self) -> &str {
        &self.shared.shown
    }

    /// Exchanges written to the file so far.
    pub async fn recorded(&self) -> usize {
        self.shared.recording.lock().await.len()
    }

    /// Answers that completed but could not be recorded (unreadable, or the file not written).
    pub fn failures(&self) -> u64 {
        self.shared.failures.load(Ordering::Relaxed)
    }

    /// Stops accepting, lets the answers in flight finish and be recorded, and waits.
    pub async fn shutdown(mut self) {
        self.shutdown.cancel();
        if let Some(task) = self.task.take()
            && let Err(e) = task.await
        {
            tracing::error!(error = %e, "mock-llm record: server task failed");
        }
        self.shared.tasks.close();
        self.shared.tasks.wait().await;
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}
