//! `[auth]` on the real `skillet serve --http`, over raw HTTP:
//! - every refused credential (none, a wrong key, a revoked key, an expired / not-yet-valid /
//!   wrong-audience / wrong-issuer / badly signed / `alg: none` JWT) is answered once with 401
//!   and the RFC 9728 challenge on every door (A2E, MCP, A2A), and nothing reaches the model;
//! - a valid key or token runs its skills only: another skill, an unknown one and an
//!   `llm_override` without the grant are all `unauthorized` (403), alike; discover lists only
//!   the caller's skills;
//! - `/metrics` needs its own scope; per-identity limits answer 429 with `Retry-After`;
//! - the audit file has one record per decision naming the identity, never a secret, and no
//!   secret (canary) reaches stderr;
//! - `serve --http` on a non-loopback address without `[auth]` refuses to start unless
//!   `--allow-unauthenticated`.
//!
//! The token issuer is the test's own (`auth_support`): an ES256 key and its JWKS on 127.0.0.1.

use crate::auth_support;
use crate::cli_support;

use std::time::Duration;

use serde_json::{Value, json};

use auth_support::*;
use cli_support::SKILLET;

fn challenge(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn every_refused_credential_is_answered_once_with_401_on_every_door_and_nothing_runs() {
    let good = SigningKey::new("k1");
    let stranger = SigningKey::new("k1");
    let jwks = Jwks::serve(vec![good.jwk()]).await;
    let server = AuthServer::start(&jwks.url, 0).await;
    let client = reqwest::Client::new();
    let mut expired = claims("alice", "run-a");
    expired["exp"] = json!(now() - 60);
    let mut early = claims("alice", "run-a");
    early["nbf"] = json!(now() + 600);
    let mut wrong_aud = claims("alice", "run-a");
    wrong_aud["aud"] = json!("another-service");
    let mut wrong_iss = claims("alice", "run-a");
    wrong_iss["iss"] = json!("https://evil.test");
    let unsigned = {
        let token = good.sign(&claims("alice", "run-a"));
        let mut parts: Vec<&str> = token.split('.').collect();
        let none_header = base64_url(&json!({"alg": "none"}).to_string());
        parts[0] = &none_header;
        format!("{}.{}.", parts[0], parts[1])
    };
    let cases: Vec<(&str, Option<String>)> = vec![
        ("no token", None),
        ("wrong key (canary)", Some(CANARY.to_owned())),
        ("revoked key", Some(KEY_REVOKED.to_owned())),
        ("expired JWT", Some(good.sign(&expired))),
        ("not-yet-valid JWT", Some(good.sign(&early))),
        ("wrong-audience JWT", Some(good.sign(&wrong_aud))),
        ("wrong-issuer JWT", Some(good.sign(&wrong_iss))),
        (
            "bad-signature JWT",
            Some(stranger.sign(&claims("alice", "run-a"))),
        ),
        ("alg none JWT", Some(unsigned)),
    ];
    for (name, token) in &cases {
        let (status, headers, body) =
            post_a2e(&client, &server, token.as_deref(), a2e_call("c1", "echo-a")).await;
        assert_eq!(status, 401, "{name}: {body}");
        let www = challenge(&headers);
        assert!(
            www.starts_with("Bearer resource_metadata=\"")
                && www.contains("/.well-known/oauth-protected-resource\""),
            "{name}: {www}"
        );
        assert_eq!(
            www.contains("error=\"invalid_token\""),
            token.is_some(),
            "{name}: {www}"
        );
        assert_eq!(body["type"], "skill/call/resp", "{name}: {body}");
        assert_eq!(body["error"]["code"], "unauthorized", "{name}: {body}");
        assert!(
            !body.to_string().contains("echo-"),
            "{name}: no hint of skills: {body}"
        );
        for path in ["/mcp", "/a2a"] {
            let mut request = client
                .post(server.url(path))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status().as_u16(), 401, "{name} on {path}");
            assert!(challenge(response.headers()).contains("resource_metadata="));
        }
    }
    assert_eq!(server.model_requests(&client).await, 0, "nothing ran");
    assert!(jwks.fetches.load(std::sync::atomic::Ordering::SeqCst) >= 1);
    // One record per door the revoked key was tried on; no anonymous refusal is in the file.
    let audit = server.audit(3).await;
    assert_eq!(audit.len(), 3, "only the revoked key is audited: {audit:?}");
    assert!(
        audit
            .iter()
            .all(|r| r["identity"] == "key-revoked" && r["outcome"] == "refused:revoked_key"),
        "{audit:?}"
    );
    assert!(
        server
            .stderr()
            .contains("reason=token refused: bad signature"),
        "the log says why a credential was refused"
    );
    let audit_text = std::fs::read_to_string(server.audit_path()).unwrap();
    for secret in [CANARY, KEY_REVOKED] {
        assert!(!audit_text.contains(secret), "a secret in the audit file");
        assert!(!server.stderr().contains(secret), "a secret on stderr");
    }
}

