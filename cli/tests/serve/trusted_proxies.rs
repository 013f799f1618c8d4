//! `[server] trusted_proxies` on the real `skillet serve --http` with `[auth]`: the test's
//! client (on 127.0.0.1) plays the reverse proxy.
//! - from a trusted peer, `X-Forwarded-For` is the client address the audit trail names (the
//!   right-most hop that is not a trusted proxy, so a client cannot pick its own), and
//!   `X-Forwarded-Proto`/`-Host` the origin the protected-resource metadata, the
//!   `WWW-Authenticate` link and the Agent Card's interface URLs name;
//! - from a peer not in the list, the same headers change nothing.

use crate::auth_support;
use crate::cli_support;

use serde_json::Value;

use auth_support::*;

const FORWARDED: [(&str, &str); 3] = [
    ("x-forwarded-for", "1.2.3.4, 198.51.100.7"),
    ("x-forwarded-proto", "https"),
    ("x-forwarded-host", "skills.example.com"),
];

async fn get(client: &reqwest::Client, url: String) -> reqwest::Response {
    let mut request = client.get(url);
    for (name, value) in FORWARDED {
        request = request.header(name, value);
    }
    request.send().await.unwrap()
}

/// What the server made of the forwarded headers: (metadata resource, challenge, card URLs,
/// the audit record's client of a call).
async fn observe(server: &AuthServer) -> (String, String, Vec<String>, Value) {
    let client = reqwest::Client::new();
    let metadata: Value = get(&client, server.url("/.well-known/oauth-protected-resource"))
        .await
        .json()
        .await
        .unwrap();
    let unauthenticated = get(&client, server.url("/a2a")).await;
    assert_eq!(unauthenticated.status(), 401);
    let challenge = unauthenticated.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    let card: Value = get(&client, server.url("/.well-known/agent-card.json"))
        .await
        .json()
        .await
        .unwrap();
    let urls = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["url"].as_str().unwrap().to_owned())
        .collect();
    let mut call = client
        .post(server.url("/a2e"))
        .bearer_auth(KEY_A)
        .header("content-type", "application/json")
        .body(a2e_call("c1", "echo-a"));
    for (name, value) in FORWARDED {
        call = call.header(name, value);
    }
    let answer: Value = call.send().await.unwrap().json().await.unwrap();
    assert_eq!(answer["data"]["success"], true, "{answer}");
    let record = server
        .audit(1)
        .await
        .into_iter()
        .find(|r| r["req_id"] == "c1")
        .expect("the call's audit record");
    (
        metadata["resource"].as_str().unwrap().to_owned(),
        challenge,
        urls,
        record["client"].clone(),
    )
}

/// `[server]` with `trusted_proxies = list`; the forwarded public name is an allowed `Host`
/// (`origin_guard`: a trusted proxy's `X-Forwarded-Host` must name this server too).
fn proxies(list: &str) -> String {
    format!("\n[server]\ntrusted_proxies = {list}\nallowed_hosts = [\"skills.example.com\"]\n")
}

#[tokio::test]
async fn forwarded_headers_from_a_trusted_proxy_name_the_client_and_the_public_origin() {
    let jwks = Jwks::serve(vec![SigningKey::new("k1").jwk()]).await;
    let server =
        AuthServer::start_with(&jwks.url, 0, &proxies(r#"["10.0.0.0/8", "127.0.0.1"]"#)).await;
    let (resource, challenge, urls, client) = observe(&server).await;
    assert_eq!(resource, "https://skills.example.com");
    assert!(
        challenge.contains(
            "resource_metadata=\"https://skills.example.com/.well-known/oauth-protected-resource\""
        ),
        "{challenge}"
    );
    // Every URL names the public origin; the gRPC interface is its `host:port`.
    assert!(
        !urls.is_empty()
            && urls.iter().all(|u| {
                u.starts_with("https://skills.example.com/") || u == "skills.example.com:443"
            }),
        "{urls:?}"
    );
    assert!(
        urls.iter().any(|u| u == "skills.example.com:443"),
        "{urls:?}"
    );
    assert!(urls.iter().any(|u| u == "https://skills.example.com/a2a"));
    assert_eq!(
        client, "198.51.100.7",
        "the right-most untrusted hop, not the client's own 1.2.3.4"
    );
}

#[tokio::test]
async fn forwarded_headers_from_any_other_peer_are_ignored() {
    let jwks = Jwks::serve(vec![SigningKey::new("k1").jwk()]).await;
    let server = AuthServer::start_with(&jwks.url, 0, &proxies(r#"["10.0.0.0/8"]"#)).await;
    let (resource, challenge, urls, client) = observe(&server).await;
    let own = server.server.base.clone();
    assert!(own.starts_with("http://127.0.0.1:"), "{own}");
    assert_eq!(resource, own);
    assert!(!challenge.contains("example.com"), "{challenge}");
    let own_grpc = own.trim_start_matches("http://");
    assert!(
        urls.iter().all(|u| u.starts_with(&own) || u == own_grpc),
        "{urls:?} under {own}"
    );
    assert_eq!(client, "127.0.0.1", "the peer itself");
}

#[tokio::test]
async fn a_bad_trusted_proxies_entry_is_a_config_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("skillet.toml"),
        "[server]\ntrusted_proxies = [\"10.0.0.0/40\"]\n",
    )
    .unwrap();
    let out = std::process::Command::new(cli_support::SKILLET)
        .current_dir(dir.path())
        .args(["serve", "--http", "127.0.0.1:0"])
        .env_remove("SKILLET_CONFIG")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("server.trusted_proxies"), "{stderr}");
}
