//! [`CallScope`]: the calls in flight on one connection or session — the in-flight id rule
//! (an id runs once per scope), admission through the [`HostCore`], and cancelling one call or
//! all of them when the connection goes.
//!
//! Not here: the limits and access rules admission applies (the parent, `core`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use super::{Admitted, HostCore, Refusal};
use crate::auth::Caller;
use crate::record::Door;
use skillet_protocol::SkillCallRequest;

/// The ids in flight on one connection or session, with their cancellation tokens.
#[derive(Clone, Debug)]
pub struct CallScope {
    pub(super) core: HostCore,
    pub(super) ids: Arc<Mutex<HashMap<String, CancellationToken>>>,
    /// The door its calls come through, for a recorder (`None`: not said).
    pub(super) door: Option<Door>,
}

impl CallScope {
    /// The core this scope admits into.
    pub fn core(&self) -> &HostCore {
        &self.core
    }

    /// This scope, its calls recorded as come through `door` (a recorder's history shows it).
    pub fn through(mut self, door: Door) -> CallScope {
        self.door = Some(door);
        self
    }

    /// Admits `call` from `caller`: refused when the access rules do not let the caller run it
    /// ([`Refusal::Unauthorized`]), its own limits are reached ([`Refusal::Limited`]), its id
    /// is in flight in this scope or all slots are taken. The id is released when the call
    /// answers (or the `Admitted` is dropped); the answer is audited.
    pub fn admit_as(&self, caller: &Caller, call: &SkillCallRequest) -> Result<Admitted, Refusal> {
        let checked =
            self.core
                .check_caller(caller, &call.name, &call.id, call.llm_override.is_some())?;
        let mut admitted = self.admit(&call.id)?;
        admitted.caller = checked;
        admitted.caller_id = Some(caller.id().to_owned());
        Ok(admitted)
    }

    /// Admits the call `id` for a trusted caller (no access check: stdio, NATS): refused when
    /// its id is in flight in this scope or all slots are taken.
    pub fn admit(&self, id: &str) -> Result<Admitted, Refusal> {
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        if ids.contains_key(id) {
            return Err(Refusal::DuplicateId(id.to_owned()));
        }
        let permit = self.core.take_slot()?;
        let cancel = self.core.inner.shutdown.child_token();
        ids.insert(id.to_owned(), cancel.clone());
        Ok(Admitted {
            permit,
            cancel,
            registration: Some(IdRegistration {
                ids: Arc::clone(&self.ids),
                id: id.to_owned(),
            }),
            caller: None,
            caller_id: None,
            door: self.door,
        })
    }

    /// Cancels the call `id` in flight in this scope; false when there is none.
    pub fn cancel(&self, id: &str) -> bool {
        let ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        match ids.get(id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every call of this scope (its connection or session ended).
    pub fn cancel_all(&self) {
        let ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        for token in ids.values() {
            token.cancel();
        }
    }

    /// Calls of this scope in flight now.
    pub fn in_flight(&self) -> usize {
        self.ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Holds a call's id in its scope until dropped.
#[derive(Debug)]
pub(super) struct IdRegistration {
    ids: Arc<Mutex<HashMap<String, CancellationToken>>>,
    id: String,
}

impl Drop for IdRegistration {
    fn drop(&mut self) {
        self.ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}
