//! `notifications/tools/list_changed` and `notifications/prompts/list_changed`: tell every open
//! MCP session when the offered tools, or the prompts, change.
//!
//! Which skills are `Published` can change while the server runs (a toolkit a skill depends on
//! comes up or goes down, so the registry's dependency status flips). The service has no change
//! feed, so `watch_tools` compares the offered tools and prompts every second
//! (`POLL_INTERVAL`) and notifies every initialized session of each list that differs. Closed
//! sessions are dropped as they are found.
//!
//! Not here: what a tool or a prompt looks like (`tools`, `prompts`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::service::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use super::{prompts, tools};
use crate::core::HostCore;

/// How often the offered tools are compared.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The initialized MCP sessions of one server.
#[derive(Clone, Debug, Default)]
pub(crate) struct SessionPeers(Arc<Mutex<Vec<Peer<RoleServer>>>>);

impl SessionPeers {
    /// Adds a session (on `notifications/initialized`).
    pub fn add(&self, peer: Peer<RoleServer>) {
        let mut peers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|p| !p.is_transport_closed());
        peers.push(peer);
    }

    fn open(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|p| !p.is_transport_closed());
        peers.clone()
    }
}

/// The offered tools and prompts, each as one comparable string.
#[derive(Debug, PartialEq, Eq)]
struct Fingerprints {
    tools: String,
    prompts: String,
}

fn fingerprints(core: &HostCore) -> Fingerprints {
    let skills = tools::published_skills(core.service().as_ref());
    Fingerprints {
        tools: serde_json::to_string(&tools::tools(&skills)).unwrap_or_default(),
        prompts: serde_json::to_string(&prompts::prompts(&skills)).unwrap_or_default(),
    }
}

/// Notifies `peers` whenever the offered tools or prompts change, until `stop`.
pub(crate) async fn watch_tools(core: HostCore, peers: SessionPeers, stop: CancellationToken) {
    let mut last = fingerprints(&core);
    loop {
        tokio::select! {
            () = tokio::time::sleep(POLL_INTERVAL) => {}
            () = stop.cancelled() => return,
        }
        let now = fingerprints(&core);
        if now == last {
            continue;
        }
        let (tools, prompts) = (now.tools != last.tools, now.prompts != last.prompts);
        last = now;
        tracing::info!(
            tools,
            prompts,
            "offered lists changed; notifying MCP sessions"
        );
        for peer in peers.open() {
            if tools {
                let _ = peer.notify_tool_list_changed().await;
            }
            if prompts {
                let _ = peer.notify_prompt_list_changed().await;
            }
        }
    }
}
