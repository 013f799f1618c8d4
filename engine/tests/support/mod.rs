//! Shared helpers for the engine's integration tests: start mock-llm with a scenario, write
//! skills into temp directories, build an executor against the mock, collect live events,
//! count terminal hooks, and assert the event invariants every call must keep.
//!
//! Every helper talks to real components over real sockets (mock-llm on 127.0.0.1:0, the real
//! providers). Include with `mod support;` from a test file.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mock_llm::{MockConfig, MockServer, Scenario};
use serde_json::{Map, Value, json};
use skillet_engine::events::EventSink;
use skillet_engine::protocol::{
    EventKind, EventPayload, LLMConfig, SkillCallRequest, SkillCallResponse, SkillEvent,
    SkillResult,
};
use skillet_engine::run::{
    CallOutcome, Executor, ExecutorBuilder, Limits, TerminalEvent, TerminalHook,
};
use skillet_engine::service::SkillService;
use skillet_engine::skill::{self, Registry};
use skillet_engine::tools::ToolRegistry;
use tokio_util::sync::CancellationToken;

/// The model name every test config uses.
pub const MODEL: &str = "mock-model";

/// Starts mock-llm serving the scenario in `yaml`.
pub async fn start_mock(yaml: &str) -> MockServer {
    let scenario = Scenario::from_yaml_str(yaml).expect("test scenario parses");
    MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .expect("mock-llm starts")
}

/// An OpenAI-compatible `LLMConfig` pointing at `server`, with fast retries (the retry policy's
/// waits would otherwise make 429 tests slow).
pub fn llm_config(server: &MockServer) -> LLMConfig {
    llm_config_for(server, "openai-compatible", MODEL)
}

/// An `LLMConfig` for `provider` (`openai-compatible`, `ollama`, `anthropic`) and `model` at
/// `server`.
pub fn llm_config_for(server: &MockServer, provider: &str, model: &str) -> LLMConfig {
    let base_url = match provider {
        "openai-compatible" | "openai" => format!("{}/v1", server.base_url()),
        _ => server.base_url(),
    };
    serde_json::from_value(json!({
        "provider_name": provider,
        "provider_credentials": {"api_key": "test-key"},
        "provider_config": {
            "model": model,
            "base_url": base_url,
            "max_attempts": 3,
            "initial_backoff_ms": 5,
            "max_backoff_ms": 20
        }
    }))
    .expect("test LLMConfig decodes")
}

/// A skill written into a temp directory and loaded like a bundled one.
pub struct SkillDir {
    /// Keeps the directory alive.
    pub root: tempfile::TempDir,
    /// The loaded skill.
    pub skill: skill::CompiledSkill,
}

/// Describes a test skill; [`SkillSpec::write`] puts it on disk and loads it.
#[derive(Debug, Clone)]
pub struct SkillSpec {
    pub name: String,
    pub body: String,
    pub metadata: Vec<(String, String)>,
    pub input_schema: Option<Value>,
    pub output_schema: Option<Value>,
}

impl SkillSpec {
    /// A skill named `name` whose body is `body` (a strict template).
    pub fn new(name: &str, body: &str) -> Self {
        SkillSpec {
            name: name.to_owned(),
            body: body.to_owned(),
            metadata: vec![("a2e-template".into(), "strict".into())],
            input_schema: None,
            output_schema: None,
        }
    }

