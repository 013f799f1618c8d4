//! The bytes of skill files `resources/read` answers at once: at most
//! [`PROCESS_READ_BYTES`] for the whole process and [`SESSION_READ_BYTES`] for one session,
//! counted in KiB on two tokio semaphores (a read takes as many permits as its file has KiB).
//!
//! A read over the budget waits up to [`READ_WAIT`] for room, then is refused with
//! [`BUSY`] ("retry later"); a file can always be read once others finish, since one file
//! ([`super::resources::MAX_RESOURCE_BYTES`]) fits in a session's budget.
//!
//! A permit lives as long as the answer's bytes do. Over stdio that is the handler's own
//! work. Over streamable HTTP the answer outlives the handler: rmcp serializes it onto the
//! request's SSE stream and keeps the stream's messages for a late resume. So the session
//! manager (`limits`) puts a [`PermitSlot`] on each request it streams; the handler leaves its
//! permit there, and the manager drops the slot only once the stream has ended and rmcp's copy
//! of its messages is gone (a read is re-asked, never resumed).
//!
//! Not here: which files may be read (`resources`), the session caps (`limits`).

use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ErrorCode, ErrorData};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bytes of skill files answered at once by the whole process.
pub(crate) const PROCESS_READ_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes of skill files answered at once to one session (at least one file of the largest
/// size served).
pub(crate) const SESSION_READ_BYTES: u64 = 32 * 1024 * 1024;
/// How long a read waits for room before it is refused.
pub(crate) const READ_WAIT: Duration = Duration::from_secs(10);
/// The JSON-RPC code of a read refused for the budget (a server error, to retry).
pub(crate) const BUSY: ErrorCode = ErrorCode(-32000);

const KIB: u64 = 1024;

/// The process's budget, in KiB.
static PROCESS: LazyLock<Arc<Semaphore>> =
    LazyLock::new(|| Arc::new(Semaphore::new(kib(PROCESS_READ_BYTES) as usize)));

/// `bytes` in whole KiB, at least one.
fn kib(bytes: u64) -> u32 {
    u32::try_from(bytes.div_ceil(KIB).max(1)).unwrap_or(u32::MAX)
}

/// One session's read budget (clones share it), within the process's.
#[derive(Debug, Clone)]
pub(crate) struct ReadBudget {
    session: Arc<Semaphore>,
}

impl Default for ReadBudget {
    fn default() -> Self {
        ReadBudget {
            session: Arc::new(Semaphore::new(kib(SESSION_READ_BYTES) as usize)),
        }
    }
}

/// Room for one answer's bytes, in both budgets, given back when dropped.
#[derive(Debug)]
pub(crate) struct ReadPermit {
    _session: OwnedSemaphorePermit,
    _process: OwnedSemaphorePermit,
}

impl ReadBudget {
    /// Room for `bytes`, waiting up to [`READ_WAIT`]; [`BUSY`] when none came.
    pub(crate) async fn reserve(&self, bytes: u64) -> Result<ReadPermit, ErrorData> {
        let wanted = kib(bytes.min(SESSION_READ_BYTES));
        // Session first, then process, always in this order: two reads never hold one each.
        let both = async {
            let session = Arc::clone(&self.session).acquire_many_owned(wanted).await;
            let process = Arc::clone(&PROCESS).acquire_many_owned(wanted).await;
            session.ok().zip(process.ok())
        };
        match tokio::time::timeout(READ_WAIT, both).await {
            Ok(Some((session, process))) => Ok(ReadPermit {
                _session: session,
                _process: process,
            }),
            _ => Err(busy()),
        }
    }

    /// Room for `bytes` more, only if there is some now (a file that grew since it was sized).
    pub(crate) fn try_reserve(&self, bytes: u64) -> Result<ReadPermit, ErrorData> {
        let wanted = kib(bytes.min(SESSION_READ_BYTES));
        let session = Arc::clone(&self.session)
            .try_acquire_many_owned(wanted)
            .map_err(|_| busy())?;
        let process = Arc::clone(&PROCESS)
            .try_acquire_many_owned(wanted)
            .map_err(|_| busy())?;
        Ok(ReadPermit {
            _session: session,
            _process: process,
        })
    }
}

fn busy() -> ErrorData {
    ErrorData::new(
        BUSY,
        format!(
            "the server is answering as many bytes of skill files as it may at once ({} MiB \
             in all, {} MiB per session) and none came free within {} s; retry later",
            PROCESS_READ_BYTES / (KIB * KIB),
            SESSION_READ_BYTES / (KIB * KIB),
            READ_WAIT.as_secs()
        ),
        None,
    )
}

/// Where a streamed request's handler leaves its [`ReadPermit`]s, so they live until the
/// answer's bytes are gone (see the module doc). Clones share the slot.
#[derive(Debug, Clone, Default)]
pub(crate) struct PermitSlot(Arc<Mutex<Vec<ReadPermit>>>);

impl PermitSlot {
    /// The slot the session manager put on the HTTP request of `extensions` (none over stdio).
    pub(crate) fn of(extensions: &rmcp::model::Extensions) -> Option<PermitSlot> {
        extensions
            .get::<http::request::Parts>()?
            .extensions
            .get::<PermitSlot>()
            .cloned()
    }

    /// Keeps `permit` until the slot is dropped.
    pub(crate) fn keep(&self, permit: ReadPermit) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(permit);
    }

    /// Whether a handler left a permit here.
    pub(crate) fn holds_permits(&self) -> bool {
        !self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_session_waits_for_its_own_room_and_is_refused_when_none_comes() {
        let budget = ReadBudget::default();
        let first = budget.reserve(16 * 1024 * 1024).await.unwrap();
        let _second = budget.reserve(16 * 1024 * 1024).await.unwrap();
        assert!(
            budget.try_reserve(1).is_err(),
            "the session's budget is spent"
        );
        // Another session still has room, within the process's.
        let other = ReadBudget::default();
        let _small = other.try_reserve(4096).unwrap();
        drop(first);
        assert!(budget.try_reserve(1024 * 1024).is_ok(), "room again");
        let refused = busy();
        assert_eq!(refused.code, BUSY);
        assert!(refused.message.contains("retry later"));
    }

    #[test]
    fn sizes_are_counted_in_whole_kib() {
        assert_eq!(kib(0), 1);
        assert_eq!(kib(1), 1);
        assert_eq!(kib(1024), 1);
        assert_eq!(kib(1025), 2);
        assert!(
            u64::from(kib(super::super::resources::MAX_RESOURCE_BYTES))
                <= u64::from(kib(SESSION_READ_BYTES))
        );
    }
}
