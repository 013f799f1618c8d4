//! The web console of the real `skillet serve --http`, over raw HTTP (the browser test is
//! `console_browser.rs`):
//! - `/` and its assets are served with their content types and a strict CSP, embedded;
//! - the JSON routes list the skills, show one with its `SKILL.md`, and answer every bad input
//!   (unknown skill, unknown or malformed run id, bad filter, unknown route) with one clear
//!   4xx JSON body;
//! - every call of the server (here over `POST /a2e`, also a refused one) is in the history,
//!   with its input when content capture is on, filterable, and still there after a restart;
//! - under `[auth]` the page is public but `/console/api/` needs the console scope (401 without
//!   a key, 403 without the scope), and no key reaches the log.

use crate::cli_support;
use crate::serve_support;

use serde_json::{Value, json};

use cli_support::{SKILLET, call, write_skill};
use serve_support::{HttpServer, ServeHttp};

async fn serve(cwd: &std::path::Path, skills: &std::path::Path) -> HttpServer {
    ServeHttp::new(SKILLET)
        .cwd(cwd)
        .skills_dir(skills)
        .spawn()
        .await
}

async fn get(
    client: &reqwest::Client,
    url: String,
    key: Option<&str>,
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut request = client.get(url);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap())
}

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

#[tokio::test]
async fn the_console_serves_its_page_lists_skills_and_records_every_call_across_a_restart() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "echo-a", 0, "{json: {echo: \"a\"}}");
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("skillet.toml"),
        "[console]\nhistory_db = \"state/console.db\"\ncapture_content = true\n",
    )
    .unwrap();
    let client = reqwest::Client::new();
    let server = serve(cwd.path(), skills.path()).await;
    let url = |path: &str| format!("{}{path}", server.base);

    let (status, headers, body) = get(&client, url("/"), None).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert!(body.contains("/console/assets/app.js"));
    let (status, headers, body) = get(&client, url("/console/assets/app.js"), None).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/javascript; charset=utf-8");
    assert!(body.contains("route()"));
    let (status, headers, _) = get(&client, url("/console/assets/console.css"), None).await;
    assert_eq!(
        (status, headers["content-type"].to_str().unwrap()),
        (200, "text/css; charset=utf-8")
    );
    let (status, _, _) = get(&client, url("/console/assets/../../etc/passwd"), None).await;
    assert_eq!(status, 404);

    let (status, _, body) = get(&client, url("/console/api/skills"), None).await;
    assert_eq!(status, 200);
    let listed = json_of(&body);
    assert_eq!(listed["skills"][0]["name"], "echo-a");
    assert_eq!(listed["skills"][0]["category"], "testing");
    let (status, _, body) = get(&client, url("/console/api/skills/echo-a"), None).await;
    assert_eq!(status, 200);
    let shown = json_of(&body);
    assert!(
        shown["skill_md"]
            .as_str()
            .unwrap()
            .contains("Echo this text back")
    );
    assert_eq!(shown["skill"]["input_schema"]["required"], json!(["text"]));

    // Every bad input is one clear 4xx JSON answer.
    for (path, status, error) in [
        ("/console/api/skills/no-such-skill", 404, "not_found"),
        ("/console/api/runs/999999", 404, "not_found"),
        ("/console/api/runs/abc", 400, "bad_request"),
        ("/console/api/runs/-3", 400, "bad_request"),
        ("/console/api/runs?outcome=maybe", 400, "bad_request"),
        ("/console/api/runs?limit=0", 400, "bad_request"),
        ("/console/api/runs?since=yesterday", 400, "bad_request"),
        ("/console/api/runs?colour=red", 400, "bad_request"),
        ("/console/api/runs?skill=a&skill=b", 400, "bad_request"),
        ("/console/api/nothing/here", 404, "not_found"),
    ] {
        let (got, headers, body) = get(&client, url(path), None).await;
        assert_eq!(got, status, "{path}: {body}");
        assert_eq!(headers["content-type"], "application/json", "{path}");
        let body = json_of(&body);
        assert_eq!(body["error"], error, "{path}: {body}");
        assert!(!body["message"].as_str().unwrap().is_empty(), "{path}");
    }

    // Two calls over the A2E door: one runs, one is refused by the input schema.
    let ok = client
        .post(url("/a2e"))
        .body(call("run-1", "echo-a", json!({"text": "hello"})))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(ok["data"]["success"], true, "{ok}");
    let refused = client
        .post(url("/a2e"))
        .body(call("run-2", "echo-a", json!({"text": 5})))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(refused["error"]["code"], "schema_violation", "{refused}");

    let runs = json_of(&get(&client, url("/console/api/runs"), None).await.2);
    let ids: Vec<&str> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["req_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["run-2", "run-1"]);
    assert_eq!(runs["runs"][0]["outcome"], "rejected");
    assert_eq!(runs["runs"][0]["error_code"], "schema_violation");
    assert_eq!(runs["runs"][1]["outcome"], "success");
    assert_eq!(runs["runs"][1]["caller"], "anonymous");
    let only_ok = json_of(
        &get(
            &client,
            url("/console/api/runs?outcome=success&skill=echo-a"),
            None,
        )
        .await
        .2,
    );
    assert_eq!(only_ok["runs"].as_array().unwrap().len(), 1);
    let id = runs["runs"][1]["id"].as_i64().unwrap();
    let record = json_of(
        &get(&client, url(&format!("/console/api/runs/{id}")), None)
            .await
            .2,
    );
    assert_eq!(record["run"]["arguments"], json!({"text": "hello"}));
    assert_eq!(
        record["run"]["response"]["data"]["data"],
        json!({"echo": "a"})
    );

    // A restart keeps the history.
    drop(server);
    let server = serve(cwd.path(), skills.path()).await;
    let runs = json_of(
        &get(&client, format!("{}/console/api/runs", server.base), None)
            .await
            .2,
    );
    assert_eq!(runs["runs"].as_array().unwrap().len(), 2, "{runs}");
    assert!(cwd.path().join("state/console.db").is_file());
}

