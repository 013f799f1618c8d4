//! `[auth]` in the trace: the call span (`invoke_agent`) of an authenticated call carries the
//! caller's identity id as `enduser.id` — the key's id, never the key — and a caller cannot set
//! it itself through the call's metadata. Spans arrive at the test's own OTLP collector.

use crate::telemetry_support;

use serde_json::json;

use telemetry_support::*;

const KEY: &str = "sk-telemetry-key-7f3a";
const TRACE: &str = "6bf92f3577b34da6a3ce929d0e0e4738";

#[tokio::test]
async fn the_call_span_names_the_authenticated_identity_and_a_caller_cannot_spoof_it() {
    let (otlp, received) = start_collector().await;
    let auth = format!(
        "\n[auth]\n[auth.scopes.tally]\nskills = [\"tally\"]\n\n[[auth.api_keys]]\n\
         id = \"key-tally\"\nsha256 = \"{}\"\nscopes = [\"tally\"]\n",
        skillet_host::auth::sha256_hex(KEY)
    );
    let server = serve_with_telemetry(&otlp, &auth).await;
    let call = tally_call(
        "t1",
        json!({"skillet.caller": "mallory", "traceparent": format!("00-{TRACE}-a1f067aa0ba902b7-01")}),
    );
    let answer: serde_json::Value = reqwest::Client::new()
        .post(format!("{}/a2e", server.base))
        .bearer_auth(KEY)
        .body(call.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["data"]["success"], true, "{answer}");
    let spans = wait_for_spans(&received, TRACE, 1).await;
    let agent = spans
        .iter()
        .find(|s| s.name.starts_with("invoke_agent"))
        .expect("the call span");
    assert_eq!(str_attr(agent, "enduser.id"), "key-tally");
    let raw: Vec<u8> = received.raw().concat();
    assert!(
        !raw.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the key is in no exported byte"
    );
    assert!(
        !raw.windows(7).any(|w| w == b"mallory"),
        "the caller's own skillet.caller is dropped"
    );
}