fn base64_url(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

#[tokio::test]
async fn a_valid_key_or_token_runs_its_skill_and_nothing_else_and_sees_only_its_skills() {
    let key = SigningKey::new("k1");
    let jwks = Jwks::serve(vec![key.jwk()]).await;
    let server = AuthServer::start(&jwks.url, 0).await;
    let client = reqwest::Client::new();
    let token_a = key.sign(&claims("alice", "run-a"));
    let token_none = key.sign(&claims("bob", "unrelated"));

    for token in [KEY_A, token_a.as_str()] {
        let (status, _, body) =
            post_a2e(&client, &server, Some(token), a2e_call("ok", "echo-a")).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["data"]["success"], true, "{body}");
        assert_eq!(body["data"]["data"]["echo"], "a", "{body}");
    }
    assert_eq!(server.model_requests(&client).await, 2);

    // Another skill, an unknown one, an override without the grant, a token without the
    // scope: the same `unauthorized`, nothing run.
    let mut with_override: Value = serde_json::from_str(&a2e_call("o", "echo-a")).unwrap();
    with_override["llm_override"] = json!({"provider_name": "mock"});
    let refused = [
        (KEY_A, a2e_call("b", "echo-b")),
        (KEY_A, a2e_call("u", "no-such-skill")),
        (KEY_A, with_override.to_string()),
        (token_none.as_str(), a2e_call("n", "echo-a")),
    ];
    let mut messages = Vec::new();
    for (token, body) in refused {
        let (status, _, answer) = post_a2e(&client, &server, Some(token), body).await;
        assert_eq!(status, 403, "{answer}");
        assert_eq!(answer["error"]["code"], "unauthorized", "{answer}");
        messages.push(answer["error"]["message"].as_str().unwrap().to_owned());
    }
    messages.dedup();
    assert_eq!(
        messages,
        ["not authorized for this call"],
        "refusals are indistinguishable"
    );
    assert_eq!(server.model_requests(&client).await, 2, "nothing more ran");

    let discover = json!({"type": "skill/discover/req", "id": "d"}).to_string();
    let (_, _, listed) = post_a2e(&client, &server, Some(KEY_A), discover.clone()).await;
    let names: Vec<&str> = listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo-a"]);
    let (_, _, listed) = post_a2e(&client, &server, Some(&token_none), discover).await;
    assert_eq!(listed["skills"], json!([]));

    let audit = server.audit(6).await;
    let find = |identity: &str, outcome: &str| {
        audit
            .iter()
            .any(|r| r["identity"] == identity && r["outcome"] == outcome)
    };
    assert!(find("key-a", "ok"), "{audit:?}");
    assert!(find("https://issuer.test#alice", "ok"), "{audit:?}");
    assert!(find("key-a", "refused:unauthorized"), "{audit:?}");
    assert!(
        find("https://issuer.test#bob", "refused:unauthorized"),
        "{audit:?}"
    );
    let ok = audit.iter().find(|r| r["outcome"] == "ok").unwrap();
    assert_eq!(ok["skill"], "echo-a");
    assert!(ok["duration_ms"].is_u64(), "{ok}");
    assert!(
        server.stderr().contains("call audited"),
        "the audit log line"
    );
    let stderr = server.stderr();
    for line in stderr.lines() {
        assert!(
            !line.contains(KEY_A) && !line.contains(&token_a),
            "a secret on stderr: {line}"
        );
    }
}