#[tokio::test]
async fn without_content_capture_the_history_keeps_no_input_or_answer() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(
        skills.path(),
        "echo-a",
        0,
        "{json: {echo: \"CANARY-ANSWER\"}}",
    );
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("skillet.toml"),
        "[console]\nhistory_db = \"h.db\"\n",
    )
    .unwrap();
    let client = reqwest::Client::new();
    let server = serve(cwd.path(), skills.path()).await;
    client
        .post(format!("{}/a2e", server.base))
        .body(call("run-1", "echo-a", json!({"text": "CANARY-INPUT"})))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let runs = json_of(
        &get(&client, format!("{}/console/api/runs", server.base), None)
            .await
            .2,
    );
    let run = &runs["runs"][0];
    assert_eq!(run["content_kept"], false, "{runs}");
    let id = run["id"].as_i64().unwrap();
    let record = json_of(
        &get(
            &client,
            format!("{}/console/api/runs/{id}", server.base),
            None,
        )
        .await
        .2,
    );
    assert_eq!(record["run"]["arguments"], Value::Null);
    assert_eq!(record["run"]["response"], Value::Null);
    drop(server);
    for name in ["h.db", "h.db-wal"] {
        let bytes = std::fs::read(cwd.path().join(name)).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("CANARY"),
            "{name} holds run content"
        );
    }
}

const CONSOLE_KEY: &str = "sk-console-key-0123456789";
const RUN_KEY: &str = "sk-run-only-key-0123456789";

