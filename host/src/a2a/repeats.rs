//! [`RecentMessages`]: which task a recent message started, by who sent it and its
//! `messageId`, so that a message sent again (a client's retry after a lost answer) is answered
//! with its first task instead of running the skill again.
//!
//! A sender is the caller's identity under `[auth]` (`Caller::owner`; another identity's
//! message with the same id is its own message); without `[auth]` every caller is one sender,
//! as every caller sees every task.
//!
//! Bounds: at most [`MAX_IDS`] ids in all and [`MAX_IDS_PER_SENDER`] per sender, the oldest
//! forgotten first (a sender over its own bound forgets its own oldest, not another's). An id
//! is kept as the SHA-256 of sender and id, so a long id costs no more than a short one.
//!
//! An id is only as good as its task: once the task has left the task store (expired,
//! evicted), the message runs as a new one. An id is remembered when its task is stored, so a
//! second send racing the first (before its task exists) runs too: this serves retries. The
//! memory lives in the process; with `[server] state_db` it is filled at start-up from the
//! restored tasks' first messages ([`RecentMessages::remember_stored`]), so a retry across a
//! restart runs nothing either.
//!
//! Not here: answering with the task (`methods`), the task store (`store`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use ring::digest::{SHA256, digest};

use super::store::TaskStore;

/// The most message ids remembered in all.
pub(crate) const MAX_IDS: usize = 4096;
/// The most message ids remembered per sender.
pub(crate) const MAX_IDS_PER_SENDER: usize = 512;

type Key = [u8; 32];

/// Recent messages' tasks, by sender and message id (see the module docs).
#[derive(Debug)]
pub(crate) struct RecentMessages {
    inner: Mutex<Recent>,
    max_ids: usize,
    max_per_sender: usize,
}

#[derive(Debug, Default)]
struct Recent {
    tasks: HashMap<Key, Remembered>,
    /// Keys, oldest first.
    order: VecDeque<Key>,
    per_sender: HashMap<Arc<str>, usize>,
}

#[derive(Debug)]
struct Remembered {
    sender: Arc<str>,
    task_id: String,
}

impl Default for RecentMessages {
    fn default() -> Self {
        RecentMessages::with_bounds(MAX_IDS, MAX_IDS_PER_SENDER)
    }
}

impl RecentMessages {
    /// A memory of at most `max_ids` ids, `max_per_sender` of them per sender.
    pub(crate) fn with_bounds(max_ids: usize, max_per_sender: usize) -> RecentMessages {
        RecentMessages {
            inner: Mutex::default(),
            max_ids: max_ids.max(1),
            max_per_sender: max_per_sender.max(1),
        }
    }

    /// The task `sender`'s message `message_id` started, if it is remembered.
    pub(crate) fn task_of(&self, sender: &str, message_id: &str) -> Option<String> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner
            .tasks
            .get(&key(sender, message_id))
            .map(|r| r.task_id.clone())
    }

    /// Remembers that `sender`'s message `message_id` started the task `task_id` (replacing
    /// what it started before, a task that is gone), forgetting the oldest ids beyond the bounds.
    pub(crate) fn remember(&self, sender: &str, message_id: &str, task_id: &str) {
        let key = key(sender, message_id);
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.tasks.remove(&key).is_some() {
            inner.order.retain(|k| *k != key);
            inner.uncounted(sender);
        }
        let sender: Arc<str> = Arc::from(sender);
        inner.tasks.insert(
            key,
            Remembered {
                sender: Arc::clone(&sender),
                task_id: task_id.to_owned(),
            },
        );
        inner.order.push_back(key);
        if inner.counted(&sender) > self.max_per_sender {
            let oldest = inner
                .order
                .iter()
                .position(|k| inner.tasks.get(k).is_some_and(|r| r.sender == sender));
            if let Some(at) = oldest {
                inner.forget_at(at);
            }
        }
        while inner.order.len() > self.max_ids {
            inner.forget_at(0);
        }
    }

    /// Remembers the first message of every task in `store` (a durable store just reopened).
    pub(crate) fn remember_stored(&self, store: &TaskStore) {
        for (owner, message_id, task_id) in store.first_messages() {
            self.remember(owner.as_deref().unwrap_or_default(), &message_id, &task_id);
        }
    }

    /// How many ids are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.order.len()
    }
}

impl Recent {
    /// One more id of `sender`; its new count.
    fn counted(&mut self, sender: &Arc<str>) -> usize {
        let count = self.per_sender.entry(Arc::clone(sender)).or_default();
        *count += 1;
        *count
    }

    /// One id of `sender` less (a sender without ids is dropped).
    fn uncounted(&mut self, sender: &str) {
        if let Some(count) = self.per_sender.get_mut(sender) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.per_sender.remove(sender);
            }
        }
    }

    fn forget_at(&mut self, at: usize) {
        let Some(key) = self.order.remove(at) else {
            return;
        };
        if let Some(gone) = self.tasks.remove(&key) {
            self.uncounted(&gone.sender);
        }
    }
}

/// The SHA-256 of `sender`, a NUL and `message_id` (a sender id holds no NUL).
fn key(sender: &str, message_id: &str) -> Key {
    let mut bytes = Vec::with_capacity(sender.len() + 1 + message_id.len());
    bytes.extend_from_slice(sender.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(message_id.as_bytes());
    let mut key = [0u8; 32];
    key.copy_from_slice(digest(&SHA256, &bytes).as_ref());
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_id_is_its_senders_and_another_sender_with_the_same_id_is_apart() {
        let recent = RecentMessages::default();
        recent.remember("alice", "m1", "task-a");
        assert_eq!(recent.task_of("alice", "m1").as_deref(), Some("task-a"));
        assert_eq!(recent.task_of("bob", "m1"), None);
        assert_eq!(recent.task_of("alice", "m2"), None);
        recent.remember("alice", "m1", "task-a2");
        assert_eq!(recent.task_of("alice", "m1").as_deref(), Some("task-a2"));
        assert_eq!(recent.len(), 1);
    }

    #[test]
    fn the_oldest_ids_are_forgotten_beyond_the_bounds_and_one_sender_cannot_push_out_another() {
        let recent = RecentMessages::with_bounds(6, 3);
        recent.remember("bob", "b1", "t-b1");
        for n in 0..10 {
            recent.remember("alice", &format!("a{n}"), &format!("t-a{n}"));
        }
        assert_eq!(recent.task_of("bob", "b1").as_deref(), Some("t-b1"));
        assert_eq!(recent.task_of("alice", "a6"), None);
        for n in 7..10 {
            assert!(recent.task_of("alice", &format!("a{n}")).is_some(), "a{n}");
        }
        assert_eq!(recent.len(), 4);
        for sender in ["c", "d", "e"] {
            recent.remember(sender, "x", "t");
        }
        assert_eq!(recent.len(), 6);
        assert_eq!(
            recent.task_of("bob", "b1"),
            None,
            "the oldest in all goes first"
        );
    }
}
