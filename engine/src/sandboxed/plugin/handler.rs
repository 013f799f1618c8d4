//! [`PluginSkillHandler`]: the native-skill face of one skill of a plugin, so the registry and
//! the run loop treat it like any programmatic skill (input/output validation, deadline, events,
//! result assembly stay theirs).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::PluginHost;
use crate::handler::{HandlerContext, HandlerError, SkillHandler};

/// Proxies calls of one skill to its plugin; see [`PluginHost::call`].
#[derive(Debug)]
pub struct PluginSkillHandler {
    host: Arc<PluginHost>,
    skill: String,
}

impl PluginSkillHandler {
    pub(super) fn new(host: Arc<PluginHost>, skill: String) -> Self {
        PluginSkillHandler { host, skill }
    }

    /// The skill's name in the plugin.
    pub fn skill(&self) -> &str {
        &self.skill
    }
}

#[async_trait]
impl SkillHandler for PluginSkillHandler {
    async fn run(&self, arguments: Value, ctx: HandlerContext) -> Result<Value, HandlerError> {
        self.host.call(&self.skill, arguments, ctx).await
    }
}