#[tokio::test]
async fn under_auth_the_page_is_public_and_the_data_needs_the_console_scope() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "echo-a", 0, "{json: {echo: \"a\"}}");
    let cwd = tempfile::tempdir().unwrap();
    let sha = skillet_host::auth::sha256_hex;
    std::fs::write(
        cwd.path().join("skillet.toml"),
        format!(
            "[console]\nhistory_db = \"h.db\"\n\n[auth.scopes.run]\nskills = [\"*\"]\n\n\
             [[auth.api_keys]]\nid = \"operator\"\nsha256 = \"{}\"\nscopes = [\"run\", \"console\"]\n\n\
             [[auth.api_keys]]\nid = \"runner\"\nsha256 = \"{}\"\nscopes = [\"run\"]\n",
            sha(CONSOLE_KEY),
            sha(RUN_KEY)
        ),
    )
    .unwrap();
    let client = reqwest::Client::new();
    let server = ServeHttp::new(SKILLET)
        .cwd(cwd.path())
        .env("RUST_LOG", "debug")
        .skills_dir(skills.path())
        .spawn()
        .await;
    let url = |path: &str| format!("{}{path}", server.base);
    assert_eq!(get(&client, url("/"), None).await.0, 200);
    assert_eq!(
        get(&client, url("/console/assets/api.js"), None).await.0,
        200
    );
    for path in [
        "/console/api/skills",
        "/console/api/runs",
        "/console/api/info",
    ] {
        let (status, headers, _) = get(&client, url(path), None).await;
        assert_eq!(status, 401, "{path}");
        assert!(
            headers["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Bearer ")
        );
        let (status, headers, _) = get(&client, url(path), Some(RUN_KEY)).await;
        assert_eq!(status, 403, "{path}");
        let challenge = headers["www-authenticate"].to_str().unwrap();
        assert!(
            challenge.contains("insufficient_scope") && challenge.contains("scope=\"console\""),
            "{challenge}"
        );
        assert_eq!(
            get(&client, url(path), Some(CONSOLE_KEY)).await.0,
            200,
            "{path}"
        );
    }
    // The runner's call is recorded under its identity; the operator sees it in the history.
    let answer = client
        .post(url("/a2e"))
        .bearer_auth(RUN_KEY)
        .body(call("run-1", "echo-a", json!({"text": "hi"})))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(answer["data"]["success"], true, "{answer}");
    let runs = json_of(
        &get(&client, url("/console/api/runs"), Some(CONSOLE_KEY))
            .await
            .2,
    );
    assert_eq!(runs["runs"][0]["caller"], "runner", "{runs}");
    let scopes = json_of(
        &get(&client, url("/.well-known/oauth-protected-resource"), None)
            .await
            .2,
    );
    assert!(
        scopes["scopes_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("console")),
        "{scopes}"
    );
    let log = server.later_lines.lock().unwrap().join("\n") + &server.startup_lines.join("\n");
    for key in [CONSOLE_KEY, RUN_KEY] {
        assert!(!log.contains(key), "a key reached the log");
    }
}

#[tokio::test]
async fn a_console_turned_off_serves_nothing_and_a_history_turned_off_says_so() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "echo-a", 0, "{json: {echo: \"a\"}}");
    let client = reqwest::Client::new();

    let off = tempfile::tempdir().unwrap();
    std::fs::write(
        off.path().join("skillet.toml"),
        "[console]\nenabled = false\n",
    )
    .unwrap();
    let server = serve(off.path(), skills.path()).await;
    for path in ["/", "/console/assets/app.js", "/console/api/skills"] {
        let (status, _, _) = get(&client, format!("{}{path}", server.base), None).await;
        assert_eq!(status, 404, "{path} with the console off");
    }
    assert!(
        !off.path().join(".state/skillet/state.db").exists(),
        "no history file when off"
    );
    drop(server);

    let no_history = tempfile::tempdir().unwrap();
    std::fs::write(
        no_history.path().join("skillet.toml"),
        "[console]\nhistory = false\n",
    )
    .unwrap();
    let server = serve(no_history.path(), skills.path()).await;
    assert_eq!(get(&client, format!("{}/", server.base), None).await.0, 200);
    let info = json_of(
        &get(&client, format!("{}/console/api/info", server.base), None)
            .await
            .2,
    );
    assert_eq!(info["history"], false, "{info}");
    for path in ["/console/api/runs", "/console/api/runs/1"] {
        let (status, _, body) = get(&client, format!("{}{path}", server.base), None).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(json_of(&body)["error"], "no_history", "{path}");
    }
}
