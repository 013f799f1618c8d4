//! Where push notifications may go: the operator's allowlist (`[a2a] push_allow`) and the
//! address rule that keeps webhooks off this host's private network.
//!
//! A webhook URL is accepted only when it is an `http`/`https` URL without user info that lies
//! under an allowed entry (same scheme, host and port; its path at or under the entry's path).
//! Its host must then resolve to public addresses only: loopback, private (RFC 1918, unique
//! local), link-local, carrier-grade NAT, unspecified, broadcast, multicast and reserved ranges
//! are refused unless an entry for that host says `private = true`. The rule is checked when a
//! config is created and again on every delivery: [`CheckedResolver`] is the delivery client's
//! resolver, so a name that later resolves elsewhere (DNS rebinding) is refused at connect time.
//!
//! Not here: sending (`deliver`), the config methods (`super`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;

/// How long resolving a webhook's host may take when a config is created.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// One allowlist entry: webhook URLs under `scheme://host:port/path` are accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushAllow {
    scheme: String,
    host: String,
    port: u16,
    path: String,
    private: bool,
}

/// A `push_allow` entry that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PushAllowError {
    /// Not an absolute `http`/`https` URL with a host.
    #[error(
        "[a2a] push_allow entry {entry:?} is not an http(s) origin like \"https://hooks.example.com\""
    )]
    NotOrigin {
        /// The entry as written.
        entry: String,
    },
    /// User info, a query or a fragment.
    #[error(
        "[a2a] push_allow entry {entry:?} may name only scheme://host[:port][/path] (no user, query or fragment)"
    )]
    Extra {
        /// The entry as written.
        entry: String,
    },
}

impl PushAllow {
    /// The entry `origin` (`scheme://host[:port][/path]`); `private` lets its host resolve to
    /// private, loopback or link-local addresses.
    pub fn parse(origin: &str, private: bool) -> Result<PushAllow, PushAllowError> {
        let not_origin = || PushAllowError::NotOrigin {
            entry: origin.to_owned(),
        };
        let url = Url::parse(origin).map_err(|_| not_origin())?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(not_origin());
        }
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return Err(not_origin());
        };
        if !url.username().is_empty()
            || url.password().is_some()
            || url.query().is_some()
            || url.fragment().is_some()
        {
            return Err(PushAllowError::Extra {
                entry: origin.to_owned(),
            });
        }
        Ok(PushAllow {
            scheme: url.scheme().to_owned(),
            host: host.to_ascii_lowercase(),
            port,
            path: url.path().trim_end_matches('/').to_owned(),
            private,
        })
    }

    fn covers(&self, url: &Url) -> bool {
        let path = url.path();
        url.scheme() == self.scheme
            && url.host_str().map(str::to_ascii_lowercase).as_deref() == Some(self.host.as_str())
            && url.port_or_known_default() == Some(self.port)
            && (path == self.path
                || path
                    .strip_prefix(self.path.as_str())
                    .is_some_and(|rest| rest.starts_with('/')))
    }

    fn origin(&self) -> String {
        format!("{}://{}:{}{}", self.scheme, self.host, self.port, self.path)
    }
}

/// Why a webhook URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WebhookRefusal {
    /// Not an absolute `http`/`https` URL.
    #[error("webhook url {url:?} is not an absolute http(s) URL")]
    NotHttp {
        /// The URL as given.
        url: String,
    },
    /// A user name or password in the URL.
    #[error("webhook url must not carry credentials; send them in `authentication`")]
    Userinfo,
    /// Under no allowlist entry.
    #[error(
        "webhook url {url:?} is not under an origin this server sends push notifications to (allowed: {allowed}); ask its operator to add it to [a2a] push_allow"
    )]
    NotAllowed {
        /// The URL as given.
        url: String,
        /// The allowed origins, comma-separated.
        allowed: String,
    },
    /// The host resolves to an address that is not public.
    #[error(
        "webhook host {host} resolves to {address}, a private, loopback or link-local address; only a [a2a] push_allow entry for it with private = true allows that"
    )]
    NotPublic {
        /// The URL's host.
        host: String,
        /// The address it resolved to.
        address: IpAddr,
    },
    /// The host does not resolve.
    #[error("webhook host {host} does not resolve: {why}")]
    Unresolved {
        /// The URL's host.
        host: String,
        /// What the resolver said.
        why: String,
    },
}

/// The allowlist.
#[derive(Debug, Clone, Default)]
pub(crate) struct AllowList {
    entries: Vec<PushAllow>,
}

impl AllowList {
    pub(crate) fn new(entries: Vec<PushAllow>) -> AllowList {
        AllowList { entries }
    }

    /// `raw` parsed and matched against the entries, its host's addresses not yet checked.
    fn matched(&self, raw: &str) -> Result<(Url, &PushAllow), WebhookRefusal> {
        let url = Url::parse(raw)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
            .ok_or_else(|| WebhookRefusal::NotHttp {
                url: raw.to_owned(),
            })?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(WebhookRefusal::Userinfo);
        }
        let entry = self
            .entries
            .iter()
            .find(|e| e.covers(&url))
            .ok_or_else(|| WebhookRefusal::NotAllowed {
                url: raw.to_owned(),
                allowed: if self.entries.is_empty() {
                    "none".to_owned()
                } else {
                    self.entries
                        .iter()
                        .map(PushAllow::origin)
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            })?;
        Ok((url, entry))
    }

