//! `resources/subscribe` and `resources/unsubscribe`: the `skill://` URIs one MCP session asked
//! to hear `notifications/resources/updated` about.
//!
//! A subscription names a resource that exists now (`resources/read` would answer it): a URI
//! that is not `skill://NAME/PATH` or a path the confinement refuses is `-32602`, an unknown
//! skill or a path with no file is "resource not found" (`-32002`), each answered once.
//! Unsubscribing from a URI never subscribed is no error (the spec asks nothing else, and a
//! client retrying an unsubscribe must not fail). A session holds at most
//! [`MAX_SUBSCRIPTIONS`]; one more is `-32602`. The set lives as long as the session.
//!
//! Not here: when updates are sent (`list_changed`, on the host's `SkillChanges` feed), what a
//! resource is (`resources`).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::ErrorData;

use super::resources::{folder_of, parse_uri, read_bytes};
use skillet_core::service::SkillService;
use skillet_protocol::SkillDefinition;

/// Most URIs one session may subscribe to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1024;

/// One session's subscribed URIs. Cheap to clone; clones share the set.
#[derive(Clone, Debug, Default)]
pub(crate) struct Subscriptions(Arc<Mutex<BTreeSet<String>>>);

impl Subscriptions {
    /// Subscribes to `uri` once it is shown to name a file a published skill serves. Reads the
    /// file system: call it off the async threads.
    pub(crate) fn subscribe(
        &self,
        service: &dyn SkillService,
        skills: &[SkillDefinition],
        uri: &str,
    ) -> Result<(), ErrorData> {
        let target = parse_uri(uri)?;
        let folder = folder_of(service, skills, &target.name, uri)?;
        // Existence and confinement exactly as `resources/read` judges them.
        read_bytes(folder.as_ref(), &target.path, uri)?;
        let mut uris = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if uris.len() >= MAX_SUBSCRIPTIONS && !uris.contains(uri) {
            return Err(ErrorData::invalid_params(
                format!("at most {MAX_SUBSCRIPTIONS} subscriptions per session"),
                None,
            ));
        }
        uris.insert(uri.to_owned());
        Ok(())
    }

    /// Drops the subscription to `uri`, if any.
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(uri);
    }

    /// The subscribed URIs of the skills `names` (every subscribed URI when `names` is `None`).
    pub(crate) fn of_skills(&self, names: Option<&[String]>) -> Vec<String> {
        let uris = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        uris.iter()
            .filter(|uri| {
                names.is_none_or(|names| {
                    parse_uri(uri).is_ok_and(|target| names.contains(&target.name))
                })
            })
            .cloned()
            .collect()
    }
}
