//! Issue 48, H2, H9 and H7 on the real `skillet serve --http` under `[auth]`, driven with raw
//! JSON-RPC over streamable HTTP:
//! - **H2** — every MCP method answers only with the skills the caller's grants name:
//!   `prompts/list`, `resources/list`, `skills/list` and the template's completion list only
//!   them, and `prompts/get`, `resources/read`, `skills/get`, `completion/complete` and
//!   `resources/subscribe` of a hidden skill answer exactly as an unknown name does;
//! - **H9** — a session belongs to the identity that opened it: another identity's request on
//!   it is answered as an unknown session (HTTP 404; a `DELETE` 204, closing nothing), so its approval of the owner's pending
//!   tool call goes nowhere and the gated tool does not run; the session id is not logged at
//!   `-v`;
//! - **H7** — 48 concurrent `resources/read` of a 15 MiB skill file keep the server's peak RSS
//!   (`VmHWM`) under [`RSS_CEILING_MIB`]; each read is answered whole or refused with the
//!   read-budget error.

use crate::cli_support;
use crate::serve_support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use cli_support::{SKILLET, write_skill};
use serve_support::{HttpServer, ServeHttp, jsonrpc_messages as messages};

/// The protocol version the tests negotiate (form elicitation exists from it on).
const VERSION: &str = "2025-11-25";
/// Runs `alpha` only.
const KEY_ALPHA: &str = "sk-mcp-alpha-0123456789";
/// Runs `gated-calc` and reads `big`.
const KEY_ONE: &str = "sk-mcp-one-0123456789";
/// Runs `gated-calc` too: a grant is not what keeps it out of another's session.
const KEY_TWO: &str = "sk-mcp-two-0123456789";
/// The most the server's peak RSS may reach while 48 reads of 15 MiB run (the read budget
/// lets 64 MiB of files be in flight; each costs about three times its size while answered).
const RSS_CEILING_MIB: u64 = 400;
/// The size of `big`'s file.
const BIG_BYTES: usize = 15 * 1024 * 1024;

fn config() -> String {
    let sha = |key: &str| skillet_host::auth::sha256_hex(key);
    format!(
        r#"
[auth.scopes.alpha]
skills = ["alpha"]

[auth.scopes.gated]
skills = ["gated-calc"]

[auth.scopes.big]
skills = ["big"]

[[auth.api_keys]]
id = "key-alpha"
sha256 = "{alpha}"
scopes = ["alpha"]

[[auth.api_keys]]
id = "key-one"
sha256 = "{one}"
scopes = ["gated", "big"]

[[auth.api_keys]]
id = "key-two"
sha256 = "{two}"
scopes = ["gated"]
"#,
        alpha = sha(KEY_ALPHA),
        one = sha(KEY_ONE),
        two = sha(KEY_TWO),
    )
}

/// `gated-calc`: its model calls the built-in `calculator`, which its `a2e-approval` gates; it
/// answers `approved` when the tool ran and `denied` when it was refused.
fn write_gated_skill(root: &Path) {
    let dir = root.join("gated-calc");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: gated-calc\ndescription: Computes with a gated calculator (test skill).\n\
         metadata:\n  a2a-input-schema: assets/input.schema.json\n  \
         a2a-output-schema: assets/output.schema.json\n  \
         a2e-tools: '[\"calculator\"]'\n  a2e-approval: '[\"calculator\"]'\n  \
         a2e-max-turns: '3'\n---\nGated calc: compute {{ text }} with the calculator.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/input.schema.json"),
        r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/output.schema.json"),
        r#"{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("mock-scenario.yaml"),
        "rules:\n\
         \x20 - name: ran\n    when: {system_contains: \"Gated calc:\", tool_result_contains: \"result\"}\n    reply: {json: {echo: approved}}\n\
         \x20 - name: refused\n    when: {system_contains: \"Gated calc:\", tool_results: true}\n    reply: {json: {echo: denied}}\n\
         \x20 - name: call\n    when: {system_contains: \"Gated calc:\", tool_results: false}\n    reply: {tool_calls: [{name: calculator, arguments: {expression: \"6*7\"}}]}\n",
    )
    .unwrap();
}

