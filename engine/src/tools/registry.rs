//! [`ToolRegistry`]: the tools and toolkits a host registered, and the resolution of a skill's
//! declarations into the [`ToolSet`] offered to the model.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::names::NameMap;
use super::{Tool, Toolkit, ToolkitError, ToolkitStatus};

/// Where a resolved tool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSource {
    /// Declared directly by the skill.
    Direct,
    /// Part of the named toolkit the skill declared.
    Toolkit(String),
}

/// One tool offered to the model for one call.
#[derive(Clone)]
pub struct ResolvedTool {
    /// The provider-safe name the model sees and calls.
    pub offered_name: String,
    /// The tool a call of `offered_name` dispatches to.
    pub tool: Arc<dyn Tool>,
    /// Where it comes from.
    pub source: ToolSource,
}

impl std::fmt::Debug for ResolvedTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedTool")
            .field("offered_name", &self.offered_name)
            .field("tool", &self.tool.name())
            .field("source", &self.source)
            .finish()
    }
}

/// The tools offered to the model for one call: only what the skill declared.
#[derive(Debug, Clone, Default)]
pub struct ToolSet {
    tools: Vec<ResolvedTool>,
    names: NameMap,
}

impl ToolSet {
    /// The offered tools, in declaration order.
    pub fn tools(&self) -> &[ResolvedTool] {
        &self.tools
    }

    /// The tool a model's name stands for; `None` for anything not offered.
    pub fn lookup(&self, offered_name: &str) -> Option<&ResolvedTool> {
        self.names
            .lookup(offered_name)
            .and_then(|i| self.tools.get(i))
    }

    /// Whether no tool is offered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Adds a tool the engine makes for this call (the skill's file tools), offered like a
    /// declared one.
    pub(crate) fn add_engine_tool(&mut self, tool: Arc<dyn Tool>) {
        self.push(tool, ToolSource::Direct);
    }

    fn reserve(&mut self, additional: usize) {
        self.tools.reserve_exact(additional);
        self.names.reserve(additional);
    }

    fn push(&mut self, tool: Arc<dyn Tool>, source: ToolSource) {
        let name = tool.name().to_owned();
        let offered_name = match &source {
            ToolSource::Direct => self.names.assign(&[&name]),
            ToolSource::Toolkit(kit) => self.names.assign(&[&name, &format!("{kit}_{name}")]),
        };
        self.tools.push(ResolvedTool {
            offered_name,
            tool,
            source,
        });
    }
}

/// Error registering a tool or toolkit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegistryError {
    /// A tool with this name is already registered.
    #[error("tool {0:?} is already registered")]
    DuplicateTool(String),
    /// A toolkit with this name is already registered.
    #[error("toolkit {0:?} is already registered")]
    DuplicateToolkit(String),
}

/// The tools and toolkits a host provides. Filled at start-up, then shared read-only.
#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    toolkits: BTreeMap<String, Arc<dyn Toolkit>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("toolkits", &self.toolkits.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// Registers a tool under its own name; a duplicate name is an error.
    pub fn register_tool(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let name = tool.name().to_owned();
        if self.tools.contains_key(&name) {
            return Err(RegistryError::DuplicateTool(name));
        }
        self.tools.insert(name, tool);
        Ok(())
    }

    /// Registers a toolkit under its own name; a duplicate name is an error.
    pub fn register_toolkit(&mut self, toolkit: Arc<dyn Toolkit>) -> Result<(), RegistryError> {
        let name = toolkit.name().to_owned();
        if self.toolkits.contains_key(&name) {
            return Err(RegistryError::DuplicateToolkit(name));
        }
        self.toolkits.insert(name, toolkit);
        Ok(())
    }

    /// The registered tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// The registered toolkit named `name`.
    pub fn toolkit(&self, name: &str) -> Option<&Arc<dyn Toolkit>> {
        self.toolkits.get(name)
    }

    /// All registered tools, by name.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.values()
    }

    /// All registered toolkits, by name.
    pub fn toolkits(&self) -> impl Iterator<Item = &Arc<dyn Toolkit>> {
        self.toolkits.values()
    }

    /// Whether a skill declaring tool `name` can run.
    pub fn has_tool(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Whether a skill declaring toolkit `name` can run: registered and not failed or stopped.
    pub fn toolkit_status(&self, name: &str) -> Option<ToolkitStatus> {
        self.toolkits.get(name).map(|k| k.status())
    }

    /// The tools a skill declaring `tools` and `toolkits` is offered. Names that are not
    /// registered are skipped (the skill registry marks such skills `Blocked` before they run).
    pub fn resolve(&self, tools: &[String], toolkits: &[String]) -> ToolSet {
        // Sized as it goes: a call's set is built for that call, and most skills offer few tools.
        let mut set = ToolSet::default();
        set.reserve(tools.len());
        for name in tools {
            if let Some(tool) = self.tools.get(name) {
                set.push(tool.clone(), ToolSource::Direct);
            }
        }
        for kit in toolkits {
            if let Some(toolkit) = self.toolkits.get(kit) {
                let kit_tools = toolkit.tools();
                set.reserve(kit_tools.len());
                for tool in kit_tools {
                    set.push(tool, ToolSource::Toolkit(kit.clone()));
                }
            }
        }
        set
    }

    /// Starts every toolkit that connects at boot; returns the failures (the toolkits stay
    /// registered, `Failed`). First-use toolkits stay `Idle` (see `Self::ensure_started`).
    pub async fn start_toolkits(&self) -> Vec<ToolkitError> {
        let starts = self
            .toolkits
            .values()
            .filter(|k| !k.connects_on_first_use())
            .map(|k| k.start());
        futures::future::join_all(starts)
            .await
            .into_iter()
            .filter_map(Result::err)
            .collect()
    }

    /// Starts the named toolkits that are still `Idle` (first-use toolkits), concurrently, so
    /// their tools are listed before a skill's first turn. Failures are returned; the skill then
    /// runs without those tools and the toolkit reports `Failed`.
    pub(crate) async fn ensure_started(&self, toolkits: &[String]) -> Vec<ToolkitError> {
        let starts = toolkits
            .iter()
            .filter_map(|name| self.toolkits.get(name))
            .filter(|k| k.status() == ToolkitStatus::Idle)
            .map(|k| k.start());
        futures::future::join_all(starts)
            .await
            .into_iter()
            .filter_map(Result::err)
            .collect()
    }

    /// Shuts every toolkit down.
    pub async fn shutdown_toolkits(&self) {
        futures::future::join_all(self.toolkits.values().map(|k| k.shutdown())).await;
    }
}
