//! `[nats]`: the table is the host's [`NatsOptions`] as it is (every key optional; the command
//! line's `--nats URL` overrides `url`). This file keeps the table's parsing tests.

pub use skillet_host::nats::NatsOptions;

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use std::path::Path;

    fn parse(text: &str) -> Result<Config, String> {
        Config::from_toml_str(text, Path::new("/etc/skillet/skillet.toml"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_overrides_parse_and_paths_are_anchored() {
        let config = parse("[nats]\nurl = \"nats://10.0.0.1:4222\"\nconcurrency = 8\ncredentials_file = \"w.creds\"\n").unwrap();
        assert_eq!(config.nats.url, "nats://10.0.0.1:4222");
        assert_eq!(config.nats.max_ack_pending(), 8, "defaults to concurrency");
        assert_eq!(
            config.nats.credentials_file.as_deref(),
            Some(Path::new("/etc/skillet/w.creds"))
        );
        assert_eq!(parse("").unwrap().nats.stream, "SKILLET_CALLS");
    }

    #[test]
    fn an_inline_token_and_bad_values_are_refused() {
        let inline = parse("[nats]\ntoken = \"s3cret\"\n").unwrap_err();
        assert!(inline.contains("nats.token"), "{inline}");
        assert!(inline.contains("token_env"), "{inline}");
        assert!(
            !inline.contains("s3cret"),
            "the secret is not echoed: {inline}"
        );
        for (text, key) in [
            ("[nats]\nconcurrency = 0\n", "nats.concurrency"),
            ("[nats]\nmax_deliveries = 0\n", "nats.max_deliveries"),
            ("[nats]\nack_wait_seconds = -1\n", "nats.ack_wait_seconds"),
            ("[nats]\nstream = \"a.b\"\n", "nats.stream"),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(key), "{text}: {error}");
        }
    }
}