/// The skills: `alpha` and `beta` (whose prompt argument `mode` has a value to complete),
/// `gated-calc`, and `big` with a 15 MiB text file.
fn write_skills(root: &Path) {
    write_skill(root, "alpha", 0, "{json: {echo: a}}");
    write_skill(root, "beta", 0, "{json: {echo: b}}");
    std::fs::write(
        root.join("beta/assets/input.schema.json"),
        r#"{"type":"object","properties":{"text":{"type":"string"},"mode":{"enum":["beta-secret-mode"]}},"required":["text"]}"#,
    )
    .unwrap();
    std::fs::write(root.join("beta/notes.md"), "beta's private notes\n").unwrap();
    write_gated_skill(root);
    write_skill(root, "big", 0, "{json: {echo: big}}");
    std::fs::write(root.join("big/data.txt"), "x".repeat(BIG_BYTES)).unwrap();
}

struct Served {
    server: HttpServer,
    _skills: tempfile::TempDir,
    _cwd: tempfile::TempDir,
}

impl Served {
    async fn start() -> Served {
        let skills = tempfile::tempdir().unwrap();
        write_skills(skills.path());
        let cwd = tempfile::tempdir().unwrap();
        std::fs::write(cwd.path().join("skillet.toml"), config()).unwrap();
        let server = ServeHttp::new(SKILLET)
            .cwd(cwd.path())
            .global_args(["-v"])
            .env_remove("RUST_LOG")
            .skills_dir(skills.path())
            .spawn()
            .await;
        Served {
            server,
            _skills: skills,
            _cwd: cwd,
        }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.server.base)
    }

    fn stderr(&self) -> String {
        let mut all = self.server.startup_lines.join("\n");
        all.push('\n');
        all.push_str(&self.server.later_lines.lock().unwrap().join("\n"));
        all
    }

    /// The server's peak resident set (`VmHWM`), in MiB.
    fn peak_rss_mib(&self) -> u64 {
        let pid = self.server.child.id().expect("the server runs");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .expect("VmHWM in /proc/PID/status");
        let kib: u64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap();
        kib / 1024
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap()
}

/// One MCP session of `key`.
struct Session {
    http: reqwest::Client,
    url: String,
    key: &'static str,
    id: String,
}

impl Session {
    /// `initialize` (declaring form elicitation) and `notifications/initialized`.
    async fn open(http: &reqwest::Client, url: &str, key: &'static str) -> Session {
        let response = http
            .post(url)
            .bearer_auth(key)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": VERSION,
                           "capabilities": {"elicitation": {"form": {}}},
                           "clientInfo": {"name": "security-mcp", "version": "0"}}
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "initialize");
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let _ = response.text().await;
        let session = Session {
            http: http.clone(),
            url: url.to_owned(),
            key,
            id,
        };
        let status = session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
            .status();
        assert_eq!(status, 202, "initialized");
        session
    }

    /// POSTs `message` on this session as `self.key`.
    async fn post(&self, message: &Value) -> reqwest::Response {
        self.post_as(self.key, message).await
    }

    /// POSTs `message` on this session's id with another `key`.
    async fn post_as(&self, key: &str, message: &Value) -> reqwest::Response {
        self.http
            .post(&self.url)
            .bearer_auth(key)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", VERSION)
            .json(message)
            .send()
            .await
            .unwrap()
    }

    /// The answer (its `result` or `error` object) to `method` with `params`.
    async fn rpc(&self, method: &str, params: Value) -> Value {
        let response = self
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .await;
        let text = response.text().await.unwrap();
        messages(&text)
            .into_iter()
            .find(|m| m["id"] == 1)
            .unwrap_or_else(|| panic!("{method}: no answer in {text}"))
    }

    async fn result(&self, method: &str, params: Value) -> Value {
        let answer = self.rpc(method, params).await;
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    async fn error(&self, method: &str, params: Value) -> Value {
        let answer = self.rpc(method, params).await;
        answer
            .get("error")
            .cloned()
            .unwrap_or_else(|| panic!("{method} answered {answer}, not an error"))
    }
}

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    let mut names: Vec<String> = list[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {list}"))
        .iter()
        .map(|item| item[field].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The skill names in `skill://NAME/...` URIs.
fn skills_of(uris: Vec<String>) -> Vec<String> {
    let mut skills: Vec<String> = uris
        .iter()
        .map(|uri| {
            let rest = uri.strip_prefix("skill://").unwrap();
            rest.split('/').next().unwrap().to_owned()
        })
        .collect();
    skills.dedup();
    skills
}

#[tokio::test]
async fn an_identity_lists_only_the_skills_its_grants_name_in_every_mcp_list() {
    let served = Served::start().await;
    let http = client();
    let session = Session::open(&http, &served.url(), KEY_ALPHA).await;

    let tools = session.result("tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["alpha"]);
    let prompts = session.result("prompts/list", json!({})).await;
    assert_eq!(names(&prompts, "prompts", "name"), ["alpha"]);
    let resources = session.result("resources/list", json!({})).await;
    assert_eq!(
        skills_of(names(&resources, "resources", "uri")),
        ["alpha"],
        "{resources}"
    );
    let skills = session.result("skills/list", json!({})).await;
    assert_eq!(
        skills_of(names(&skills, "skills", "uri")),
        ["alpha"],
        "{skills}"
    );
    let completion = session
        .result(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "skill://{skill}/{+path}"},
                   "argument": {"name": "skill", "value": ""}}),
        )
        .await;
    assert_eq!(completion["completion"]["values"], json!(["alpha"]));
}

