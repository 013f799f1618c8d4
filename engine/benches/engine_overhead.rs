//! Engine overhead per turn against a direct provider call, with mock-llm at zero latency on
//! 127.0.0.1, printed as a ratio. Run with
//! `cargo bench -p skillet-engine --bench engine_overhead [-- ITERATIONS]`.
//!
//! Two workloads, each timed through the executor (`SkillService::call`: lookup, input
//! validation, rendering, events, output validation, result assembly) and as the same chat
//! requests sent straight to the provider:
//! - **one turn**: a schema-validated final answer;
//! - **three turns**: two tool-calling turns (a trivial tool) and a final answer.
//!
//! A benchmark, not a test: it only asserts that every call succeeded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mock_llm::{MockConfig, MockServer, Scenario};
use serde_json::{Value, json};
use skillet_engine::protocol::{LLMConfig, SkillCallRequest};
use skillet_engine::run::{Executor, spec_from_llm_config};
use skillet_engine::service::SkillService;
use skillet_engine::skill::{Registry, load_skill_dir};
use skillet_engine::tools::{Tool, ToolOutput, ToolRegistry, tool_fn};
use skillet_providers::{
    CallOptions, ChatMessage, ChatRequest, Provider, ProviderPool, ResponseSchema, ToolCall,
    ToolSpec,
};

const SCENARIO: &str = r#"
rules:
  - name: tool-turn
    when: { system_contains: "MULTI", tool_results: false }
    reply: { tool_calls: [{ name: echo, arguments: { n: 1 }, id: call_a }] }
  - name: tool-turn-2
    when: { system_contains: "MULTI", turn: 2 }
    reply: { tool_calls: [{ name: echo, arguments: { n: 2 }, id: call_b }] }
  - name: answer
    reply: { json: { answer: "forty-two", confidence: 0.9 } }
"#;

const OUTPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {"answer": {"type": "string"}, "confidence": {"type": "number"}},
  "required": ["answer", "confidence"]
}"#;

fn write_skill(root: &std::path::Path, name: &str, body: &str, tools: bool) {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(dir.join("assets/output.schema.json"), OUTPUT_SCHEMA).unwrap();
    let tools_line = if tools {
        "  a2e-tools: '[\"echo\"]'\n"
    } else {
        ""
    };
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Benchmark skill.\nmetadata:\n  \
             a2a-output-schema: assets/output.schema.json\n  a2e-max-turns: '4'\n{tools_line}---\n{body}\n"
        ),
    )
    .unwrap();
}

struct Fixture {
    executor: Executor,
    provider: Arc<dyn Provider>,
    tool_spec: ToolSpec,
    schema: Value,
}

async fn fixture(server: &MockServer, root: &std::path::Path) -> Fixture {
    write_skill(root, "single", "Answer the question. {{ question }}", false);
    write_skill(
        root,
        "multi",
        "MULTI: use echo twice, then answer. {{ question }}",
        true,
    );
    let registry = Registry::new();
    for name in ["single", "multi"] {
        registry
            .register(
                load_skill_dir(
                    &root.join(name),
                    skillet_engine::skill::SkillSource::Project,
                )
                .unwrap(),
            )
            .unwrap();
    }
    let echo = tool_fn(
        "echo",
        "Echoes its input",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        |args, _| async move { Ok(ToolOutput::json(args)) },
    );
    let tool_spec = ToolSpec {
        name: "echo".into(),
        description: "Echoes its input".into(),
        parameters: echo.input_schema().clone().into(),
    };
    let mut tools = ToolRegistry::new();
    tools.register_tool(echo).unwrap();
    let config: LLMConfig = serde_json::from_value(json!({
        "provider_name": "openai-compatible",
        "provider_credentials": {"api_key": "bench"},
        "provider_config": {"model": "mock-model", "base_url": format!("{}/v1", server.base_url())}
    }))
    .unwrap();
    let pool = Arc::new(ProviderPool::new());
    let provider = pool
        .provider(&spec_from_llm_config(&config).unwrap())
        .unwrap();
    let executor = Executor::builder()
        .skills(Arc::new(registry))
        .tools(Arc::new(tools))
        .provider_pool(pool)
        .default_llm(config)
        .build()
        .unwrap();
    Fixture {
        executor,
        provider,
        tool_spec,
        schema: serde_json::from_str(OUTPUT_SCHEMA).unwrap(),
    }
}

async fn engine_call(f: &Fixture, skill: &str) {
    let mut request = SkillCallRequest::new(
        skill,
        json!({"question": "What is six times seven?"})
            .as_object()
            .cloned()
            .unwrap(),
    );
    request.streaming = false;
    let response = f.executor.call(request, None, Default::default()).await;
    let result = response.data.expect("executed");
    assert!(result.success, "{result:?}");
}

/// The same chat requests the engine sends, straight to the provider.
async fn direct_calls(f: &Fixture, turns: usize) {
    let system = if turns == 1 {
        "Answer the question."
    } else {
        "MULTI: use echo twice."
    };
    let mut messages = vec![ChatMessage::user(
        r#"{"question":"What is six times seven?"}"#,
    )];
    for turn in 0..turns {
        let request = ChatRequest {
            system: Some(system.to_owned()),
            messages: messages.clone(),
            tools: if turns > 1 {
                vec![f.tool_spec.clone()]
            } else {
                Vec::new()
            },
            response_schema: Some(ResponseSchema {
                name: "bench".into(),
                schema: f.schema.clone().into(),
            }),
            hints: Default::default(),
            ..Default::default()
        };
        let response = f
            .provider
            .chat(request, CallOptions::default())
            .await
            .unwrap();
        if turn + 1 < turns {
            let call: ToolCall = response.tool_calls[0].clone();
            messages.push(ChatMessage::Assistant {
                text: response.text,
                tool_calls: vec![call.clone()],
                thinking: Vec::new(),
            });
            messages.push(ChatMessage::tool_result(
                &call.id,
                &call.name,
                call.arguments.to_string(),
            ));
        } else {
            let _: Value = serde_json::from_str(&response.text).unwrap();
        }
    }
}

async fn time<F, Fut>(iterations: usize, mut run: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..iterations / 10 + 1 {
        run().await;
    }
    let start = Instant::now();
    for _ in 0..iterations {
        run().await;
    }
    start.elapsed() / iterations as u32
}

fn main() {
    let iterations: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(300);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let scenario = Scenario::from_yaml_str(SCENARIO).unwrap();
        let server = MockServer::start(MockConfig::default().with_scenario(scenario))
            .await
            .unwrap();
        let root = tempfile::tempdir().unwrap();
        let f = fixture(&server, root.path()).await;
        println!("engine overhead, mock-llm at zero latency, {iterations} iterations each");
        for (skill, turns) in [("single", 1usize), ("multi", 3)] {
            let direct = time(iterations, || direct_calls(&f, turns)).await;
            let engine = time(iterations, || engine_call(&f, skill)).await;
            let per_turn_direct = direct / turns as u32;
            let per_turn_engine = engine / turns as u32;
            println!(
                "{turns} turn(s): direct {:>8.1} µs/turn, engine {:>8.1} µs/turn, \
                 overhead {:>7.1} µs/turn, ratio {:.2}",
                per_turn_direct.as_secs_f64() * 1e6,
                per_turn_engine.as_secs_f64() * 1e6,
                (per_turn_engine.as_secs_f64() - per_turn_direct.as_secs_f64()) * 1e6,
                engine.as_secs_f64() / direct.as_secs_f64()
            );
        }
        server.shutdown().await;
    });
}
