//! `subscriptions/listen` (MCP 2026-07-28): one request's long-lived stream of the change
//! notifications its filter asked for — the revision's replacement for `resources/subscribe`
//! and the HTTP `GET` stream.
//!
//! rmcp acknowledges the stream (`notifications/subscriptions/acknowledged`, the request's id
//! as `io.modelcontextprotocol/subscriptionId`) with the part of the filter [`accepted`] keeps
//! and the capabilities advertise, tags every later notification with the same id and refuses
//! to send a kind the filter left out. Accepted: `toolsListChanged`, `promptsListChanged`,
//! `resourcesListChanged`, and of `resourceSubscriptions` the `skill://NAME/PATH` URIs (at most
//! [`MAX_SUBSCRIPTIONS`] of them; others are left out of the acknowledgment). Whether a URI
//! names a file is not asked: a skill that does not exist, or that the caller may not see,
//! simply never changes for it, so the acknowledgment tells nothing about hidden skills. The
//! stream is registered with the server's [`SessionPeers`] for as long as the request lives
//! (until the client cancels it or goes away); `list_changed` decides what to send. Like a
//! standalone `GET` stream, each holds a request open: beyond `[server] mcp_max_streams` of
//! them (`McpLimits::max_streams`, over HTTP) a new one is acknowledged and at once ended
//! gracefully (its request answered `complete`), so the client may retry later.
//!
//! Not here: when changes happen (`list_changed`), the `initialize` era's subscriptions
//! (`subscriptions`).

use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;
use tokio_util::sync::CancellationToken;

use super::list_changed::SessionPeers;
use super::resources::parse_uri;
use super::subscriptions::MAX_SUBSCRIPTIONS;
use crate::auth::Caller;

/// The part of `requested` this server serves (see the module doc).
pub(crate) fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let uris: Option<Vec<String>> = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|uri| parse_uri(uri).is_ok())
            .take(MAX_SUBSCRIPTIONS)
            .cloned()
            .collect()
    });
    let mut accepted = SubscriptionFilter::new();
    accepted.tools_list_changed = requested.tools_list_changed.filter(|on| *on);
    accepted.prompts_list_changed = requested.prompts_list_changed.filter(|on| *on);
    accepted.resources_list_changed = requested.resources_list_changed.filter(|on| *on);
    accepted.resource_subscriptions = uris.filter(|uris| !uris.is_empty());
    accepted
}

/// Serves one acknowledged stream for `caller` until its request ends.
pub(crate) async fn serve(peers: &SessionPeers, caller: Caller, context: SubscriptionContext) {
    let open = CancellationToken::new();
    let _closed_on_return = open.clone().drop_guard();
    if !peers.add_listener(context.sink().clone(), caller, open) {
        // Returning ends the stream gracefully (rmcp answers the request `complete`).
        tracing::warn!("subscriptions/listen over the open-stream cap: ended at once");
        return;
    }
    context.cancelled().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_skill_uris_and_requested_kinds_are_accepted() {
        let mut requested = SubscriptionFilter::new();
        requested.tools_list_changed = Some(true);
        requested.prompts_list_changed = Some(false);
        requested.resource_subscriptions = Some(vec![
            "skill://summarize/SKILL.md".into(),
            "file:///etc/passwd".into(),
        ]);
        let accepted = accepted(&requested);
        assert_eq!(accepted.tools_list_changed, Some(true));
        assert_eq!(accepted.prompts_list_changed, None);
        assert_eq!(accepted.resources_list_changed, None);
        assert_eq!(
            accepted.resource_subscriptions,
            Some(vec!["skill://summarize/SKILL.md".to_owned()])
        );
    }
}