/// A method's params for a skill name.
type Params = Box<dyn Fn(&str) -> Value>;

#[tokio::test]
async fn a_hidden_skill_answers_every_mcp_method_exactly_as_an_unknown_one() {
    let served = Served::start().await;
    let http = client();
    let session = Session::open(&http, &served.url(), KEY_ALPHA).await;

    // The same request about `beta` (published, not granted) and `nosuch` (no such skill).
    let cases: Vec<(&str, Params)> = vec![
        (
            "prompts/get",
            Box::new(|name| json!({"name": name, "arguments": {"text": "hi"}})),
        ),
        (
            "resources/read",
            Box::new(|name| json!({"uri": format!("skill://{name}/SKILL.md")})),
        ),
        (
            "resources/read",
            Box::new(|name| json!({"uri": format!("skill://{name}/notes.md")})),
        ),
        (
            "skills/get",
            Box::new(|name| json!({"uri": format!("skill://{name}/SKILL.md")})),
        ),
        (
            "completion/complete",
            Box::new(|name| {
                json!({"ref": {"type": "ref/prompt", "name": name},
                       "argument": {"name": "mode", "value": ""}})
            }),
        ),
        (
            "completion/complete",
            Box::new(|name| {
                json!({"ref": {"type": "ref/resource", "uri": "skill://{skill}/{+path}"},
                       "argument": {"name": "path", "value": ""},
                       "context": {"arguments": {"skill": name}}})
            }),
        ),
        (
            "resources/subscribe",
            Box::new(|name| json!({"uri": format!("skill://{name}/SKILL.md")})),
        ),
    ];
    for (method, params) in &cases {
        let hidden = session.rpc(method, params("beta")).await;
        let unknown = session.rpc(method, params("nosuch")).await;
        let hidden_text = hidden.to_string().replace("beta", "nosuch");
        assert_eq!(
            hidden_text,
            unknown.to_string(),
            "{method} of a hidden skill differs from an unknown one"
        );
        assert!(
            !hidden.to_string().contains("beta-secret-mode")
                && !hidden.to_string().contains("private notes"),
            "{method} gave away the hidden skill: {hidden}"
        );
    }
    // The granted skill is still served.
    let alpha = session
        .result("resources/read", json!({"uri": "skill://alpha/SKILL.md"}))
        .await;
    assert!(
        alpha["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("name: alpha")
    );
    let error = session
        .error("prompts/get", json!({"name": "beta", "arguments": {}}))
        .await;
    assert_eq!(error["code"], -32602, "{error}");
}

#[tokio::test]
async fn another_identity_holding_a_session_id_is_refused_and_the_gated_tool_does_not_run() {
    let served = Served::start().await;
    let http = client();
    let owner = Session::open(&http, &served.url(), KEY_ONE).await;

    // The owner calls the gated tool; the server asks it (on the call's stream) to approve.
    let mut call = owner
        .post(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": "gated-calc", "arguments": {"text": "6*7"}}}))
        .await;
    assert_eq!(call.status(), 200);
    let mut seen = String::new();
    let question = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(30), call.chunk())
            .await
            .expect("the approval is asked within 30 s")
            .unwrap()
            .expect("the call's stream stays open until it is answered");
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(question) = messages(&seen)
            .into_iter()
            .find(|m| m["method"] == "elicitation/create")
        {
            break question;
        }
    };

    // Another identity, holding the session id, approves: refused as an unknown session.
    let approve = json!({"jsonrpc": "2.0", "id": question["id"],
                         "result": {"action": "accept", "content": {"approve": true}}});
    let intruder = owner.post_as(KEY_TWO, &approve).await;
    let status = intruder.status().as_u16();
    let body = intruder.text().await.unwrap();
    assert_eq!(status, 404, "another identity's approval: {body}");
    let unknown = http
        .post(served.url())
        .bearer_auth(KEY_TWO)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", "no-such-session")
        .header("mcp-protocol-version", VERSION)
        .json(&approve)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    assert_eq!(
        unknown.text().await.unwrap(),
        body,
        "alike an unknown session"
    );
    // Nor may it list, or close the session (a DELETE is answered as for an unknown one,
    // 204, and closes nothing: the owner's answer below still arrives).
    let listed = owner
        .post_as(
            KEY_TWO,
            &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}),
        )
        .await;
    assert_eq!(listed.status(), 404);
    let closed = http
        .delete(served.url())
        .bearer_auth(KEY_TWO)
        .header("mcp-session-id", &owner.id)
        .header("mcp-protocol-version", VERSION)
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), 204);

    // The owner declines; the tool never ran.
    let decline = json!({"jsonrpc": "2.0", "id": question["id"],
                         "result": {"action": "decline"}});
    assert_eq!(owner.post(&decline).await.status(), 202);
    let answer = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(30), call.chunk())
            .await
            .expect("the call answers within 30 s")
            .unwrap()
            .expect("the call's stream holds its answer");
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(answer) = messages(&seen).into_iter().find(|m| m["id"] == 7) {
            break answer;
        }
    };
    assert_eq!(
        answer["result"]["structuredContent"]["echo"], "denied",
        "{answer}"
    );
    let stderr = served.stderr();
    assert!(
        !stderr.contains(&owner.id),
        "the session id is logged at -v:\n{stderr}"
    );
}

