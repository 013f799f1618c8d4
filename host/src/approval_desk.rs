//! [`ApprovalDesk`]: where a call whose own door cannot ask a person (A2E over HTTP answers
//! one request with one stream) gets an [`Approver`] from another part of the host — the web
//! console, which parks the question until its page decides over another request
//! (`crate::console::approvals`). The core holds at most one desk
//! ([`crate::core::HostCore::set_approval_desk`]) and knows nothing of the console.
//!
//! A door asks the desk only when the request said it wants to be asked that way (the A2E HTTP
//! door: the `X-Skillet-Console` header, [`ASK_HEADER`]); every other call follows the host's
//! `[approvals] default` as before.
//!
//! Not here: the pending questions and who may answer them (the desk's implementation), the
//! approval gate itself (the engine's `run::approval`).

use std::sync::Arc;

use skillet_core::approval::Approver;
use skillet_protocol::SkillCallRequest;

use crate::auth::Caller;

/// The request header with which an A2E HTTP caller asks for its tool-call approvals to wait
/// at the desk (the console's page sends it on the runs it starts).
pub(crate) const ASK_HEADER: &str = "x-skillet-console";

/// Gives a call an approver that asks a person somewhere else in the host.
pub trait ApprovalDesk: Send + Sync {
    /// The approver for `request` from `caller`, or `None` when this desk cannot ask for that
    /// caller (the call then follows the host's policy). Called once per call, before it runs.
    fn approver_for(
        &self,
        caller: &Caller,
        request: &SkillCallRequest,
    ) -> Option<Arc<dyn Approver>>;
}
