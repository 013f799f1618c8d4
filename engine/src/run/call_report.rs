//! [`CallReport`]: what an in-process caller learns about a call beyond its wire answer — for now,
//! the provider failure that ended it, as a [`ProviderErrorKind`] rather than as the message
//! text of a `SkillResult`.
//!
//! A transport has no use for it (the A2E answer carries the code and message), so it is not on
//! the wire and not in `SkillService`: a caller in this crate (the `facade`) runs the call future
//! inside [`CallReport::collect`], and the turn loop, which runs in that future's task, records
//! into it. Outside such a scope recording does nothing.

use std::future::Future;
use std::sync::{Arc, Mutex};

use skillet_providers::ProviderErrorKind;

tokio::task_local! {
    static REPORT: Arc<CallReport>;
}

/// What a call reported while it ran (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct CallReport {
    provider_failure: Mutex<Option<ProviderErrorKind>>,
}

impl CallReport {
    /// Runs `call` collecting its report.
    pub(crate) async fn collect<F: Future>(call: F) -> (F::Output, CallReport) {
        let report = Arc::new(CallReport::default());
        let output = REPORT.scope(Arc::clone(&report), call).await;
        let report = Arc::try_unwrap(report).unwrap_or_else(|shared| CallReport {
            provider_failure: Mutex::new(shared.provider_failure()),
        });
        (output, report)
    }

    /// The kind of the provider error that ended the call, if one did.
    pub(crate) fn provider_failure(&self) -> Option<ProviderErrorKind> {
        self.provider_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Records that a provider call failed with `kind` and ended the run.
pub(crate) fn provider_failed(kind: &ProviderErrorKind) {
    let _outside_a_collecting_call = REPORT.try_with(|report| {
        *report
            .provider_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(kind.clone());
    });
}