#[tokio::test]
async fn concurrent_reads_of_large_skill_files_stay_under_the_memory_ceiling() {
    let served = Served::start().await;
    let http = client();
    let before = served.peak_rss_mib();
    let mut sessions = Vec::new();
    // 48 reads: four on each of twelve sessions.
    let (sessions_n, reads_n) = (12, 4);
    let started = std::time::Instant::now();
    for _ in 0..sessions_n {
        sessions.push(Session::open(&http, &served.url(), KEY_ONE).await);
    }
    let reads = sessions.iter().flat_map(|session| {
        (0..reads_n).map(move |n| async move {
            let response = session
                .post(
                    &json!({"jsonrpc": "2.0", "id": n + 1, "method": "resources/read",
                               "params": {"uri": "skill://big/data.txt"}}),
                )
                .await;
            let text = response.text().await.unwrap();
            match text.len() > BIG_BYTES {
                true => Ok(()),
                false => Err(text),
            }
        })
    });
    let outcomes = futures::future::join_all(reads).await;
    let peak = served.peak_rss_mib();
    let read = outcomes.iter().filter(|o| o.is_ok()).count();
    for refused in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        assert!(
            refused.contains("skill files") && refused.contains("retry"),
            "a read is answered whole or refused by the read budget: {refused}"
        );
    }
    eprintln!(
        "{} reads of 15 MiB: {read} answered whole in {:?}, peak RSS {before} -> {peak} MiB",
        outcomes.len(),
        started.elapsed()
    );
    assert!(read >= 8, "most reads are answered, some at once: {read}");
    assert!(
        peak < RSS_CEILING_MIB,
        "peak RSS {peak} MiB, over the {RSS_CEILING_MIB} MiB ceiling"
    );
}
