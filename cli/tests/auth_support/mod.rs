//! What the `auth_*` tests share: a token issuer of their own — an ES256 key made with ring,
//! its JWKS served on 127.0.0.1 by a tiny HTTP server counting its fetches, and tokens signed
//! with any claims (or a wrong key) — plus a `skillet serve --http` with an `[auth]` section,
//! two test skills (`echo-a`, `echo-b`) and the embedded mock-llm, whose journal says whether a
//! call reached the model.
//!
//! It holds no assertions about the server.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::cli_support::{SKILLET, write_skill};
use crate::serve_support::{HttpServer, ServeHttp};

/// The issuer the test's tokens name.
pub const ISSUER: &str = "https://issuer.test";
/// The audience `[auth]` accepts.
pub const AUDIENCE: &str = "skillet-test";
/// The key that may run `echo-a`.
pub const KEY_A: &str = "sk-test-key-a-0123456789";
/// A revoked key (same scopes as `KEY_A`).
pub const KEY_REVOKED: &str = "sk-test-key-revoked-0123456789";
/// A key with only the metrics scope.
pub const KEY_METRICS: &str = "sk-test-key-metrics-0123456789";
/// A key for `echo-a` limited to one call per minute.
pub const KEY_LIMITED: &str = "sk-test-key-limited-0123456789";
/// A key that may run `echo-a` one call at a time.
pub const KEY_ONE_AT_A_TIME: &str = "sk-test-key-serial-0123456789";
/// A string that must never appear in any log, error or audit line.
pub const CANARY: &str = "sk-CANARY-4e1c9b7d";

/// An ES256 signing key with its JWK.
pub struct SigningKey {
    pair: EcdsaKeyPair,
    pub kid: String,
}

impl SigningKey {
    pub fn new(kid: &str) -> SigningKey {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        SigningKey {
            pair,
            kid: kid.to_owned(),
        }
    }

    pub fn jwk(&self) -> Value {
        let point = self.pair.public_key().as_ref();
        json!({
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": self.kid,
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        })
    }

