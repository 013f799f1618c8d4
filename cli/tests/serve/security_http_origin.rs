//! Issue 48, H1: web pages and DNS rebinding against the default local `skillet serve --http`
//! (127.0.0.1, no `[auth]`, console on), through the real binary and its embedded mock-llm:
//! - a browser-shaped cross-origin `POST` (`Content-Type: text/plain`, `Origin:
//!   http://evil.example`, no preflight) to `/a2e` or `/a2a` is `403` and the model is never
//!   asked; `Origin: null` likewise;
//! - a rebinding `Host:` (an attacker's name resolving to 127.0.0.1) is `403` on every door:
//!   console history, Agent Card, health, metrics, the page;
//! - a console approval decision with the right `Host` and `Origin` but without the page's token
//!   is `403`; with the token it reaches the route;
//! - curl-shaped requests (no `Origin`, `Host: 127.0.0.1:PORT` or `localhost:PORT`) and the
//!   page's own same-origin requests still work; no answer allows another origin by CORS;
//! - `[server] allowed_hosts` / `allowed_origins` let a configured public name in; a bad entry
//!   is a config error naming its key.

use crate::cli_support;
use crate::serve_support;

use serde_json::{Value, json};

use cli_support::{SKILLET, write_skill};

use serve_support::{HttpServer, ServeHttp};

/// The console's token header (the page reads its value from the served page's `<meta>`).
const TOKEN_HEADER: &str = "x-skillet-console-token";

/// The text every call sends: a refusal never echoes it, in its answer or the log.
const BODY_CANARY: &str = "body-canary-5e1f";

struct Served {
    server: HttpServer,
    _skills: tempfile::TempDir,
    _cwd: tempfile::TempDir,
}

impl Served {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.base)
    }

    /// `127.0.0.1:PORT`.
    fn authority(&self) -> String {
        self.server.base.trim_start_matches("http://").to_owned()
    }

    fn port(&self) -> String {
        self.authority().rsplit(':').next().unwrap().to_owned()
    }

    /// How many requests the embedded mock-llm has received.
    async fn model_requests(&self) -> usize {
        let mock = self.server.mock.as_deref().expect("the embedded mock-llm");
        let journal: Value = reqwest::get(format!("{mock}/_mock/requests"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        journal.as_array().map_or(0, Vec::len)
    }
}

async fn serve(config: &str) -> Served {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "echo-a", 0, "{json: {echo: \"a\"}}");
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("skillet.toml"),
        format!("[console]\nhistory_db = \"state/console.db\"\ncapture_content = true\n{config}"),
    )
    .unwrap();
    let server = ServeHttp::new(SKILLET)
        .cwd(cwd.path())
        .skills_dir(skills.path())
        .spawn()
        .await;
    Served {
        server,
        _skills: skills,
        _cwd: cwd,
    }
}

fn a2e_call(id: &str) -> String {
    cli_support::call(id, "echo-a", json!({"text": BODY_CANARY}))
}

fn a2a_send(id: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": id, "role": "ROLE_USER", "metadata": {"skillId": "echo-a"},
        "parts": [{"data": {"text": BODY_CANARY}}]}}})
    .to_string()
}

