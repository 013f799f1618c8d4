//! Helpers shared by the integration tests: starting a server, raw HTTP calls, SSE parsing.
#![allow(dead_code)]

use mock_llm::{MockConfig, MockServer, Scenario};
use serde_json::Value;

/// Starts a server on 127.0.0.1:0 with `yaml` as scenario.
pub async fn start(yaml: &str) -> MockServer {
    let scenario = Scenario::from_yaml_str(yaml).expect("test scenario parses");
    MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .expect("server starts")
}

/// A plain reqwest client.
pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(20))
        .build()
        .expect("client")
}

/// POSTs JSON and returns (status, headers, body text).
pub async fn post(url: &str, body: &Value) -> (u16, reqwest::header::HeaderMap, String) {
    let r = http()
        .post(url)
        .json(body)
        .send()
        .await
        .expect("request sent");
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.text().await.expect("body read"))
}

/// The `data:` payloads of an SSE body, with their `event:` names ("" when absent).
pub fn sse_events(body: &str) -> Vec<(String, String)> {
    body.split("\n\n")
        .filter(|f| !f.trim().is_empty())
        .map(|frame| {
            let mut event = String::new();
            let mut data = String::new();
            for line in frame.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = e.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = d.to_owned();
                }
            }
            (event, data)
        })
        .collect()
}
