//! Opening a NATS connection from `[nats]`: the URL, a `.creds` file or a token read from the
//! named environment variable (held as a `SecretString`, exposed only to the client library),
//! and reconnecting forever with the client's backoff, so a restarted server is picked up again.
//!
//! Credentials written into the URL (`nats://user:pass@host`) are redacted from every message.
//!
//! Not here: what is done over the connection (worker, client, store).

use async_nats::{Client, ConnectOptions};
use secrecy::{ExposeSecret, SecretString};

use super::error::NatsError;
use crate::nats::NatsOptions;

/// Connects to `config.url` as `name` (shown in the server's connection list).
pub async fn connect(config: &NatsOptions, name: &str) -> Result<Client, NatsError> {
    let mut options = ConnectOptions::new()
        .name(name)
        .retry_on_initial_connect()
        .max_reconnects(None);
    if let Some(path) = &config.credentials_file {
        options = ConnectOptions::with_credentials_file(path.clone())
            .await
            .map_err(|e| NatsError::Config(format!("credentials file {}: {e}", path.display())))?
            .name(name)
            .retry_on_initial_connect()
            .max_reconnects(None);
    } else if let Some(var) = &config.token_env {
        let token = std::env::var(var)
            .map(SecretString::from)
            .map_err(|_| NatsError::Config(format!("nats.token_env: ${var} is not set")))?;
        options = options.token(token.expose_secret().to_owned());
    }
    // `retry_on_initial_connect` returns at once; wait (bounded) for the first connection so a
    // wrong URL is reported instead of hanging.
    let client = options
        .connect(config.url.as_str())
        .await
        .map_err(|e| NatsError::Connect {
            url: redacted_url(&config.url),
            reason: e.to_string(),
        })?;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while client.connection_state() != async_nats::connection::State::Connected {
        if tokio::time::Instant::now() >= deadline {
            return Err(NatsError::Connect {
                url: redacted_url(&config.url),
                reason: "no connection within 10 s".into(),
            });
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok(client)
}

/// `url` without any `user:password@` or `token@` part, for messages.
pub fn redacted_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let rest = match rest.rsplit_once('@') {
        Some((_, host)) => format!("[REDACTED]@{host}"),
        None => rest.to_owned(),
    };
    if scheme.is_empty() {
        rest
    } else {
        format!("{scheme}://{rest}")
    }
}

#[cfg(test)]
mod tests {
    use super::redacted_url;

    #[test]
    fn credentials_in_urls_are_redacted() {
        assert_eq!(
            redacted_url("nats://127.0.0.1:4222"),
            "nats://127.0.0.1:4222"
        );
        assert_eq!(
            redacted_url("nats://alice:s3cret@nats.internal:4222"),
            "nats://[REDACTED]@nats.internal:4222"
        );
        assert_eq!(redacted_url("tok@host:1"), "[REDACTED]@host:1");
    }
}