    /// Adds a metadata key (e.g. `a2e-tools`, `a2e-max-turns`).
    pub fn meta(mut self, key: &str, value: &str) -> Self {
        self.metadata.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Declares these tools.
    pub fn tools(self, tools: &[&str]) -> Self {
        let list = serde_json::to_string(tools).unwrap();
        self.meta("a2e-tools", &list)
    }

    /// Sets `a2e-max-turns`.
    pub fn max_turns(self, n: u32) -> Self {
        self.meta("a2e-max-turns", &n.to_string())
    }

    /// Sets the input schema.
    pub fn input(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// Sets the output schema.
    pub fn output(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Writes `SKILL.md` and the schema assets into a fresh temp dir and loads the skill.
    pub fn write(&self) -> SkillDir {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join(&self.name);
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        let mut metadata = self.metadata.clone();
        for (key, file, schema) in [
            ("a2a-input-schema", "input.schema.json", &self.input_schema),
            (
                "a2a-output-schema",
                "output.schema.json",
                &self.output_schema,
            ),
        ] {
            if let Some(schema) = schema {
                std::fs::write(dir.join("assets").join(file), schema.to_string()).unwrap();
                metadata.push((key.to_owned(), format!("assets/{file}")));
            }
        }
        let mut md = format!(
            "---\nname: {}\ndescription: Test skill {}.\nmetadata:\n",
            self.name, self.name
        );
        for (k, v) in &metadata {
            // A JSON string is a valid YAML double-quoted scalar.
            md.push_str(&format!("  {k}: {}\n", serde_json::to_string(v).unwrap()));
        }
        md.push_str("---\n");
        md.push_str(&self.body);
        std::fs::write(dir.join("SKILL.md"), md).unwrap();
        let skill = skill::load_skill_dir(&dir, skillet_engine::skill::SkillSource::Project)
            .unwrap_or_else(|e| panic!("test skill {} loads: {e:?}", self.name));
        SkillDir { root, skill }
    }
}

/// Loads a bundled skill from the repository's `skills/` directory.
pub fn bundled_skill(name: &str) -> skill::CompiledSkill {
    skill::load_skill_dir(
        &bundled_dir(name),
        skillet_engine::skill::SkillSource::System,
    )
    .unwrap_or_else(|e| panic!("bundled skill {name} loads: {e:?}"))
}

/// `skills/<name>` of the repository.
pub fn bundled_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("skills")
        .join(name)
}

/// A registry holding `skills`.
pub fn registry(skills: impl IntoIterator<Item = skill::CompiledSkill>) -> Arc<Registry> {
    let registry = Registry::new();
    let refused = registry.register_all(skills);
    assert!(refused.is_empty(), "{refused:?}");
    Arc::new(registry)
}

/// Counts terminal hook invocations, per request id.
#[derive(Default)]
pub struct HookCounter {
    calls: Mutex<Vec<(String, String)>>,
}

impl HookCounter {
    /// How many times the hook fired for request `req_id`.
    pub fn count(&self, req_id: &str) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(id, _)| id == req_id)
            .count()
    }

    /// The outcome labels recorded for `req_id` (`completed:<success>` or `rejected:<code>`).
    pub fn outcomes(&self, req_id: &str) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(id, _)| id == req_id)
            .map(|(_, o)| o.clone())
            .collect()
    }
}

#[async_trait]
impl TerminalHook for HookCounter {
    fn name(&self) -> &str {
        "counter"
    }

    async fn on_terminal(&self, event: TerminalEvent<'_>) {
        let label = match event.outcome {
            CallOutcome::Completed(result) => format!("completed:{}", result.success),
            CallOutcome::Rejected(error) => format!("rejected:{}", error.code),
            _ => "other".to_owned(),
        };
        self.calls
            .lock()
            .unwrap()
            .push((event.req_id.to_owned(), label));
    }
}

/// An executor under test plus the hook counter wired into it.
#[derive(Clone)]
pub struct Harness {
    pub executor: Executor,
    pub hooks: Arc<HookCounter>,
}

/// Builds an executor over `skills` and `tools` with `default` as the host model, `limits`,
/// and a [`HookCounter`]; `configure` may add more (gates, hooks, a policy).
pub fn harness_with(
    skills: Arc<Registry>,
    tools: ToolRegistry,
    default: Option<LLMConfig>,
    limits: Limits,
    configure: impl FnOnce(ExecutorBuilder) -> ExecutorBuilder,
) -> Harness {
    let tools = Arc::new(tools);
    skills.resolve_dependencies(&|t| tools.has_tool(t), &|k| tools.toolkit(k).is_some());
    let hooks = Arc::new(HookCounter::default());
    let mut builder = Executor::builder()
        .skills(skills)
        .tools(tools)
        .limits(limits)
        .hook(hooks.clone());
    if let Some(default) = default {
        builder = builder.default_llm(default);
    }
    let executor = configure(builder).build().expect("executor builds");
    Harness { executor, hooks }
}

/// [`harness_with`] without extra configuration.
pub fn harness(
    skills: Arc<Registry>,
    tools: ToolRegistry,
    default: Option<LLMConfig>,
    limits: Limits,
) -> Harness {
    harness_with(skills, tools, default, limits, |b| b)
}

/// Receives live events.
#[derive(Default)]
pub struct LiveEvents {
    events: Mutex<Vec<SkillEvent>>,
    notify: tokio::sync::Notify,
}

impl LiveEvents {
    /// The events received so far.
    pub fn events(&self) -> Vec<SkillEvent> {
        self.events.lock().unwrap().clone()
    }

    /// Waits until an event satisfying `pred` has arrived.
    pub async fn wait_for(&self, pred: impl Fn(&SkillEvent) -> bool) {
        loop {
            let notified = self.notify.notified();
            if self.events.lock().unwrap().iter().any(&pred) {
                return;
            }
            notified.await;
        }
    }
}

impl EventSink for LiveEvents {
    fn emit(&self, event: &SkillEvent) {
        self.events.lock().unwrap().push(event.clone());
        self.notify.notify_waiters();
    }
}

/// A call request for `skill` with `arguments` (a JSON object).
pub fn request(skill: &str, arguments: Value) -> SkillCallRequest {
    let arguments: Map<String, Value> = match arguments {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    };
    SkillCallRequest::new(skill, arguments)
}