    /// A compact JWS of `claims`, header `{"alg":"ES256","kid":…}`.
    pub fn sign(&self, claims: &Value) -> String {
        let header = json!({"alg": "ES256", "typ": "JWT", "kid": self.kid});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .unwrap();
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims valid for the test issuer and audience, with `scope`.
pub fn claims(sub: &str, scope: &str) -> Value {
    json!({
        "iss": ISSUER, "aud": AUDIENCE, "sub": sub, "scope": scope,
        "iat": now(), "exp": now() + 300,
    })
}

/// A JWKS served on 127.0.0.1 (a bare HTTP/1.1 server; each request is one fetch).
pub struct Jwks {
    pub url: String,
    pub fetches: Arc<AtomicUsize>,
    body: Arc<std::sync::Mutex<String>>,
}

impl Jwks {
    pub async fn serve(keys: Vec<Value>) -> Jwks {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
        let body = Arc::new(std::sync::Mutex::new(json!({"keys": keys}).to_string()));
        let served = Arc::clone(&body);
        let fetches = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&fetches);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                let body = served.lock().unwrap().clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = socket.read(&mut buf).await;
                    let response = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = socket.write_all(response.as_bytes()).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        Jwks { url, fetches, body }
    }

    /// Serves `keys` from now on (a key rotation at the issuer).
    pub fn rotate(&self, keys: Vec<Value>) {
        *self.body.lock().unwrap() = json!({"keys": keys}).to_string();
    }

    pub fn fetch_count(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

/// The `[auth]` section the tests serve with.
pub fn auth_config(jwks_url: &str, jwt_extra: &str) -> String {
    let sha = |key: &str| skillet_host::auth::sha256_hex(key);
    format!(
        r#"
[auth]
audit_file = "audit.jsonl"

[auth.scopes.run-a]
skills = ["echo-a"]

[auth.scopes.run-tagged]
tags = ["tagged"]

[auth.scopes.override-a]
skills = ["echo-a"]
llm_override = true

[[auth.api_keys]]
id = "key-a"
sha256 = "{a}"
scopes = ["run-a"]

[[auth.api_keys]]
id = "key-revoked"
sha256 = "{revoked}"
scopes = ["run-a"]
revoked = true

[[auth.api_keys]]
id = "key-metrics"
sha256 = "{metrics}"
scopes = ["metrics"]

[[auth.api_keys]]
id = "key-limited"
sha256 = "{limited}"
scopes = ["run-a"]
calls_per_minute = 1

[[auth.api_keys]]
id = "key-serial"
sha256 = "{serial}"
scopes = ["run-a"]
max_concurrent_calls = 1

[[auth.jwt]]
issuer = "{ISSUER}"
jwks_uri = "{jwks_url}"
audience = "{AUDIENCE}"
leeway_seconds = 5
{jwt_extra}
"#,
        a = sha(KEY_A),
        revoked = sha(KEY_REVOKED),
        metrics = sha(KEY_METRICS),
        limited = sha(KEY_LIMITED),
        serial = sha(KEY_ONE_AT_A_TIME),
    )
}

/// A served `skillet serve --http` with [`auth_config`] and the skills `echo-a` (answers after
/// `latency_ms`) and `echo-b`.
pub struct AuthServer {
    pub server: HttpServer,
    pub mock: String,
    pub cwd: tempfile::TempDir,
    _skills: tempfile::TempDir,
}

impl AuthServer {
    pub async fn start(jwks_url: &str, latency_ms: u64) -> AuthServer {
        AuthServer::start_with(jwks_url, latency_ms, "").await
    }

    /// [`AuthServer::start`] with `jwt_extra` appended to the `[[auth.jwt]]` table.
    pub async fn start_with(jwks_url: &str, latency_ms: u64, jwt_extra: &str) -> AuthServer {
        let skills = tempfile::tempdir().unwrap();
        write_skill(skills.path(), "echo-a", latency_ms, "{json: {echo: \"a\"}}");
        write_skill(skills.path(), "echo-b", 0, "{json: {echo: \"b\"}}");
        let cwd = tempfile::tempdir().unwrap();
        std::fs::write(
            cwd.path().join("skillet.toml"),
            auth_config(jwks_url, jwt_extra),
        )
        .unwrap();
        let server = ServeHttp::new(SKILLET)
            .cwd(cwd.path())
            .env("RUST_LOG", "debug")
            .skills_dir(skills.path())
            .spawn()
            .await;
        let mock = server
            .mock
            .clone()
            .expect("the embedded mock-llm URL is announced");
        AuthServer {
            server,
            mock,
            cwd,
            _skills: skills,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.base)
    }

    /// How many requests reached the model.
    pub async fn model_requests(&self, client: &reqwest::Client) -> usize {
        let base = self.mock.trim_end_matches('/').trim_end_matches("/v1");
        let journal: Value = client
            .get(format!("{base}/_mock/requests"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        journal.as_array().map_or(0, Vec::len)
    }

    pub fn audit_path(&self) -> PathBuf {
        self.cwd.path().join("audit.jsonl")
    }

    /// The audit file's records once it has at least `at_least` (waits up to 10 s: it is
    /// written by its own thread).
    pub async fn audit(&self, at_least: usize) -> Vec<Value> {
        for _ in 0..200 {
            let text = std::fs::read_to_string(self.audit_path()).unwrap_or_default();
            let records: Vec<Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            if records.len() >= at_least {
                return records;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("the audit file never had {at_least} records");
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        let mut all = self.server.startup_lines.join("\n");
        all.push('\n');
        all.push_str(&self.server.later_lines.lock().unwrap().join("\n"));
        all
    }
}

/// An A2E call of `skill` as JSON.
pub fn a2e_call(id: &str, skill: &str) -> String {
    json!({"type": "skill/call/req", "id": id, "name": skill, "arguments": {"text": "hi"}})
        .to_string()
}

/// POSTs an A2E message with `token` (none: no header); returns status, headers and body.
pub async fn post_a2e(
    client: &reqwest::Client,
    server: &AuthServer,
    token: Option<&str>,
    body: String,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = client
        .post(server.url("/a2e"))
        .header("content-type", "application/json")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, headers, body)
}
