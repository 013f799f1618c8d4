//! The whole stack across processes, once per provider API: the `mock-llm` binary serving the
//! bundled skills' scenarios, and `skillet serve --stdio` pointed at it as an OpenAI-compatible,
//! an Ollama and an Anthropic provider. Each run discovers the skills and calls all three
//! bundled skills at once over one connection (a tool call, a repair turn, a single turn), and
//! checks that every call gets exactly one validated answer, that events keep their invariants,
//! that each request went to that provider's endpoint, and that the API key — a canary read from
//! the environment — never appears on the wire back to the agent.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};
use skillet_tests::{JsonLinesChild, MockLlmProcess, binaries, bundled_scenarios, repo_root};
use tokio::process::Command;

const CANARY: &str = "sk-canary-5d1e0c9b-never-echo";
const TIMEOUT: Duration = Duration::from_secs(60);

fn calls() -> Vec<(&'static str, Value)> {
    let example = |skill: &str| -> Value {
        let path = repo_root()
            .join("skills")
            .join(skill)
            .join("examples/basic.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    vec![
        ("expense-report", example("expense-report")),
        ("code-review", example("code-review")),
        ("summarize", example("summarize")),
    ]
}

async fn serve_and_call_every_bundled_skill(provider: &str, endpoint: &str) {
    let scenarios = bundled_scenarios(&["expense-report", "code-review", "summarize"]);
    let mock = MockLlmProcess::start(&scenarios)
        .await
        .expect("mock-llm starts");
    let base_url = match provider {
        "openai-compatible" => format!("{}/v1", mock.url),
        _ => mock.url.clone(),
    };
    let mut command = Command::new(&binaries().0);
    command
        .current_dir(std::env::temp_dir())
        .args(["--skills-dir"])
        .arg(repo_root().join("skills"))
        .args([
            "--provider",
            provider,
            "--model",
            "mock-model",
            "--base-url",
            &base_url,
        ])
        .args(["serve", "--stdio"])
        .env_remove("SKILLET_CONFIG")
        .env_remove("RUST_LOG")
        .env("ANTHROPIC_API_KEY", CANARY)
        .env("OPENAI_API_KEY", CANARY);
    let mut serve = JsonLinesChild::spawn(command).expect("skillet serve starts");

    serve
        .send(&json!({"type": "skill/discover/req", "id": "d1", "filter_tags": ["finance", "coding"]}))
        .await
        .unwrap();
    for (skill, arguments) in calls() {
        serve
            .send(
                &json!({"type": "skill/call/req", "id": format!("call-{skill}"), "name": skill,
                           "arguments": arguments, "streaming": true}),
            )
            .await
            .unwrap();
    }

    let mut responses: HashMap<String, Value> = HashMap::new();
    let mut live_seqs: HashMap<String, Vec<u64>> = HashMap::new();
    let mut discovered = None;
    while responses.len() < 3 || discovered.is_none() {
        let message = serve.next(TIMEOUT).await.unwrap();
        let req_id = message["req_id"].as_str().unwrap_or_default().to_owned();
        match message["type"].as_str().unwrap() {
            "skill/discover/resp" => discovered = Some(message),
            "skill/event" => live_seqs
                .entry(req_id)
                .or_default()
                .push(message["seq"].as_u64().unwrap()),
            "skill/call/resp" => {
                assert!(
                    responses.insert(req_id.clone(), message).is_none(),
                    "two answers for {req_id}"
                );
            }
            other => panic!("unexpected message type {other}"),
        }
    }
    let (code, transcript) = serve.finish(TIMEOUT).await.unwrap();
    assert_eq!(code, 0, "serve exits 0 at EOF");

    let names: Vec<&str> = discovered.as_ref().unwrap()["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["code-review", "expense-report"], "tag filter is OR");

    for (skill, _) in calls() {
        let req_id = format!("call-{skill}");
        let response = &responses[&req_id];
        let result = &response["data"];
        assert_eq!(result["success"], true, "{provider} {skill}: {response}");
        assert!(response.get("error").is_none());
        let seqs = &live_seqs[&req_id];
        assert_eq!(
            *seqs,
            (0..seqs.len() as u64).collect::<Vec<_>>(),
            "live seq without gaps"
        );
        let collected = result["events"].as_array().unwrap();
        assert_eq!(
            collected.len(),
            seqs.len(),
            "every live event is also collected"
        );
        let pcts: Vec<u64> = collected
            .iter()
            .filter(|e| e["kind"] == "progress")
            .map(|e| e["data"]["pct"].as_u64().unwrap())
            .collect();
        assert!(
            pcts.windows(2).all(|w| w[0] <= w[1]),
            "progress never decreases: {pcts:?}"
        );
        assert_eq!(pcts.last(), Some(&100));
    }
    let expense = &responses["call-expense-report"]["data"]["data"];
    assert_eq!(expense["total"], json!(234.8));
    assert_eq!(expense["largest_item"], "Hotel");
    assert_eq!(
        responses["call-code-review"]["data"]["data"]["issues"][0]["severity"],
        "error"
    );
    let repaired = responses["call-code-review"]["data"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["kind"] == "log" && e["data"]["message"].as_str().unwrap().contains("repair"));
    assert!(repaired, "code-review went through a repair turn");

    let journal = mock.journal().await.unwrap();
    assert!(
        journal.len() >= 5,
        "2 + 2 + 1 model turns at least: {}",
        journal.len()
    );
    for entry in &journal {
        assert_eq!(
            entry["endpoint"], endpoint,
            "{provider} requests go to {endpoint}"
        );
    }
    let calculator_ran = journal
        .iter()
        .any(|e| e["body"].to_string().contains("234.8"));
    assert!(
        calculator_ran,
        "the calculator's result went back to the model"
    );
    for line in &transcript {
        assert!(
            !line.contains(CANARY),
            "the API key leaked to the agent: {line}"
        );
    }
    mock.stop().await;
}

#[tokio::test]
async fn every_bundled_skill_runs_through_serve_on_an_openai_compatible_provider() {
    serve_and_call_every_bundled_skill("openai-compatible", "openai.chat").await;
}

#[tokio::test]
async fn every_bundled_skill_runs_through_serve_on_an_ollama_provider() {
    serve_and_call_every_bundled_skill("ollama", "ollama.chat").await;
}

#[tokio::test]
async fn every_bundled_skill_runs_through_serve_on_an_anthropic_provider() {
    serve_and_call_every_bundled_skill("anthropic", "anthropic.messages").await;
}
