//! The NATS wire layout: subject names, header names and which ids may appear in them.
//!
//! With the default prefix `skillet`:
//!
//! | subject | carries |
//! |---|---|
//! | `skillet.call.<skill>` | a `skill/call/req` (JetStream stream; header `Nats-Msg-Id` = the call id, `Skillet-Reply` = where the answer goes) |
//! | `skillet.events.<req_id>` | the call's live `skill/event`s (core NATS, when the call asked for streaming) |
//! | the `Skillet-Reply` subject | the call's one `skill/call/resp` (core NATS) |
//! | `skillet.discover` | `skill/discover/req` → `skill/discover/resp` (request/reply, queue group) |
//!
//! The answer is also stored in the results bucket under the key `<req_id>`.
//! Not here: connecting, publishing or consuming (the worker and client modules).

/// Header carrying the subject the call's `skill/call/resp` is published to.
pub(crate) const REPLY_HEADER: &str = "Skillet-Reply";

/// Queue group the workers answer discover requests in.
pub(crate) const DISCOVER_QUEUE: &str = "skillet-workers";

/// Longest call id usable on NATS.
pub(crate) const MAX_ID_LEN: usize = 128;

/// The subjects under one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subjects {
    prefix: String,
}

impl Subjects {
    /// Subjects under `prefix` (e.g. `skillet`).
    pub(crate) fn new(prefix: impl Into<String>) -> Self {
        Subjects {
            prefix: prefix.into(),
        }
    }

    /// Where calls of `skill` are published.
    pub(crate) fn call(&self, skill: &str) -> String {
        format!("{}.call.{skill}", self.prefix)
    }

    /// Every call subject (the stream's subject filter).
    pub(crate) fn all_calls(&self) -> String {
        format!("{}.call.>", self.prefix)
    }

    /// Where the live events of call `req_id` go.
    pub(crate) fn events(&self, req_id: &str) -> String {
        format!("{}.events.{req_id}", self.prefix)
    }

    /// The discover request/reply subject.
    pub(crate) fn discover(&self) -> String {
        format!("{}.discover", self.prefix)
    }

    /// Whether `subject` is under the prefix: the work queue, a call's events, discover. A
    /// caller-given reply subject must not be one (an answer published on the call subjects
    /// would be a new call; on another call's events subject, a forged event).
    pub(crate) fn is_own(&self, subject: &str) -> bool {
        subject == self.prefix
            || subject
                .strip_prefix(self.prefix.as_str())
                .is_some_and(|rest| rest.starts_with('.'))
    }

    /// The skill a call subject names, if it is one of ours.
    pub(crate) fn skill_of<'a>(&self, subject: &'a str) -> Option<&'a str> {
        subject
            .strip_prefix(self.prefix.as_str())?
            .strip_prefix(".call.")
    }
}

/// Whether `token` can be one subject token and a result key: 1 to [`MAX_ID_LEN`] of ASCII
/// letters, digits, `-`, `_` or `=` (UUIDs qualify).
pub(crate) fn is_valid_token(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= MAX_ID_LEN
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'='))
}

/// Whether a caller-given reply subject may be published to: a concrete subject (no wildcards or
/// whitespace) outside the `$`-namespaces (`$JS.API`, `$KV`, `$SYS`, …), so a caller cannot make
/// a worker send its answer as a JetStream API request.
pub(crate) fn is_safe_reply(subject: &str) -> bool {
    !subject.is_empty()
        && !subject.starts_with('$')
        && subject.len() <= 512
        && subject.split('.').all(|token| {
            !token.is_empty()
                && token != "*"
                && token != ">"
                && !token.chars().any(char::is_whitespace)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_follow_the_prefix_and_skill_names_round_trip() {
        let subjects = Subjects::new("skillet");
        assert_eq!(subjects.call("code-review"), "skillet.call.code-review");
        assert_eq!(subjects.events("c1"), "skillet.events.c1");
        assert_eq!(
            subjects.skill_of("skillet.call.code-review"),
            Some("code-review")
        );
        assert_eq!(subjects.skill_of("other.call.x"), None);
        for own in [
            "skillet.call.echo",
            "skillet.events.c1",
            "skillet.discover",
            "skillet",
        ] {
            assert!(subjects.is_own(own), "{own}");
        }
        for other in ["_INBOX.x", "skilletx.call.echo", "app.skillet.call"] {
            assert!(!subjects.is_own(other), "{other}");
        }
    }

    #[test]
    fn reply_subjects_outside_inboxes_and_app_subjects_are_refused() {
        assert!(is_safe_reply("_INBOX.abc.def"));
        assert!(is_safe_reply("app.replies.7"));
        for bad in [
            "",
            "$JS.API.STREAM.DELETE.SKILLET_CALLS",
            "$KV.x.y",
            "a.*",
            "a.>",
            "a..b",
            "a b",
        ] {
            assert!(!is_safe_reply(bad), "{bad:?}");
        }
    }

    #[test]
    fn ids_with_subject_metacharacters_are_refused() {
        assert!(is_valid_token("0b9c4a3e-5f7e-4d1a-9d8e-6c2b1a0f9e8d"));
        for bad in ["", "a.b", "a*", "a>", "a b", &"x".repeat(MAX_ID_LEN + 1)] {
            assert!(!is_valid_token(bad), "{bad:?}");
        }
    }
}
