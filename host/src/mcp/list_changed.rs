//! `notifications/tools/list_changed`, `prompts/list_changed`, `resources/list_changed` and
//! `resources/updated`: tell every open MCP session when the offered tools, prompts or skill
//! files change.
//!
//! Two sources of change. Which skills are `Published` can flip while the server runs (a
//! toolkit a skill depends on comes up or goes down), which nothing announces, so
//! `watch_tools` compares the offered tools and prompts every second (`POLL_INTERVAL`). And a
//! hot reload (`serve --watch`) announces the skills it touched on the host's
//! [`SkillChanges`](crate::skill_changes::SkillChanges) feed: then the lists are compared at
//! once, every session hears `resources/list_changed` (a skill's files may have come or gone
//! without its tool changing), and each session hears `resources/updated` for every URI it
//! subscribed to (`subscriptions`) of a touched skill. A feed that lagged counts as every
//! skill touched. Closed sessions are dropped as they are found. A 2026-07-28 client hears the
//! same changes on its `subscriptions/listen` streams (`listen`), each only the kinds and URIs
//! its filter accepted, and `resources/updated` only for skills its caller may see.
//!
//! Not here: what a tool or a prompt looks like (`tools`, `prompts`), what a subscription
//! accepts (`subscriptions`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer, SubscriptionSink};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::limits::DEFAULT_MAX_STREAMS;
use super::resources::parse_uri;
use super::subscriptions::Subscriptions;
use super::{prompts, tools};
use crate::auth::Caller;
use crate::core::HostCore;

/// How often the offered tools are compared.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// One initialized session: where to send, and what it subscribed to.
#[derive(Clone, Debug)]
struct Session {
    peer: Peer<RoleServer>,
    subscriptions: Subscriptions,
}

/// One open `subscriptions/listen` stream (2026-07-28): its filtering, tagging sink, whose it
/// is, and whether it is still open.
#[derive(Clone, Debug)]
struct Listener {
    sink: SubscriptionSink,
    caller: Caller,
    open: CancellationToken,
}

/// The initialized MCP sessions of one server, and its open `subscriptions/listen` streams
/// (at most a cap of them: each holds a request open, as a standalone `GET` stream does).
#[derive(Clone, Debug)]
pub(crate) struct SessionPeers(Arc<Mutex<Receivers>>);

impl Default for SessionPeers {
    fn default() -> Self {
        SessionPeers::new(DEFAULT_MAX_STREAMS)
    }
}

#[derive(Debug)]
struct Receivers {
    sessions: Vec<Session>,
    listeners: Vec<Listener>,
    max_listeners: usize,
}

impl Receivers {
    fn prune(&mut self) {
        self.sessions.retain(|s| !s.peer.is_transport_closed());
        self.listeners.retain(|l| !l.open.is_cancelled());
    }
}

impl SessionPeers {
    /// No session yet; at most `max_listeners` `subscriptions/listen` streams at once.
    pub(crate) fn new(max_listeners: usize) -> Self {
        SessionPeers(Arc::new(Mutex::new(Receivers {
            sessions: Vec::new(),
            listeners: Vec::new(),
            max_listeners,
        })))
    }

    /// Adds a session (on `notifications/initialized`) with its subscriptions.
    pub(crate) fn add(&self, peer: Peer<RoleServer>, subscriptions: Subscriptions) {
        let mut receivers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        receivers.prune();
        receivers.sessions.push(Session {
            peer,
            subscriptions,
        });
    }

    /// Adds a `subscriptions/listen` stream of `caller`, kept until `open` is cancelled;
    /// `false` (nothing added) when the cap's worth are open already.
    pub(crate) fn add_listener(
        &self,
        sink: SubscriptionSink,
        caller: Caller,
        open: CancellationToken,
    ) -> bool {
        let mut receivers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        receivers.prune();
        if receivers.listeners.len() >= receivers.max_listeners {
            return false;
        }
        receivers.listeners.push(Listener { sink, caller, open });
        true
    }

    fn open(&self) -> (Vec<Session>, Vec<Listener>) {
        let mut receivers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        receivers.prune();
        (receivers.sessions.clone(), receivers.listeners.clone())
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

/// What woke the watcher.
enum Wake {
    /// The poll interval passed.
    Poll,
    /// A reload touched these skills (`None`: the feed lagged, so any).
    Reloaded(Option<Arc<[String]>>),
}

/// Notifies `peers` whenever the offered tools, prompts or skill files change, until `stop`.
pub(crate) async fn watch_tools(core: HostCore, peers: SessionPeers, stop: CancellationToken) {
    let mut last = fingerprints(&core);
    let mut reloads = core.skill_changes().subscribe();
    loop {
        let wake = tokio::select! {
            () = tokio::time::sleep(POLL_INTERVAL) => Wake::Poll,
            changed = reloads.recv() => match changed {
                Ok(names) => Wake::Reloaded(Some(names)),
                Err(RecvError::Lagged(_)) => Wake::Reloaded(None),
                // The core (and its feed) outlives every server; polling goes on regardless.
                Err(RecvError::Closed) => Wake::Poll,
            },
            () = stop.cancelled() => return,
        };
        let now = fingerprints(&core);
        let (tools, prompts) = (now.tools != last.tools, now.prompts != last.prompts);
        last = now;
        let reloaded = match &wake {
            Wake::Reloaded(names) => Some(names.as_deref()),
            Wake::Poll => None,
        };
        if !tools && !prompts && reloaded.is_none() {
            continue;
        }
        tracing::info!(
            tools,
            prompts,
            reloaded = reloaded.is_some(),
            "offered lists changed; notifying MCP sessions"
        );
        let (sessions, listeners) = peers.open();
        for session in sessions {
            let peer = &session.peer;
            if tools {
                let _ = peer.notify_tool_list_changed().await;
            }
            if prompts {
                let _ = peer.notify_prompt_list_changed().await;
            }
            if let Some(names) = reloaded {
                let _ = peer.notify_resource_list_changed().await;
                for uri in session.subscriptions.of_skills(names) {
                    let _ = peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                        .await;
                }
            }
        }
        for listener in listeners {
            notify_listener(&core, &listener, tools, prompts, reloaded).await;
        }
    }
}

/// Sends one `subscriptions/listen` stream the changes its filter accepted (the sink refuses
/// the rest, which is no error here): `resources/updated` only for a subscribed file of a
/// touched skill its caller may see.
async fn notify_listener(
    core: &HostCore,
    listener: &Listener,
    tools: bool,
    prompts: bool,
    reloaded: Option<Option<&[String]>>,
) {
    let sink = &listener.sink;
    let accepted = sink.accepted();
    if tools && accepted.tools_list_changed == Some(true) {
        let _ = sink.notify_tool_list_changed().await;
    }
    if prompts && accepted.prompts_list_changed == Some(true) {
        let _ = sink.notify_prompt_list_changed().await;
    }
    let Some(names) = reloaded else { return };
    if accepted.resources_list_changed == Some(true) {
        let _ = sink.notify_resource_list_changed().await;
    }
    let Some(uris) = accepted.resource_subscriptions.clone() else {
        return;
    };
    let visible: Vec<String> = tools::published_skills(core.service().as_ref())
        .into_iter()
        .filter(|skill| names.is_none_or(|names| names.contains(&skill.name)))
        .filter(|skill| core.may_see(&listener.caller, skill))
        .map(|skill| skill.name)
        .collect();
    for uri in uris {
        if parse_uri(&uri).is_ok_and(|target| visible.contains(&target.name)) {
            let _ = sink.notify_resource_updated(uri).await;
        }
    }
}
