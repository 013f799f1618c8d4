//! Terminal hooks (seed 003 `TerminalHook`): host observers told about every call's outcome
//! exactly once — successes, execution failures and rejections before execution alike.
//!
//! Hooks are best-effort: they cannot change the outcome. Each runs isolated from panics and
//! bounded by [`Limits::hook_timeout`](super::Limits::hook_timeout); a hook that panics or
//! overruns is logged (`tracing`, warn) and abandoned. Hooks of one call run concurrently and the
//! response is returned after all of them finished or were abandoned.
//!
//! Not here: gates, which may veto a successful output before it is final (`gates`).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::FutureExt;

use crate::protocol::{ProtocolError, SkillResult};

/// What happened to a call.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum CallOutcome<'a> {
    /// The skill ran; the result says whether it succeeded.
    Completed(&'a SkillResult),
    /// The call was rejected before execution (unknown skill, unauthorized, invalid input...).
    Rejected(&'a ProtocolError),
}

/// What a hook sees.
#[derive(Debug, Clone, Copy)]
pub struct TerminalEvent<'a> {
    /// The requested skill name.
    pub skill: &'a str,
    /// The request's `id`.
    pub req_id: &'a str,
    /// The request's `correlation_id`.
    pub correlation_id: &'a str,
    /// The outcome.
    pub outcome: CallOutcome<'a>,
}

/// An observer of call outcomes.
#[async_trait]
pub trait TerminalHook: Send + Sync {
    /// The hook's name, for logs.
    fn name(&self) -> &str;

    /// Called exactly once per call, after its outcome is final.
    async fn on_terminal(&self, event: TerminalEvent<'_>);
}

/// Runs every hook once for `event`, each isolated and time-bounded.
pub(crate) async fn run_hooks(
    hooks: &[Arc<dyn TerminalHook>],
    event: TerminalEvent<'_>,
    limit: Duration,
) {
    if hooks.is_empty() {
        return;
    }
    let runs: Vec<_> = hooks
        .iter()
        .map(|hook| async move {
            let guarded = AssertUnwindSafe(hook.on_terminal(event)).catch_unwind();
            match tokio::time::timeout(limit, guarded).await {
                Ok(Ok(())) => {}
                Ok(Err(_panic)) => {
                    tracing::warn!(hook = hook.name(), "terminal hook panicked; ignored");
                }
                Err(_elapsed) => {
                    tracing::warn!(
                        hook = hook.name(),
                        limit_ms = limit.as_millis() as u64,
                        "terminal hook overran its time limit; abandoned"
                    );
                }
            }
        })
        .collect();
    futures::future::join_all(runs).await;
}
