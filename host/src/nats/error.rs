//! [`NatsError`]: why talking to NATS failed — connecting, setting up the stream, consumer or
//! results bucket, publishing, or waiting for an answer. Messages name the server and object,
//! never a credential.

/// A NATS failure.
#[derive(Debug, thiserror::Error)]
pub enum NatsError {
    /// The configuration cannot be used (a missing token variable, an unreadable creds file).
    #[error("NATS configuration: {0}")]
    Config(String),
    /// The server could not be reached.
    #[error("cannot connect to NATS at {url}: {reason}")]
    Connect {
        /// The server URL that was tried, with any credentials in it redacted.
        url: String,
        /// The client's reason (e.g. a refused connection), or `no connection within 10 s`.
        reason: String,
    },
    /// Creating or binding a JetStream object failed.
    #[error("JetStream {what}: {reason}")]
    JetStream {
        /// Which JetStream object failed: the stream, the consumer or the results bucket, by name.
        what: String,
        /// The server's or the client's reason.
        reason: String,
    },
    /// A publish, subscribe or request failed.
    #[error("NATS {0}")]
    Io(String),
    /// No answer came in time.
    #[error("no answer for call {req_id} within {seconds} s")]
    Timeout {
        /// The id of the call that got no answer.
        req_id: String,
        /// How long the client waited, in seconds.
        seconds: u64,
    },
    /// The request cannot be sent over NATS (e.g. its id is not a valid subject token).
    #[error("{0}")]
    Invalid(String),
    /// An operation that can never succeed however often it is retried (a message over the
    /// server's `max_payload`, a key the store refuses).
    #[error("NATS {0}")]
    Permanent(String),
}

impl NatsError {
    pub(crate) fn jetstream(what: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        NatsError::JetStream {
            what: what.into(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn io(what: &str, reason: impl std::fmt::Display) -> Self {
        NatsError::Io(format!("{what}: {reason}"))
    }

    /// Whether retrying cannot help.
    pub(crate) fn is_permanent(&self) -> bool {
        matches!(self, NatsError::Permanent(_) | NatsError::Invalid(_))
    }
}
