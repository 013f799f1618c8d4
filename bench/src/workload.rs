//! The workload every mode runs: the `bench-calc` skill (two `calculator` calls, then a JSON
//! answer validated against its output schema), its mock-llm scenario, the call arguments and
//! the answer every call must produce; plus where the skill and an executor over it come from.
//!
//! The skill's files live in `bench/skills/bench-calc/` and are compiled into the binary, so
//! the bench runs from any directory: [`SkillFiles::write`] puts them into a temp dir that the
//! executor (or a `skillet serve` child) loads like any other skill root.
//!
//! Not here: where mock-llm runs (`mock`), how each mode drives calls (`modes`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use skillet_engine::protocol::{LLMConfig, SkillCallRequest};
use skillet_engine::run::{Executor, Limits};
use skillet_engine::skill::{Registry, load_skills_root};
use skillet_engine::tools::{ToolRegistry, builtin};

/// The skill's name.
pub const SKILL: &str = "bench-calc";
/// The model name every request carries.
pub const MODEL: &str = "bench-model";
/// Model turns per call: tool call, tool call, final answer.
pub const TURNS_PER_CALL: u64 = 3;
/// The scenario mock-llm answers the skill with.
pub const SCENARIO: &str = include_str!("../skills/bench-calc/mock-scenario.yaml");

const SKILL_MD: &str = include_str!("../skills/bench-calc/SKILL.md");
const INPUT_SCHEMA: &str = include_str!("../skills/bench-calc/assets/input.schema.json");
const OUTPUT_SCHEMA: &str = include_str!("../skills/bench-calc/assets/output.schema.json");

/// The arguments of every call.
pub fn arguments() -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("a".into(), json!(6));
    args.insert("b".into(), json!(7));
    args.insert("c".into(), json!(1));
    args
}

/// The `data` every successful call returns.
pub fn expected_output() -> Value {
    json!({"result": 43, "steps": ["6 * 7 = 42", "42 + 1 = 43"]})
}

/// A call request for the skill. Not streamed: events are collected into the result but not
/// pushed, so every mode makes the same non-streamed provider requests.
pub fn request() -> SkillCallRequest {
    let mut request = SkillCallRequest::new(SKILL, arguments());
    request.streaming = false;
    request
}

/// Where the model (mock-llm) is and how to speak to it.
#[derive(Debug, Clone)]
pub struct ModelEndpoint {
    /// The mock's base URL, no trailing slash.
    pub url: String,
    /// HTTP/2 by prior knowledge (`h2c`): every call multiplexes over one connection.
    pub http2: bool,
}

/// The skill written into a temp dir (kept alive by this value).
#[derive(Debug)]
pub struct SkillFiles {
    root: tempfile::TempDir,
}

impl SkillFiles {
    /// Writes the skill under a fresh temp dir.
    pub fn write() -> anyhow::Result<Self> {
        let root = tempfile::tempdir()?;
        let dir = root.path().join(SKILL);
        std::fs::create_dir_all(dir.join("assets"))?;
        std::fs::write(dir.join("SKILL.md"), SKILL_MD)?;
        std::fs::write(dir.join("assets/input.schema.json"), INPUT_SCHEMA)?;
        std::fs::write(dir.join("assets/output.schema.json"), OUTPUT_SCHEMA)?;
        Ok(SkillFiles { root })
    }

    /// The skill root (the directory holding `bench-calc/`).
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// Writes a `skillet.toml` for `skillet serve` into the temp dir: the mock at `mock_url`
    /// as the only provider (its key read from [`API_KEY_ENV`]), this skill root, and a
    /// concurrent-call limit of `max_calls` (the default, 64, would answer the rest of a large
    /// run with `runtime_error` instead of queueing them). The console's run history is off: a
    /// bench measures the call path, not a SQLite file filling up (its cost per call is in
    /// `BENCHMARKS.md`).
    pub fn write_config(&self, model: &ModelEndpoint, max_calls: usize) -> anyhow::Result<PathBuf> {
        let path = self.root.path().join("skillet.toml");
        let text = format!(
            "skills_dirs = [{root:?}]\ndefault_provider = \"bench\"\n\n\
             [providers.bench]\nkind = \"openai-compatible\"\nmodel = \"{MODEL}\"\n\
             base_url = \"{url}/v1\"\napi_key_env = \"{API_KEY_ENV}\"\n\
             options = {{ http2_prior_knowledge = {http2} }}\n\n\
             [server]\nmax_concurrent_calls = {max_calls}\nmax_message_bytes = 1048576\n\n\
             [console]\nhistory = false\n",
            root = self.root.path().display().to_string(),
            url = model.url,
            http2 = model.http2,
        );
        std::fs::write(&path, text)?;
        Ok(path)
    }
}

/// The environment variable the `skillet serve` children read the (dummy) API key from.
pub const API_KEY_ENV: &str = "SKILLET_BENCH_API_KEY";

/// The host's model: OpenAI-compatible chat at the mock.
pub fn llm_config(model: &ModelEndpoint) -> anyhow::Result<LLMConfig> {
    Ok(serde_json::from_value(json!({
        "provider_name": "openai-compatible",
        "provider_credentials": {"api_key": "bench-key"},
        "provider_config": {
            "model": MODEL,
            "base_url": format!("{}/v1", model.url),
            "http2_prior_knowledge": model.http2,
        }
    }))?)
}

/// An executor serving the skill with the built-in tools, the mock as its model and default
/// limits: what `skillet serve` builds, minus the transport.
pub fn executor(files: &SkillFiles, model: &ModelEndpoint) -> anyhow::Result<Executor> {
    let report = load_skills_root(files.root(), skillet_engine::skill::SkillSource::Project);
    anyhow::ensure!(
        report.errors.is_empty(),
        "bench skill does not load: {:?}",
        report.errors
    );
    let skills = Registry::new();
    let refused = skills.register_all(report.skills);
    anyhow::ensure!(refused.is_empty(), "bench skill refused: {refused:?}");
    let mut tools = ToolRegistry::new();
    for tool in builtin::all() {
        tools
            .register_tool(tool)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let tools = Arc::new(tools);
    skills.resolve_dependencies(&|t| tools.has_tool(t), &|k| tools.toolkit(k).is_some());
    Ok(Executor::builder()
        .skills(Arc::new(skills))
        .tools(tools)
        .default_llm(llm_config(model)?)
        .limits(Limits::default())
        .build()?)
}
