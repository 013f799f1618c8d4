//! [`SkillChanges`]: the host's feed of which skills changed while it serves (hot reload,
//! `serve --watch`), so every door can tell its clients without polling.
//!
//! Whoever changes the registry (the CLI's watcher, after `Registry::reload_root`) announces
//! the names it touched; each door that has something to tell subscribes: MCP sends
//! `notifications/{tools,prompts,resources}/list_changed` and `resources/updated` for the
//! subscribed URIs of those skills. Doors that read the registry per request (A2E discover,
//! the A2A Agent Card) need no feed: they are current by construction. A subscriber that falls
//! behind [`CAPACITY`] announcements is told it lagged and treats it as "everything changed".
//!
//! Not here: watching files (the CLI), what a door sends (the doors). The host core holds
//! one feed (`HostCore::skill_changes`) and imports no door.

use std::sync::Arc;

use tokio::sync::broadcast;

/// Announcements a slow subscriber may fall behind before it lags.
pub(crate) const CAPACITY: usize = 64;

/// One announcement: the names of the skills that were added, edited, removed or broken.
pub(crate) type ChangedSkills = Arc<[String]>;

/// The feed. Cheap to clone; clones share subscribers.
#[derive(Clone, Debug)]
pub struct SkillChanges {
    sender: broadcast::Sender<ChangedSkills>,
}

impl Default for SkillChanges {
    fn default() -> Self {
        SkillChanges {
            sender: broadcast::channel(CAPACITY).0,
        }
    }
}

impl SkillChanges {
    /// Tells every subscriber that the skills `names` changed (nothing when `names` is empty).
    pub fn announce(&self, names: Vec<String>) {
        if !names.is_empty() {
            // No subscriber is no error: nobody needed telling.
            let _ = self.sender.send(names.into());
        }
    }

    /// A new subscriber, hearing every announcement from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ChangedSkills> {
        self.sender.subscribe()
    }
}
