//! What `skillet eval` runs on: one service per `--model` (each named `provider/model`), the
//! judge that grades each one's expectations, and, with `--baseline`, the same models over a
//! registry holding the skill without its instructions.
//!
//! The judge is chosen as a run's model is: `--judge-provider` / `--judge-model`, else
//! `[eval] judge_provider` / `judge_model`, else each run's own model judges it. On the embedded
//! mock the judge is the same mock, scripted by the skill's `mock-scenario.yaml`.
//!
//! Not here: running the plan and printing it (`eval`), writing skill-creator's files
//! (`eval_results`).

use std::sync::Arc;

use serde_json::Value;

use super::args::{EvalArgs, GlobalArgs};
use super::exit::Failure;
use super::setup::{self, HostParts};
use crate::config::{ProviderChoice, ProviderShortcuts};
use skillet_engine::eval::{self, Judge, ModelTarget};
use skillet_engine::run::Executor;
use skillet_engine::service::SkillService;
use skillet_engine::skill::{CompiledSkill, Registry};
use skillet_engine::tools::ToolRegistry;
use skillet_protocol::LLMConfig;

/// Who grades expectations.
pub(super) enum JudgeChoice {
    /// Nobody (`--no-judge`).
    Off,
    /// Each run's own model.
    OwnModel,
    /// This model, for every run.
    Fixed(LLMConfig),
}

/// The model configurations to evaluate: one per `--model` (or the default without any).
pub(super) fn model_configs(
    global: &GlobalArgs,
    parts: &HostParts,
    default: &LLMConfig,
) -> Result<Vec<LLMConfig>, Failure> {
    if let Some(twice) = global
        .models
        .iter()
        .enumerate()
        .find(|(i, m)| global.models[..*i].contains(m))
        .map(|(_, m)| m)
    {
        return Err(Failure::usage(format!("--model {twice:?} is given twice")));
    }
    if global.models.is_empty() {
        return Ok(vec![default.clone()]);
    }
    global
        .models
        .iter()
        .map(|model| {
            let shortcuts = ProviderShortcuts {
                provider: global.provider.clone(),
                model: Some(model.clone()),
                base_url: global.base_url.clone(),
            };
            resolve_on(parts, &shortcuts, default, model)
        })
        .collect()
}

/// The judge `args` and `[eval]` ask for.
pub(super) fn judge_choice(
    args: &EvalArgs,
    global: &GlobalArgs,
    parts: &HostParts,
    default: &LLMConfig,
) -> Result<JudgeChoice, Failure> {
    if args.no_judge {
        return Ok(JudgeChoice::Off);
    }
    let settings = &parts.config.eval;
    let provider = args
        .judge_provider
        .clone()
        .or_else(|| settings.judge_provider.clone());
    let model = args
        .judge_model
        .clone()
        .or_else(|| settings.judge_model.clone());
    if provider.is_none() && model.is_none() {
        return Ok(JudgeChoice::OwnModel);
    }
    let shortcuts = ProviderShortcuts {
        base_url: if provider.is_none() {
            global.base_url.clone()
        } else {
            None
        },
        provider: provider.or_else(|| global.provider.clone()),
        model: model.clone(),
    };
    let label = model.unwrap_or_default();
    resolve_on(parts, &shortcuts, default, &label).map(JudgeChoice::Fixed)
}

/// The configuration `shortcuts` resolve to; on the embedded mock, the mock's own under
/// `model`'s name.
fn resolve_on(
    parts: &HostParts,
    shortcuts: &ProviderShortcuts,
    default: &LLMConfig,
    model: &str,
) -> Result<LLMConfig, Failure> {
    let mock = || {
        if model.is_empty() {
            default.clone()
        } else {
            with_model(default, model)
        }
    };
    if matches!(parts.choice, ProviderChoice::EmbeddedMock { .. }) && shortcuts.provider.is_none() {
        return Ok(mock());
    }
    match ProviderChoice::resolve(&parts.config, shortcuts).map_err(Failure::setup)? {
        ProviderChoice::Real { config, .. } => Ok(config),
        ProviderChoice::EmbeddedMock { .. } => Ok(mock()),
    }
}

/// One target per configuration, each over `skills`, with its judge.
pub(super) fn build_targets(
    parts: &HostParts,
    configs: &[LLMConfig],
    skills: &Arc<Registry>,
    judge: &JudgeChoice,
    timeout_seconds: u64,
) -> Result<Vec<ModelTarget>, Failure> {
    let fixed = match judge {
        JudgeChoice::Fixed(config) => Some(judge_on(parts, config, timeout_seconds)?),
        _ => None,
    };
    configs
        .iter()
        .map(|config| {
            let executor = executor_over(parts, config, skills, None)?;
            let judge = match judge {
                JudgeChoice::Off => None,
                JudgeChoice::OwnModel => Some(judge_on(parts, config, timeout_seconds)?),
                JudgeChoice::Fixed(_) => fixed.clone(),
            };
            let service: Arc<dyn SkillService> = Arc::new(executor);
            Ok(ModelTarget {
                label: model_label(config),
                service,
                judge,
            })
        })
        .collect()
}

/// An executor on `config` over `skills` (and `tools` instead of the host's, when given),
/// otherwise as `run` builds one.
pub(super) fn executor_over(
    parts: &HostParts,
    config: &LLMConfig,
    skills: &Arc<Registry>,
    tools: Option<&Arc<ToolRegistry>>,
) -> Result<Executor, Failure> {
    let mut builder = setup::executor_builder(
        parts,
        Some(config.clone()),
        parts.config.card.identity(None),
    )
    .skills(Arc::clone(skills));
    if let Some(tools) = tools {
        builder = builder.tools(Arc::clone(tools));
    }
    builder.build().map_err(Failure::setup)
}

/// A judge on `config`: an executor over the judge skill alone.
fn judge_on(parts: &HostParts, config: &LLMConfig, timeout_seconds: u64) -> Result<Judge, Failure> {
    let executor = executor_over(parts, config, &eval::judge_registry(), None)?;
    Ok(Judge {
        label: model_label(config),
        service: Arc::new(executor),
        timeout_seconds,
    })
}

/// `--baseline`'s registry: `skill` without its instructions, judged against the host as the
/// loaded skills are (tools, toolkits, environments).
pub(super) fn baseline_registry(parts: &HostParts, skill: &CompiledSkill) -> Arc<Registry> {
    let registry = Registry::new();
    // An empty registry takes any one skill.
    let _ = registry.register(eval::without_instructions(skill));
    setup::judge_skills(
        &registry,
        &parts.tools,
        &parts.config,
        &parts.choice,
        &parts.files,
    );
    Arc::new(registry)
}

fn with_model(config: &LLMConfig, model: &str) -> LLMConfig {
    let mut config = config.clone();
    config
        .provider_config
        .get_or_insert_with(Default::default)
        .insert("model".into(), Value::String(model.to_owned()));
    config
}

/// `provider/model`, as the run loop's status lines name it.
pub(super) fn model_label(config: &LLMConfig) -> String {
    let model = config
        .provider_config
        .as_ref()
        .and_then(|c| c.get("model"))
        .and_then(Value::as_str)
        .unwrap_or("default");
    format!("{}/{model}", config.provider_name)
}