#[tokio::test]
async fn a_rotated_issuer_key_is_fetched_on_its_unknown_kid_but_unknown_kids_cannot_flood_the_issuer()
 {
    let old = SigningKey::new("old");
    let new = SigningKey::new("new");
    let jwks = Jwks::serve(vec![old.jwk()]).await;
    let server = AuthServer::start_with(&jwks.url, 0, "jwks_min_refresh_seconds = 0").await;
    let client = reqwest::Client::new();
    let discover = || json!({"type": "skill/discover/req", "id": "d"}).to_string();
    let status = |token: String| {
        let client = client.clone();
        let server = &server;
        async move { post_a2e(&client, server, Some(&token), discover()).await.0 }
    };
    assert_eq!(status(old.sign(&claims("alice", "run-a"))).await, 200);
    assert_eq!(jwks.fetch_count(), 1, "fetched once, then cached");
    assert_eq!(status(old.sign(&claims("alice", "run-a"))).await, 200);
    assert_eq!(jwks.fetch_count(), 1, "the cache answers");
    jwks.rotate(vec![new.jwk()]);
    assert_eq!(
        status(new.sign(&claims("alice", "run-a"))).await,
        200,
        "refreshed on the new kid"
    );
    assert_eq!(jwks.fetch_count(), 2);
    assert_eq!(
        status(old.sign(&claims("alice", "run-a"))).await,
        401,
        "the retired key is gone"
    );

    // With the default minimum interval, a burst of made-up kids fetches nothing more.
    let guarded_jwks = Jwks::serve(vec![old.jwk()]).await;
    let guarded = AuthServer::start(&guarded_jwks.url, 0).await;
    let (ok, _, _) = post_a2e(
        &client,
        &guarded,
        Some(&old.sign(&claims("a", "run-a"))),
        discover(),
    )
    .await;
    assert_eq!(ok, 200);
    for n in 0..20 {
        let forged = SigningKey::new(&format!("made-up-{n}"));
        let (code, _, _) = post_a2e(
            &client,
            &guarded,
            Some(&forged.sign(&claims("a", "run-a"))),
            discover(),
        )
        .await;
        assert_eq!(code, 401);
    }
    assert_eq!(
        guarded_jwks.fetch_count(),
        1,
        "unknown kids within the interval fetch nothing"
    );
}

