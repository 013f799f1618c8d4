//! rig as a peer of bench/peers (README.md there): one skill call done with rig's typed agent —
//! `rig-agent`'s `Agent::prompt_typed::<T>` over rig-core's OpenAI *chat completions* client —
//! the way a rig user writes it: the skill's rendered instructions as the preamble, the call's
//! arguments as the prompt, the skill's tools as rig tools (tools.rs), a Rust output type
//! (outputs.rs) whose schema rig sends as structured output.
//!
//! Reads one job as JSON on stdin — `{"base_url", "model", "skill", "instructions", "prompt",
//! "max_turns", "settings": {"temperature", "max_tokens", "seed"}}` — and writes one line of
//! JSON on stdout: `{"valid", "output", "error", "tools_called"}` (peers.py reads it). A run that
//! fails is `valid: false` with its error's first line, exit 0; an unreadable job exits 2.
//!
//! Not a member of the Skillet workspace: its own `[workspace]`, lock file and target dir.

mod outputs;
mod tools;

use std::io::Read;
use std::sync::{Arc, Mutex};

use rig_agent::{Agent, AgentBuilder};
use rig_core::providers::openai::OpenAIConfig;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Job {
    base_url: String,
    model: String,
    skill: String,
    instructions: String,
    prompt: String,
    max_turns: usize,
    #[serde(default)]
    settings: Settings,
}

#[derive(Deserialize, Default)]
struct Settings {
    temperature: Option<f64>,
    max_tokens: Option<u64>,
    seed: Option<u64>,
}

fn main() {
    let mut text = String::new();
    let job: Job = match std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())
        .and_then(|_| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(job) => job,
        Err(e) => {
            eprintln!(
                "rig-peer: the job on stdin is not readable: {e} (see src/main.rs for its fields)"
            );
            std::process::exit(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("rig-peer: cannot start the async runtime: {e}");
            std::process::exit(2);
        }
    };
    let called: tools::Called = Arc::new(Mutex::new(Vec::new()));
    let result = runtime.block_on(async {
        match job.skill.as_str() {
            "length-check" => {
                let agent = builder(&job)
                    .tool(tools::WordCount(called.clone()))
                    .tool(tools::Calculator(called.clone()))
                    .build();
                typed::<outputs::LengthCheck>(&agent, &job).await
            }
            "summarize" => typed::<outputs::Summary>(&builder(&job).build(), &job).await,
            "expense-report" => {
                let agent = builder(&job).tool(tools::Calculator(called.clone())).build();
                typed::<outputs::ExpenseReport>(&agent, &job).await
            }
            other => Err(format!(
                "no rig output type for the skill `{other}`: add one in bench/peers/rig/src/outputs.rs"
            )),
        }
    });
    let tools_called = called.lock().map(|names| names.clone()).unwrap_or_default();
    let answer = match result {
        Ok(output) => json!({"valid": true, "output": output, "tools_called": tools_called}),
        Err(error) => {
            let first = error.lines().next().unwrap_or_default().to_owned();
            json!({"valid": false, "error": first, "tools_called": tools_called})
        }
    };
    println!("{answer}");
}

/// The agent as a rig user starts it: rig-core's chat-completions client at the job's base URL,
/// the instructions as the preamble, the sampling settings.
fn builder(job: &Job) -> AgentBuilder {
    let client = OpenAIConfig::new("unused")
        .with_base_url(&job.base_url)
        .client();
    let mut builder = AgentBuilder::new(client.chat(&job.model)).preamble(&job.instructions);
    if let Some(temperature) = job.settings.temperature {
        builder = builder.temperature(temperature);
    }
    if let Some(max_tokens) = job.settings.max_tokens {
        builder = builder.max_tokens(max_tokens);
    }
    if let Some(seed) = job.settings.seed {
        builder = builder.seed(seed);
    }
    builder
}

/// One typed call, `prompt_typed::<T>` within the skill's turn limit; the answer as JSON.
async fn typed<T>(agent: &Agent, job: &Job) -> Result<Value, String>
where
    T: JsonSchema + DeserializeOwned + Serialize + Send + 'static,
{
    let response = agent
        .prompt_typed::<T>(job.prompt.as_str())
        .max_turns(job.max_turns)
        .await
        .map_err(|e| e.to_string())?;
    serde_json::to_value(&response.output).map_err(|e| e.to_string())
}