    /// `raw` when it is allowed and its host resolves (now) only to addresses its entry allows.
    pub(crate) async fn check(&self, raw: &str) -> Result<Url, WebhookRefusal> {
        let (url, entry) = self.matched(raw)?;
        let host = url.host_str().unwrap_or_default().to_owned();
        let port = url.port_or_known_default().unwrap_or(0);
        let name = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let resolved = tokio::time::timeout(
            RESOLVE_TIMEOUT,
            tokio::net::lookup_host((name.as_str(), port)),
        )
        .await;
        let addresses: Vec<SocketAddr> = match resolved {
            Ok(Ok(addresses)) => addresses.collect(),
            Ok(Err(e)) => {
                return Err(WebhookRefusal::Unresolved {
                    host,
                    why: e.to_string(),
                });
            }
            Err(_) => {
                return Err(WebhookRefusal::Unresolved {
                    host,
                    why: format!("no answer within {}s", RESOLVE_TIMEOUT.as_secs()),
                });
            }
        };
        if !entry.private
            && let Some(address) = addresses
                .iter()
                .map(SocketAddr::ip)
                .find(|a| !is_public(*a))
        {
            return Err(WebhookRefusal::NotPublic { host, address });
        }
        Ok(url)
    }

    /// At delivery: `url` still under an entry, and an IP-literal host allowed by it (a name's
    /// addresses are checked by [`CheckedResolver`] as the client connects).
    pub(crate) fn recheck(&self, url: &Url) -> Result<(), WebhookRefusal> {
        let (url, entry) = self.matched(url.as_str())?;
        let host = url.host_str().unwrap_or_default();
        let literal = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok();
        match literal {
            Some(address) if !entry.private && !is_public(address) => {
                Err(WebhookRefusal::NotPublic {
                    host: host.to_owned(),
                    address,
                })
            }
            _ => Ok(()),
        }
    }

    /// Whether an entry for the host `name` allows private addresses.
    fn private_allowed(&self, name: &str) -> bool {
        self.entries
            .iter()
            .any(|e| e.private && e.host.eq_ignore_ascii_case(name))
    }
}

/// The delivery client's resolver: the system's answer, refused when it holds an address the
/// allowlist does not allow for that name.
#[derive(Debug, Clone)]
pub(crate) struct CheckedResolver {
    pub(crate) allow: Arc<AllowList>,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let name = name.as_str().to_owned();
        let private_allowed = self.allow.private_allowed(&name);
        Box::pin(async move {
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if !private_allowed
                && let Some(address) = addresses
                    .iter()
                    .map(SocketAddr::ip)
                    .find(|a| !is_public(*a))
            {
                let refusal = WebhookRefusal::NotPublic {
                    host: name,
                    address,
                };
                return Err(Box::new(refusal) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether `address` is a public unicast address (the only kind a webhook may reach unless an
/// entry says otherwise).
pub(crate) fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (first & 0xffc0) == 0xfec0 // site-local fec0::/10 (deprecated)
                || is_nat64_of_private(v6))
        }
    }
}

fn is_nat64_of_private(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] && {
        let [a, b] = s[6].to_be_bytes();
        let [c, d] = s[7].to_be_bytes();
        !is_public_v4(Ipv4Addr::new(a, b, c, d))
    }
}

fn is_public_v4(v4: Ipv4Addr) -> bool {
    let [a, b, ..] = v4.octets();
    !(v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT 100.64/10
        || (a == 198 && (b == 18 || b == 19)) // benchmarking 198.18/15
        || a >= 240)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[(&str, bool)]) -> AllowList {
        AllowList::new(
            entries
                .iter()
                .map(|(o, p)| PushAllow::parse(o, *p).unwrap())
                .collect(),
        )
    }

    #[test]
    fn only_urls_under_an_entry_are_allowed() {
        let allow = list(&[("https://hooks.example.com/a2a", false)]);
        assert!(allow.matched("https://hooks.example.com/a2a").is_ok());
        assert!(
            allow
                .matched("https://HOOKS.example.com:443/a2a/t1?x=1")
                .is_ok()
        );
        for refused in [
            "https://hooks.example.com/a2abc",
            "https://hooks.example.com/other",
            "http://hooks.example.com/a2a",
            "https://hooks.example.com:8443/a2a",
            "https://evil.example.com/a2a",
            "not a url",
            "file:///etc/passwd",
        ] {
            assert!(allow.matched(refused).is_err(), "{refused}");
        }
        assert_eq!(
            allow
                .matched("https://u:p@hooks.example.com/a2a")
                .unwrap_err(),
            WebhookRefusal::Userinfo
        );
    }

    #[test]
    fn entries_are_origins_with_an_optional_path() {
        assert!(PushAllow::parse("ftp://x", false).is_err());
        assert!(PushAllow::parse("hooks.example.com", false).is_err());
        assert!(matches!(
            PushAllow::parse("https://x/?q=1", false),
            Err(PushAllowError::Extra { .. })
        ));
    }

    #[test]
    fn private_loopback_and_link_local_addresses_are_not_public() {
        for address in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
        ] {
            assert!(!is_public(address.parse().unwrap()), "{address}");
        }
        for address in ["93.184.216.34", "2606:2800:220:1::1", "64:ff9b::5db8:d822"] {
            assert!(is_public(address.parse().unwrap()), "{address}");
        }
    }

    #[tokio::test]
    async fn a_loopback_webhook_needs_an_entry_that_allows_private_addresses() {
        let strict = list(&[("http://127.0.0.1:9", false)]);
        assert!(matches!(
            strict.check("http://127.0.0.1:9/hook").await,
            Err(WebhookRefusal::NotPublic { .. })
        ));
        assert!(
            strict
                .recheck(&Url::parse("http://127.0.0.1:9/hook").unwrap())
                .is_err()
        );
        let open = list(&[("http://127.0.0.1:9", true)]);
        assert!(open.check("http://127.0.0.1:9/hook").await.is_ok());
        assert!(
            open.recheck(&Url::parse("http://127.0.0.1:9/hook").unwrap())
                .is_ok()
        );
    }
}