#[tokio::test]
async fn metrics_needs_the_metrics_scope_and_the_public_routes_need_nothing() {
    let jwks = Jwks::serve(vec![]).await;
    let server = AuthServer::start(&jwks.url, 0).await;
    let client = reqwest::Client::new();
    let get = |path: &str, token: Option<&str>| {
        let mut request = client.get(server.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    assert_eq!(get("/metrics", None).await.unwrap().status().as_u16(), 401);
    let forbidden = get("/metrics", Some(KEY_A)).await.unwrap();
    assert_eq!(forbidden.status().as_u16(), 403);
    assert!(
        challenge(forbidden.headers()).contains("error=\"insufficient_scope\", scope=\"metrics\"")
    );
    let metrics = get("/metrics", Some(KEY_METRICS)).await.unwrap();
    assert_eq!(metrics.status().as_u16(), 200);
    assert!(metrics.text().await.unwrap().contains("# EOF"));
    for path in ["/healthz", "/.well-known/agent-card.json"] {
        assert_eq!(
            get(path, None).await.unwrap().status().as_u16(),
            200,
            "{path}"
        );
    }
    let metadata: Value = get("/.well-known/oauth-protected-resource", None)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["resource"], server.server.base);
    assert_eq!(metadata["authorization_servers"], json!([ISSUER]));
    assert_eq!(
        metadata["scopes_supported"],
        json!(["console", "metrics", "override-a", "run-a", "run-tagged"])
    );
    assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
}

#[tokio::test]
async fn an_identity_over_its_limits_gets_429_with_retry_after_and_others_are_unaffected() {
    let jwks = Jwks::serve(vec![]).await;
    let server = AuthServer::start(&jwks.url, 1500).await;
    let client = reqwest::Client::new();
    let (status, _, body) = post_a2e(
        &client,
        &server,
        Some(KEY_LIMITED),
        a2e_call("l1", "echo-a"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, headers, body) = post_a2e(
        &client,
        &server,
        Some(KEY_LIMITED),
        a2e_call("l2", "echo-a"),
    )
    .await;
    assert_eq!(status, 429, "{body}");
    let wait: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(body["error"]["code"], "runtime_error", "{body}");
    assert_eq!(body["error"]["retryable"], true, "{body}");

    // One call at a time: a second one while the first runs is refused, a third after it is not.
    let first = {
        let client = client.clone();
        let url = server.url("/a2e");
        tokio::spawn(async move {
            client
                .post(url)
                .bearer_auth(KEY_ONE_AT_A_TIME)
                .body(a2e_call("s1", "echo-a"))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    };
    // Wait until the first call is in flight (the public health route counts it).
    for _ in 0..500 {
        let health: Value = client
            .get(server.url("/healthz"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if health["in_flight"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A skill it may not run is still 403 (access is decided before limits) ...
    let (status, _, _) = post_a2e(
        &client,
        &server,
        Some(KEY_ONE_AT_A_TIME),
        a2e_call("s2", "echo-b"),
    )
    .await;
    assert_eq!(status, 403);
    // ... and one it may run is 429 while its first call runs.
    let (status, headers, body) = post_a2e(
        &client,
        &server,
        Some(KEY_ONE_AT_A_TIME),
        a2e_call("s3", "echo-a"),
    )
    .await;
    assert_eq!(status, 429, "a concurrent call is refused: {body}");
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(first.await.unwrap(), 200);
    let (status, _, body) =
        post_a2e(&client, &server, Some(KEY_A), a2e_call("other", "echo-a")).await;
    assert_eq!(status, 200, "another identity is unaffected: {body}");
    let audit = server.audit(3).await;
    assert!(
        audit
            .iter()
            .any(|r| r["identity"] == "key-limited" && r["outcome"] == "refused:rate_limited")
    );
}

#[tokio::test]
async fn serving_http_beyond_loopback_without_auth_is_refused_unless_explicitly_allowed() {
    let cwd = tempfile::tempdir().unwrap();
    let output = tokio::process::Command::new(SKILLET)
        .current_dir(cwd.path())
        .env_remove("SKILLET_CONFIG")
        .env_remove("SKILLET_PROVIDER")
        .args(["serve", "--http", "0.0.0.0:0"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("refusing to serve HTTP on 0.0.0.0:0 without authentication"),
        "{stderr}"
    );
    assert!(
        stderr.contains("[auth]") && stderr.contains("--allow-unauthenticated"),
        "{stderr}"
    );

    let mut child = tokio::process::Command::new(SKILLET)
        .current_dir(cwd.path())
        .env_remove("SKILLET_CONFIG")
        .env_remove("SKILLET_PROVIDER")
        .args(["serve", "--http", "0.0.0.0:0", "--allow-unauthenticated"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut warned = false;
    loop {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .expect("serving notice");
        warned |= line.contains("WITHOUT authentication");
        if line.contains("serving A2E on") {
            break;
        }
    }
    assert!(warned, "the warning comes before serving");
    child.kill().await.unwrap();
}