/// What a hostile page's `fetch(url, {method: "POST", mode: "no-cors", body})` sends: a
/// CORS-safelisted content type, so no preflight asks the server first.
async fn browser_post(
    client: &reqwest::Client,
    url: String,
    origin: &str,
    body: String,
) -> (u16, String) {
    let response = client
        .post(url)
        .header("content-type", "text/plain;charset=UTF-8")
        .header("origin", origin)
        .header("sec-fetch-site", "cross-site")
        .header("sec-fetch-mode", "no-cors")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

async fn get_with_host(client: &reqwest::Client, url: String, host: &str) -> (u16, String) {
    let response = client.get(url).header("host", host).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// The per-process token the console page carries in `<meta name="skillet-console-token">`.
async fn console_token(client: &reqwest::Client, served: &Served) -> String {
    let page = client
        .get(served.url("/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let marker = "name=\"skillet-console-token\" content=\"";
    let start = page
        .find(marker)
        .map(|at| at + marker.len())
        .unwrap_or_else(|| panic!("the page carries no console token: {page}"));
    page[start..].split('"').next().unwrap().to_owned()
}

#[tokio::test]
async fn a_cross_origin_browser_post_to_a2e_or_a2a_is_refused_before_the_model_is_asked() {
    let served = serve("").await;
    let client = reqwest::Client::new();
    for origin in [
        "http://evil.example",
        "null",
        "http://127.0.0.1.evil.example",
    ] {
        let (status, body) = browser_post(
            &client,
            served.url("/a2e"),
            origin,
            a2e_call(&format!("x-{origin}")),
        )
        .await;
        assert_eq!(status, 403, "POST /a2e from {origin}: {body}");
        assert!(!body.contains(BODY_CANARY), "no echo of the body: {body}");
        let (status, body) =
            browser_post(&client, served.url("/a2a"), origin, a2a_send("m-evil")).await;
        assert_eq!(status, 403, "POST /a2a from {origin}: {body}");
    }
    // Another port on loopback is another origin, too.
    let (status, _) = browser_post(
        &client,
        served.url("/a2e"),
        "http://127.0.0.1:1",
        a2e_call("x-port"),
    )
    .await;
    assert_eq!(status, 403);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        served.model_requests().await,
        0,
        "the model was never asked"
    );

    // The refusals were logged, one line each, without the body.
    let logged = served.server.later_lines.lock().unwrap().join("\n");
    assert!(logged.contains("evil.example"), "{logged}");
    assert!(!logged.contains(BODY_CANARY), "{logged}");
}

#[tokio::test]
async fn a_rebinding_host_is_refused_on_every_door_and_loopback_names_are_served() {
    let served = serve("").await;
    let client = reqwest::Client::new();
    let evil = format!("evil.example:{}", served.port());
    for path in [
        "/console/api/runs",
        "/console/api/skills",
        "/.well-known/agent-card.json",
        "/healthz",
        "/metrics",
        "/",
        "/console/assets/app.js",
    ] {
        let (status, body) = get_with_host(&client, served.url(path), &evil).await;
        assert_eq!(status, 403, "GET {path} with Host {evil}: {body}");
    }
    let (status, _) = client
        .post(served.url("/a2e"))
        .header("host", &evil)
        .body(a2e_call("rebound"))
        .send()
        .await
        .map(|r| (r.status().as_u16(), ()))
        .unwrap();
    assert_eq!(status, 403, "POST /a2e with Host {evil}");
    let (status, _) = client
        .post(served.url("/mcp"))
        .header("host", &evil)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .map(|r| (r.status().as_u16(), ()))
        .unwrap();
    assert_eq!(status, 403, "POST /mcp with Host {evil}");
    // A loopback name on another port is not this server either.
    let (status, _) = get_with_host(&client, served.url("/healthz"), "localhost:1").await;
    assert_eq!(status, 403);
    assert_eq!(served.model_requests().await, 0);

    // curl-shaped: no Origin, Host 127.0.0.1:PORT (reqwest's own) or localhost:PORT.
    for host in [
        served.authority(),
        format!("localhost:{}", served.port()),
        format!("LocalHost:{}", served.port()),
    ] {
        let (status, body) = get_with_host(&client, served.url("/console/api/runs"), &host).await;
        assert_eq!(status, 200, "Host {host}: {body}");
        let (status, body) =
            get_with_host(&client, served.url("/.well-known/agent-card.json"), &host).await;
        assert_eq!(status, 200, "Host {host}: {body}");
    }
    let answer: Value = client
        .post(served.url("/a2e"))
        .body(a2e_call("curl-1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["data"]["data"]["echo"], "a", "{answer}");
}

#[tokio::test]
async fn the_pages_own_same_origin_requests_work_and_cors_stays_closed() {
    let served = serve("").await;
    let client = reqwest::Client::new();
    let same = served.server.base.clone();
    let (status, body) = browser_post(&client, served.url("/a2e"), &same, a2e_call("page-1")).await;
    assert_eq!(status, 200, "{body}");
    let localhost = format!("http://localhost:{}", served.port());
    let response = client
        .post(served.url("/a2e"))
        .header("host", format!("localhost:{}", served.port()))
        .header("origin", &localhost)
        .header("content-type", "application/json")
        .body(a2e_call("page-2"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        response
            .headers()
            .get("access-control-allow-origin")
            .is_none(),
        "no CORS grant: {:?}",
        response.headers()
    );
    // A preflight from another origin gets no grant either.
    let response = client
        .request(reqwest::Method::OPTIONS, served.url("/a2e"))
        .header("origin", "http://evil.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    assert!(
        response
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
}

#[tokio::test]
async fn a_console_decision_needs_the_pages_token_even_from_the_same_origin() {
    let served = serve("").await;
    let client = reqwest::Client::new();
    let same = served.server.base.clone();
    let decide = |token: Option<&str>| {
        let mut request = client
            .post(served.url("/console/api/approvals/no-such-question"))
            .header("origin", &same)
            .header("content-type", "application/json")
            .body(r#"{"decision":"approve"}"#);
        if let Some(token) = token {
            request = request.header(TOKEN_HEADER, token);
        }
        request.send()
    };
    let refused = decide(None).await.unwrap();
    assert_eq!(refused.status().as_u16(), 403, "no token");
    let refused = decide(Some("not-the-token")).await.unwrap();
    assert_eq!(refused.status().as_u16(), 403, "a wrong token");
    let token = console_token(&client, &served).await;
    assert!(token.len() >= 32, "{token}");
    let reached = decide(Some(&token)).await.unwrap();
    assert_eq!(
        reached.status().as_u16(),
        404,
        "with the token the route answers (no such question)"
    );
}

#[tokio::test]
async fn a_configured_public_name_and_origin_are_allowed() {
    let served = serve(
        "[server]\nallowed_hosts = [\"skills.example.com\"]\n\
         allowed_origins = [\"https://app.example.com\"]\n",
    )
    .await;
    let client = reqwest::Client::new();
    let (status, body) = get_with_host(&client, served.url("/healthz"), "skills.example.com").await;
    assert_eq!(status, 200, "{body}");
    let response = client
        .post(served.url("/a2e"))
        .header("host", "skills.example.com")
        .header("origin", "https://skills.example.com")
        .body(a2e_call("public-1"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let (status, _) = browser_post(
        &client,
        served.url("/a2e"),
        "https://app.example.com",
        a2e_call("app-1"),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = get_with_host(&client, served.url("/healthz"), "other.example.com").await;
    assert_eq!(status, 403);
}

#[test]
fn a_bad_allowed_hosts_or_origins_entry_is_a_config_error_naming_the_key() {
    for (config, key) in [
        ("allowed_hosts = [\"evil example\"]", "server.allowed_hosts"),
        (
            "allowed_origins = [\"app.example.com\"]",
            "server.allowed_origins",
        ),
        ("mcp_allowed_origins = [\"null\"]", "server.allowed_origins"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("skillet.toml"),
            format!("[server]\n{config}\n"),
        )
        .unwrap();
        let out = std::process::Command::new(SKILLET)
            .current_dir(dir.path())
            .args(["serve", "--http", "127.0.0.1:0"])
            .env_remove("SKILLET_CONFIG")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{config}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(key), "{config}: {stderr}");
    }
}
