//! [`FileOps`]: how a file tool runs its filesystem work on tokio's blocking pool without
//! letting that work wedge the host.
//!
//! A thread on the blocking pool cannot be cancelled: a tool that times out, or a call that
//! ends, drops the future awaiting it, and the thread goes on until the system call returns.
//! `confine` opens every file with `O_NONBLOCK` and checks its type on the descriptor, so no
//! file tool waits on a named pipe; this module is the bound for whatever else could still
//! block (a hung network filesystem, a kernel bug):
//!
//! - all file tools of the process together hold at most [`MAX_IN_FLIGHT`] blocking threads
//!   (a thread keeps its permit until its system call returns, so a wedge takes at most that
//!   many of the pool's 512 threads, and model calls, scripts and other hosts' work still run);
//! - an operation that does not finish within [`OP_TIMEOUT`] is answered as a tool error, and
//!   the thread is left counted;
//! - each call counts its own operations still running: the call's end logs a warning when
//!   some outlived it, and an operation that finishes after nobody waits for it logs one too.
//!
//! Not here: the file checks themselves (`confine`), the tools (`workspace_tools`,
//! `skill_files`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::error::FileError;

/// Most blocking file operations running at once in the process, over every call.
pub(crate) const MAX_IN_FLIGHT: usize = 64;

/// Longest a file operation may take before its tool answers an error.
pub(crate) const OP_TIMEOUT: Duration = Duration::from_secs(30);

static PERMITS: Semaphore = Semaphore::const_new(MAX_IN_FLIGHT);

/// The file operations of one call (cheap to clone; clones share the count).
#[derive(Debug, Clone, Default)]
pub(crate) struct FileOps {
    running: Arc<AtomicUsize>,
}

/// Decrements the call's count when the blocking work returns (also on a panic).
struct Running {
    count: Arc<AtomicUsize>,
    abandoned: Arc<AtomicBool>,
    what: &'static str,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
        if self.abandoned.load(Ordering::Acquire) {
            tracing::warn!(
                operation = self.what,
                "a file operation finished after its tool had stopped waiting for it"
            );
        }
    }
}

/// Marks the operation abandoned when its awaiting future is dropped before the result.
struct Waiting {
    abandoned: Arc<AtomicBool>,
    done: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if !self.done {
            self.abandoned.store(true, Ordering::Release);
        }
    }
}

impl FileOps {
    /// Runs `work` on the blocking pool within the process-wide bound and [`OP_TIMEOUT`];
    /// `what` names the operation in errors and logs ("read", "write", "listing").
    pub(crate) async fn run<T, F>(&self, what: &'static str, work: F) -> Result<T, FileError>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T, FileError> + Send + 'static,
    {
        self.run_within(what, OP_TIMEOUT, work).await
    }

    async fn run_within<T, F>(
        &self,
        what: &'static str,
        limit: Duration,
        work: F,
    ) -> Result<T, FileError>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T, FileError> + Send + 'static,
    {
        let busy = || FileError::Busy {
            what,
            max: MAX_IN_FLIGHT,
        };
        let permit = tokio::time::timeout(limit, PERMITS.acquire())
            .await
            .map_err(|_| busy())?
            .map_err(|_| busy())?;
        let abandoned = Arc::new(AtomicBool::new(false));
        self.running.fetch_add(1, Ordering::AcqRel);
        let running = Running {
            count: Arc::clone(&self.running),
            abandoned: Arc::clone(&abandoned),
            what,
        };
        // The permit travels with the thread: it is free again only when the work returns.
        let handle = tokio::task::spawn_blocking(move || {
            let _held = (permit, running);
            work()
        });
        let mut waiting = Waiting {
            abandoned,
            done: false,
        };
        let outcome = tokio::time::timeout(limit, handle).await;
        waiting.done = true;
        match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(FileError::Interrupted(what)),
            Err(_) => {
                waiting.abandoned.store(true, Ordering::Release);
                tracing::warn!(
                    operation = what,
                    "a file operation did not finish within {} s; its thread is left running",
                    limit.as_secs()
                );
                Err(FileError::Abandoned { what, after: limit })
            }
        }
    }

    /// How many of this call's operations are still running on the blocking pool.
    pub(crate) fn running(&self) -> usize {
        self.running.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_operation_over_its_time_is_answered_and_stays_counted_until_it_returns() {
        let ops = FileOps::default();
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let answer = ops
            .run_within("write", Duration::from_millis(50), move || {
                let _ = wait.recv();
                Ok(())
            })
            .await;
        assert!(matches!(
            answer,
            Err(FileError::Abandoned { what: "write", .. })
        ));
        assert_eq!(ops.running(), 1, "the stuck thread is still counted");
        release.send(()).unwrap();
        for _ in 0..1000 {
            if ops.running() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(ops.running(), 0);
    }

    #[tokio::test]
    async fn results_and_errors_come_back_and_the_count_returns_to_zero() {
        let ops = FileOps::default();
        assert_eq!(ops.run("read", || Ok(7)).await.unwrap(), 7);
        assert!(matches!(
            ops.run::<(), _>("read", || Err(FileError::EmptyPath)).await,
            Err(FileError::EmptyPath)
        ));
        assert_eq!(ops.running(), 0);
    }
}
