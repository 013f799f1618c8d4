//! The `relay` mode, the transport floor for `wire` (and `mcp-http`): the least any skill server
//! over HTTP must do for the bench call, in a child process as `skillet serve --http` is.
//!
//! The child (`skillet-bench relay`, this binary again) is a plain `axum::serve` with one route,
//! `POST /a2e`: it parses the call into a `serde_json::Value`, makes the `raw` floor's three
//! model requests (each body serialized from its `Value`, each answer parsed into one), puts the
//! final answer's JSON into an answer of the real `skill/call/resp`'s shape and size (the
//! recorded 3-turn answer: 12 events, usage; its `req_id`s set to the call's id) and writes it
//! with `serde_json`. The event and answer ids and timestamps are kept from the recording (a
//! real server makes them per call), so this floor is if anything low. The bench's client
//! encodes its call with `serde_json`, posts it over HTTP/1.1 as `wire` does, parses the answer
//! into a `Value` and checks it.
//!
//! So `wire ÷ relay` is what Skillet's engine and transport cost over the bare minimum of the
//! same exchange (the engine's own loop, validation, events and the A2E codec), where
//! `wire ÷ raw` also counts the second HTTP exchange every transport adds.
//!
//! Also here, shared with the stdio transports' floors (`stdio-relay`, `mcp-relay`): what every
//! floor child serves with ([`Floor`]: its model client, the captured requests, the recorded
//! answer) and the command that starts one ([`child_command`]).
//!
//! Not here: the `raw` floor's model requests (`modes::raw_turns`), the driver (`modes`), the
//! stdio floors' line loops (`stdio_relay`).

use std::future::Future;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::modes::{self, CapturedRequest};
use crate::serve::ServeChild;
use crate::workload;

/// The recorded answer of one bench call through `skillet serve` (3 turns, 12 events, usage),
/// whose shape and size the relay's answers take.
const ANSWER_SHAPE: &str = include_str!("../benches/call-resp-3-turns.json");

/// What a floor child serves with: the model's client, where the model is, the captured
/// requests and the answer's recorded shape (shared with the stdio floors, `stdio_relay`).
pub(crate) struct Floor {
    client: reqwest::Client,
    mock_url: String,
    requests: Vec<CapturedRequest>,
    shape: Value,
}

impl Floor {
    /// A floor over the model at `mock_url`, sending `requests` (HTTP/2 by prior knowledge with
    /// `http2`).
    pub(crate) fn new(
        mock_url: String,
        requests: Vec<CapturedRequest>,
        http2: bool,
    ) -> anyhow::Result<Floor> {
        Ok(Floor {
            client: modes::http_client(http2)?,
            mock_url,
            requests,
            shape: serde_json::from_str(ANSWER_SHAPE)?,
        })
    }

    /// A floor sending the captured requests in `requests_file` (as [`child_command`] writes it).
    pub(crate) fn load(
        mock_url: String,
        requests_file: &Path,
        http2: bool,
    ) -> anyhow::Result<Floor> {
        let text = std::fs::read_to_string(requests_file)?;
        let requests = serde_json::from_str::<Vec<(String, Value)>>(&text)?
            .into_iter()
            .map(|(path, value)| CapturedRequest {
                path,
                body: value.to_string(),
                value,
            })
            .collect();
        Floor::new(mock_url, requests, http2)
    }

    /// The `raw` floor's three model requests for one call; the final answer's JSON.
    pub(crate) async fn turns(&self) -> Result<Value, String> {
        modes::raw_turns(&self.client, &self.mock_url, &self.requests).await
    }

    /// The real `skill/call/resp`'s shape for call `id`, carrying `data` as the skill's output.
    pub(crate) fn a2e_answer(&self, id: &str, data: Value) -> Value {
        let mut answer = self.shape.clone();
        answer["req_id"] = Value::from(id);
        answer["data"]["data"] = data;
        if let Some(events) = answer["data"]["events"].as_array_mut() {
            for event in events {
                event["req_id"] = Value::from(id);
            }
        }
        answer
    }
}

/// `skillet-bench relay`: serves `POST /a2e` on 127.0.0.1:0 for the model at `mock_url` with the
/// captured requests in `requests_file`, prints its URL on stdout, stops when stdin ends.
pub async fn serve_child(
    mock_url: String,
    requests_file: &Path,
    http2: bool,
) -> anyhow::Result<()> {
    use tokio::io::AsyncReadExt;
    let floor = Floor::load(mock_url, requests_file, http2)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://{}/a2e", listener.local_addr()?);
    let stopped = async {
        let mut sink = Vec::new();
        let _ = tokio::io::stdin().read_to_end(&mut sink).await;
    };
    serve(listener, floor, stopped).await
}

/// Serves `POST /a2e` on `listener` until `shutdown` completes.
async fn serve(
    listener: tokio::net::TcpListener,
    floor: Floor,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let app = Router::new()
        .route("/a2e", post(answer_call))
        .with_state(Arc::new(floor));
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await?;
    Ok(())
}

async fn answer_call(State(floor): State<Arc<Floor>>, body: Bytes) -> Response {
    let call: Value = match serde_json::from_slice(&body) {
        Ok(call) => call,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("not JSON: {e}")).into_response(),
    };
    let Some(id) = call.get("id").and_then(Value::as_str) else {
        return (StatusCode::BAD_REQUEST, "no id").into_response();
    };
    let data = match floor.turns().await {
        Ok(data) => data,
        Err(e) => return (StatusCode::BAD_GATEWAY, e).into_response(),
    };
    match serde_json::to_vec(&floor.a2e_answer(id, data)) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// Writes `requests` beside `dir`'s files and returns the command of a floor child
