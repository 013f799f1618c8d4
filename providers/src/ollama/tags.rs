//! [`ollama_models`]: the models an Ollama server has (`GET /api/tags`), for the messages a host
//! prints when it was asked for Ollama but given no model, and the error that says nothing
//! answers at the URL it tried.
//!
//! Not here: chatting with Ollama (`mod.rs` and its siblings), reading `OLLAMA_HOST` (`from_env.rs`).

use std::time::Duration;

use serde::Deserialize;

/// How long a listing may take: it only decorates an error message, so it never waits long.
const LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the models could not be listed. Each message names the URL tried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OllamaModelsError {
    /// No connection: nothing listens there (or it is not reachable).
    #[error("nothing answers at {url} (is `ollama serve` running? OLLAMA_HOST says where to look)")]
    Unreachable {
        /// The URL tried.
        url: String,
    },
    /// Something answered, but not with Ollama's model list.
    #[error("{url} answered {detail}, not an Ollama model list (is it an Ollama server?)")]
    NotOllama {
        /// The URL tried.
        url: String,
        /// The HTTP status or what was wrong with the body.
        detail: String,
    },
}

#[derive(Deserialize)]
struct Tags {
    models: Vec<TagModel>,
}

#[derive(Deserialize)]
struct TagModel {
    name: String,
}

/// The names of the models the Ollama server at `base_url` (as a spec holds it, e.g.
/// `http://127.0.0.1:11434`) has, in the server's order.
pub async fn ollama_models(base_url: &str) -> Result<Vec<String>, OllamaModelsError> {
    let url = format!("{}/api/tags", base_url.trim_end_matches('/'));
    let unreachable = || OllamaModelsError::Unreachable { url: url.clone() };
    let not_ollama = |detail: String| OllamaModelsError::NotOllama {
        url: url.clone(),
        detail,
    };
    let client = reqwest::Client::builder()
        .timeout(LIST_TIMEOUT)
        .build()
        .map_err(|_| unreachable())?;
    let response = client.get(&url).send().await.map_err(|_| unreachable())?;
    let status = response.status();
    if !status.is_success() {
        return Err(not_ollama(format!("HTTP {}", status.as_u16())));
    }
    let body = response.bytes().await.map_err(|_| unreachable())?;
    let tags: Tags = serde_json::from_slice(&body)
        .map_err(|e| not_ollama(format!("a body that is not a model list ({e})")))?;
    Ok(tags.models.into_iter().map(|m| m.name).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_models_of_a_server_are_listed_in_its_order() {
        let config = mock_llm::MockConfig {
            models: vec!["llama3.2".into(), "qwen3:8b".into()],
            ..Default::default()
        };
        let server = mock_llm::MockServer::start(config).await.unwrap();
        let models = ollama_models(&server.base_url()).await.unwrap();
        assert_eq!(models[..2], ["llama3.2", "qwen3:8b"]);
        server.shutdown().await;
    }

    #[tokio::test]
    async fn a_closed_port_is_unreachable_and_the_error_names_the_url_and_ollama_serve() {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let error = ollama_models(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains(&format!("http://127.0.0.1:{port}/api/tags")),
            "{text}"
        );
        assert!(text.contains("ollama serve"), "{text}");
    }
}