/// What one call produced.
pub struct Called {
    pub response: SkillCallResponse,
    pub live: Vec<SkillEvent>,
}

impl Called {
    /// The execution result; panics (with the response) when the call was rejected.
    pub fn result(&self) -> &SkillResult {
        self.response
            .data
            .as_ref()
            .unwrap_or_else(|| panic!("expected a result, got {:?}", self.response.error))
    }
}

impl Harness {
    /// Runs `request` with a live sink; checks the response echoes the request, the hook fired
    /// exactly once, and (for executed calls) the event invariants.
    pub async fn call(&self, request: SkillCallRequest) -> Called {
        self.call_with_cancel(request, CancellationToken::new())
            .await
    }

    /// [`Harness::call`] with a cancellation token.
    pub async fn call_with_cancel(
        &self,
        request: SkillCallRequest,
        cancel: CancellationToken,
    ) -> Called {
        let live = Arc::new(LiveEvents::default());
        self.call_with(request, live, cancel).await
    }

    /// [`Harness::call`] with a given live sink and token.
    pub async fn call_with(
        &self,
        request: SkillCallRequest,
        live: Arc<LiveEvents>,
        cancel: CancellationToken,
    ) -> Called {
        let req_id = request.id.clone();
        let name = request.name.clone();
        let streaming = request.streaming;
        let response = self
            .executor
            .call(request, Some(live.clone() as Arc<dyn EventSink>), cancel)
            .await;
        assert_eq!(response.req_id, req_id);
        assert_eq!(response.name, name);
        assert!(
            response.data.is_some() != response.error.is_some(),
            "exactly one of data and error: {response:?}"
        );
        assert_eq!(
            self.hooks.count(&req_id),
            1,
            "the terminal hook fires exactly once per call"
        );
        let live = live.events();
        if let Some(result) = &response.data {
            assert_invariants(result, &req_id);
            if streaming {
                let live_seqs: Vec<u64> = live.iter().map(|e| e.seq).collect();
                let collected: Vec<u64> = result.events.iter().map(|e| e.seq).collect();
                assert_eq!(live_seqs, collected, "live events equal the collected ones");
            } else {
                assert!(
                    live.is_empty(),
                    "no live events without streaming: {live:?}"
                );
            }
        } else {
            assert!(live.is_empty(), "a rejected call emits no events");
        }
        Called { response, live }
    }
}

/// The invariants of every executed call's events: `seq` from 0 without gaps, all with the
/// call's `req_id`, `progress` non-decreasing and ending at 100, artifacts closed with `final`.
pub fn assert_invariants(result: &SkillResult, req_id: &str) {
    let events = &result.events;
    assert!(!events.is_empty(), "an executed call has events");
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event.seq, i as u64, "seq has no gaps: {events:#?}");
        assert_eq!(event.req_id, req_id);
    }
    let pcts: Vec<u8> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Progress { pct, .. } => Some(*pct),
            _ => None,
        })
        .collect();
    assert!(
        pcts.windows(2).all(|w| w[0] <= w[1]),
        "progress never decreases: {pcts:?}"
    );
    assert_eq!(pcts.last(), Some(&100), "progress ends at 100: {pcts:?}");
    let mut open: Vec<&str> = Vec::new();
    for event in events {
        if let EventPayload::Artifact { name, is_final, .. } = &event.payload {
            if *is_final {
                open.retain(|n| n != name);
            } else if !open.contains(&name.as_str()) {
                open.push(name);
            }
        }
    }
    assert!(
        open.is_empty() || result.error_code.is_some(),
        "every artifact of a successful call ends with a final chunk: {open:?}"
    );
}

/// The messages of `kind` events, in order.
pub fn messages_of(result: &SkillResult, kind: EventKind) -> Vec<String> {
    result
        .events
        .iter()
        .filter(|e| e.kind() == kind)
        .map(|e| match &e.payload {
            EventPayload::Progress { message, .. }
            | EventPayload::Log { message, .. }
            | EventPayload::Status { message, .. } => message.clone(),
            EventPayload::Artifact { chunk, .. } => chunk.clone(),
        })
        .collect()
}

/// The chat requests the mock received, as JSON bodies, in order.
pub fn chat_bodies(server: &MockServer) -> Vec<Value> {
    server
        .journal()
        .into_iter()
        .filter(|e| e.endpoint.ends_with("chat") || e.endpoint.ends_with("messages"))
        .map(|e| e.body)
        .collect()
}

/// The `role: tool` message contents of an OpenAI chat request body, in order.
pub fn tool_results_in(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Increments on every call; for checking whether a tool ran.
#[derive(Default, Debug)]
pub struct Counter(AtomicUsize);

impl Counter {
    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}
