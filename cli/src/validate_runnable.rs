//! What `skillet validate` checks beyond loading: what `run` and `serve` would refuse on this
//! host although the folder loads — tools and toolkits the skill declares that the host does
//! not offer (the skill would be `Blocked`), and a `mock-scenario.yaml` the embedded mock could
//! not load (every offline run would fail to start).
//!
//! Nothing is started: a tool is offered when it is a built-in or a `[tools.NAME]` entry, a
//! toolkit when `[toolkits.NAME]` declares it (whether its server starts is `serve`'s to say).
//! A tool a toolkit may provide cannot be known without starting it, so with toolkits declared
//! an unknown tool is a warning, not an error.
//!
//! Not here: loading and the provider policy (`validate`), environments (`validate_scripts`).

use std::path::Path;

use crate::config::Config;
use crate::embedded;
use skillet_engine::skill::{CompiledSkill, ManifestError};
use skillet_engine::tools::builtin;

/// The problems that would keep `compiled` from running on the host `config` describes.
pub(super) fn problems(compiled: &CompiledSkill, config: &Config) -> Vec<ManifestError> {
    let file = Path::new(compiled.spec.file_path.as_deref().unwrap_or("SKILL.md"));
    let mut found = Vec::new();
    let builtins: Vec<String> = builtin::all()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();
    for tool in &compiled.tools {
        if builtins.contains(tool) || config.tools.contains_key(tool) {
            continue;
        }
        let message = format!(
            "tool `{tool}` is not offered by this host, so the skill would be Blocked: declare \
             it as [tools.{tool}] in skillet.toml (docs/CONFIG.md), or take it out of the \
             skill's tools"
        );
        found.push(if config.toolkits.is_empty() {
            ManifestError::error(file, "tools", message)
        } else {
            ManifestError::warning(
                file,
                "tools",
                format!("{message} (unless one of the declared toolkits provides it)"),
            )
        });
    }
    for toolkit in &compiled.toolkits {
        if !config.toolkits.contains_key(toolkit) {
            found.push(ManifestError::error(
                file,
                "toolkits",
                format!(
                    "toolkit `{toolkit}` is not declared on this host, so the skill would be \
                     Blocked: declare it as [toolkits.{toolkit}] in skillet.toml (docs/CONFIG.md)"
                ),
            ));
        }
    }
    if let Some(scenario) = compiled.dir.as_deref().and_then(embedded::scenario_in)
        && let Err(e) = mock_llm::Scenario::from_file(&scenario)
    {
        found.push(ManifestError::error(
            &scenario,
            "scenario",
            format!("the embedded mock cannot load it, so every offline run would fail: {e}"),
        ));
    }
    found
}