/// (`skillet-bench SUBCOMMAND --mock-url URL --requests FILE [--http2]`), its pipes not yet set.
pub(crate) fn child_command(
    subcommand: &str,
    dir: &Path,
    mock_url: &str,
    requests: &[CapturedRequest],
    http2: bool,
) -> anyhow::Result<Command> {
    let file = dir.join(format!("{subcommand}-requests.json"));
    let pairs: Vec<(&str, &Value)> = requests
        .iter()
        .map(|r| (r.path.as_str(), &r.value))
        .collect();
    std::fs::write(&file, serde_json::to_vec(&pairs)?)?;
    let mut command = Command::new(std::env::current_exe()?);
    command
        .arg(subcommand)
        .arg("--mock-url")
        .arg(mock_url)
        .arg("--requests")
        .arg(&file)
        .kill_on_drop(true);
    if http2 {
        command.arg("--http2");
    }
    Ok(command)
}

/// Writes `requests` beside `dir`'s files, starts `skillet-bench relay` and reads its URL;
/// returns the child (measured and stopped like a `skillet serve` child) and the URL.
pub async fn start_child(
    dir: &Path,
    mock_url: &str,
    requests: &[CapturedRequest],
    http2: bool,
) -> anyhow::Result<(ServeChild, String)> {
    let mut command = child_command("relay", dir, mock_url, requests, http2)?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = command.spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| anyhow::anyhow!("relay child has no stdout"))?
        .into_owned_fd()?;
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(std::fs::File::from(stdout))
            .read_line(&mut line)
            .map(|_| line)
    })
    .await??;
    let url = line.trim().to_owned();
    if !url.starts_with("http://") {
        let _ = child.start_kill();
        anyhow::bail!("relay child did not print its URL (got {line:?})");
    }
    Ok((ServeChild::adopt(child), url))
}

/// Distinct call ids, as a host would send.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// One `relay` call: the request built and encoded with `serde_json`, posted, the answer parsed
/// into a `Value` and checked (its `req_id`, success and the expected output).
pub async fn call(client: &reqwest::Client, url: &str) -> Result<(), String> {
    let id = format!("relay-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
    let call = json!({
        "type": "skill/call/req",
        "id": id,
        "version": "1.0",
        "name": workload::SKILL,
        "arguments": workload::arguments(),
        "streaming": false,
    });
    let body = serde_json::to_vec(&call).map_err(|e| format!("encode: {e}"))?;
    let bytes = modes::post_json(client.post(url).body(body)).await?;
    let answer: Value = serde_json::from_slice(&bytes).map_err(|e| format!("parse answer: {e}"))?;
    if answer["req_id"] != id.as_str() {
        return Err(format!("answer for another call: {}", answer["req_id"]));
    }
    if answer["data"]["success"] != Value::Bool(true) {
        return Err(format!("unsuccessful answer: {}", answer["data"]));
    }
    if answer["data"]["data"] != workload::expected_output() {
        return Err(format!("unexpected output: {}", answer["data"]["data"]));
    }
    Ok(())
}

/// A floor whose model is a mock answering `scenario` (started here), with the requests
/// captured from the bench skill (the tests of every floor).
#[cfg(test)]
pub(crate) async fn floor_over_mock(scenario: &str) -> (Floor, mock_llm::MockServer) {
    use mock_llm::{MockConfig, MockServer, Scenario};
    let files = workload::SkillFiles::write().unwrap();
    let requests = modes::capture(&files).await.unwrap();
    let mock = MockServer::start(
        MockConfig::default().with_scenario(Scenario::from_yaml_str(scenario).unwrap()),
    )
    .await
    .unwrap();
    let floor = Floor::new(mock.base_url(), requests, false).unwrap();
    (floor, mock)
}

#[cfg(test)]
mod tests {
    use mock_llm::MockServer;

    use super::*;

    /// A relay in this process over a mock answering `scenario`; returns its URL, the mock and
    /// the relay's stop switch.
    async fn relay_over(scenario: &str) -> (String, MockServer, tokio::sync::oneshot::Sender<()>) {
        let (floor, mock) = floor_over_mock(scenario).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/a2e", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let stopped = async move {
                let _ = stopped.await;
            };
            serve(listener, floor, stopped).await.unwrap();
        });
        (url, mock, stop)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn relay_answers_each_call_in_the_real_answers_shape_after_three_model_turns() {
        let (url, mock, stop) = relay_over(workload::SCENARIO).await;
        let client = modes::http_client(false).unwrap();
        for _ in 0..3 {
            call(&client, &url).await.unwrap();
        }
        let chats = mock
            .journal()
            .iter()
            .filter(|e| e.endpoint == "openai.chat")
            .count();
        assert_eq!(chats, 9, "three model requests per call");
        // The answer carries the call's id in every event, as skillet's does.
        let answer: Value = client
            .post(&url)
            .body(r#"{"type":"skill/call/req","id":"c-7","name":"bench-calc"}"#)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let events = answer["data"]["events"].as_array().unwrap();
        assert_eq!(events.len(), 12);
        assert!(events.iter().all(|e| e["req_id"] == "c-7"));
        assert!(
            answer.to_string().len() > 2500,
            "the recorded answer's size"
        );
        let _ = stop.send(());
        mock.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bad_calls_and_wrong_answers_fail_clearly() {
        let wrong = workload::SCENARIO.replace("result: 43", "result: 44");
        let (url, mock, stop) = relay_over(&wrong).await;
        let client = modes::http_client(false).unwrap();
        let error = call(&client, &url).await.unwrap_err();
        assert!(error.contains("unexpected output"), "{error}");
        for body in ["not json", r#"{"type":"skill/call/req"}"#] {
            let response = client.post(&url).body(body).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        }
        let _ = stop.send(());
        mock.shutdown().await;
    }
}
