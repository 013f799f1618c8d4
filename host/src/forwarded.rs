//! Who the client is when `serve --http` sits behind a reverse proxy: `[server]
//! trusted_proxies` names the peer addresses (single addresses or CIDR ranges) whose
//! `X-Forwarded-For`, `X-Forwarded-Proto` and `X-Forwarded-Host` are believed. From any other
//! peer the headers are ignored — anyone can send them.
//!
//! [`layer`] puts a [`ClientInfo`] on every request:
//! - `addr` — the peer's address; from a trusted peer, the right-most `X-Forwarded-For` entry
//!   that is not itself a trusted proxy (each proxy appends the address it saw, so entries
//!   left of the first untrusted one could be the client's own invention);
//! - `origin` — from a trusted peer that sent `X-Forwarded-Proto` and/or `X-Forwarded-Host`,
//!   the origin the client used (`https://skills.example.com`): what the protected-resource
//!   metadata, the `WWW-Authenticate` link and the Agent Card's URLs then name. A value that is
//!   not a plain scheme (`http`/`https`) or host[:port] is ignored.
//!
//! Not here: TLS (`tls`), the peer address itself (`listener::PeerAddr`), what the address is
//! used for (audit records: `auth`; URLs: `auth::http`, `http`).

use std::net::IpAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;

use crate::listener::PeerAddr;

/// An address or a range of addresses (`10.0.0.0/8`, `127.0.0.1`, `fd00::/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cidr {
    net: IpAddr,
    prefix: u8,
}

impl std::str::FromStr for Cidr {
    type Err = String;

    fn from_str(text: &str) -> Result<Cidr, String> {
        let (addr, prefix) = match text.trim().split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (text.trim(), None),
        };
        let net: IpAddr = addr
            .parse()
            .map_err(|_| format!("{text:?} is not an IP address or CIDR range"))?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("{text:?}: the prefix length must be 0 to {max}"))?,
        };
        Ok(Cidr { net, prefix })
    }
}

impl Cidr {
    /// Whether `addr` is in the range (an IPv4-mapped IPv6 address counts as its IPv4 one).
    pub(crate) fn contains(&self, addr: IpAddr) -> bool {
        match (self.net, addr.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(addr)) => {
                prefix_eq(&net.octets(), &addr.octets(), self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(addr)) => {
                prefix_eq(&net.octets(), &addr.octets(), self.prefix)
            }
            _ => false,
        }
    }
}

fn prefix_eq(a: &[u8], b: &[u8], prefix: u8) -> bool {
    let (whole, rest) = (usize::from(prefix / 8), prefix % 8);
    if a[..whole] != b[..whole] {
        return false;
    }
    rest == 0 || {
        let mask = 0xffu8 << (8 - rest);
        a[whole] & mask == b[whole] & mask
    }
}

/// The proxies whose forwarded headers are believed (none by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<Cidr>);

impl TrustedProxies {
    /// Parses each entry; the first bad one is the error.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<TrustedProxies, String> {
        entries
            .iter()
            .map(|e| e.as_ref().parse())
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
    }

    /// Whether `addr` is a trusted proxy.
    pub fn trusts(&self, addr: IpAddr) -> bool {
        self.0.iter().any(|c| c.contains(addr))
    }

    /// Whether no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Where a request came from, as far as this server can tell (in every request's extensions
/// under [`layer`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ClientInfo {
    /// The client's address (see the module doc); `None` when the connection's peer is unknown.
    pub addr: Option<IpAddr>,
    /// The origin the client used, as a trusted proxy named it (`https://host[:port]`).
    pub origin: Option<String>,
}

impl ClientInfo {
    /// What `peer` and `headers` say, believing the headers only from a trusted peer.
    /// `scheme` is this server's own (`http`/`https`), used when a proxy names only the host.
    pub(crate) fn read(
        peer: Option<IpAddr>,
        headers: &HeaderMap,
        proxies: &TrustedProxies,
        scheme: &str,
    ) -> ClientInfo {
        let Some(peer) = peer else {
            return ClientInfo::default();
        };
        if !proxies.trusts(peer) {
            return ClientInfo {
                addr: Some(peer),
                origin: None,
            };
        }
        let chain: Vec<IpAddr> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(parse_forwarded_addr)
            .collect();
        // Right to left, past every trusted hop; all trusted: the left-most is the client.
        let addr = chain
            .iter()
            .rev()
            .find(|a| !proxies.trusts(**a))
            .or(chain.first())
            .copied()
            .unwrap_or(peer);
        let proto = first_value(headers, "x-forwarded-proto")
            .map(str::to_ascii_lowercase)
            .filter(|p| p == "http" || p == "https");
        let host = first_value(headers, "x-forwarded-host").filter(|h| is_authority(h));
        let origin = match (proto, host) {
            (None, None) => None,
            (proto, host) => {
                let host = host.map(str::to_owned).or_else(|| {
                    headers
                        .get(axum::http::header::HOST)
                        .and_then(|h| h.to_str().ok())
                        .filter(|h| is_authority(h))
                        .map(str::to_owned)
                });
                host.map(|host| format!("{}://{host}", proto.as_deref().unwrap_or(scheme)))
            }
        };
        ClientInfo {
            addr: Some(addr),
            origin,
        }
    }
}

/// One `X-Forwarded-For` entry: an address, possibly `[v6]`, `v4:port` or `[v6]:port`.
fn parse_forwarded_addr(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    if let Ok(addr) = entry.parse::<IpAddr>() {
        return Some(addr);
    }
    if let Ok(socket) = entry.parse::<std::net::SocketAddr>() {
        return Some(socket.ip());
    }
    entry
        .strip_prefix('[')
        .and_then(|e| e.strip_suffix(']'))
        .and_then(|e| e.parse().ok())
}

/// The first comma-separated value of the first `name` header.
fn first_value<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    let value = headers.get(name)?.to_str().ok()?;
    let first = value.split(',').next()?.trim();
    (!first.is_empty()).then_some(first)
}

/// Whether `text` is a plain `host[:port]` (letters, digits, `.-_:[]`), safe to put in a URL.
fn is_authority(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 255
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-_:[]".contains(&b))
}

/// `router` with a [`ClientInfo`] on every request, read from its [`PeerAddr`] and, from a peer
/// in `proxies`, its forwarded headers. `scheme` is this server's own.
pub(crate) fn layer(router: Router, proxies: TrustedProxies, scheme: &'static str) -> Router {
    let proxies = Arc::new(proxies);
    router.layer(axum::middleware::from_fn(
        move |mut request: Request, next: Next| {
            let proxies = Arc::clone(&proxies);
            async move {
                let peer = request.extensions().get::<PeerAddr>().map(|p| p.0.ip());
                let info = ClientInfo::read(peer, request.headers(), &proxies, scheme);
                request.extensions_mut().insert(info);
                let response: Response = next.run(request).await;
                response
            }
        },
    ))
}

/// The [`ClientInfo`] of a request ([`ClientInfo::default`] outside [`layer`]).
pub(crate) fn client_of(extensions: &axum::http::Extensions) -> ClientInfo {
    extensions.get::<ClientInfo>().cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn proxies() -> TrustedProxies {
        TrustedProxies::parse(&["10.0.0.0/8", "127.0.0.1", "fd00::/8"]).unwrap()
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, HeaderValue::from_static(v));
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ranges_match_by_prefix_and_mapped_v4_counts_as_v4() {
        let p = proxies();
        assert!(p.trusts(ip("10.200.3.4")));
        assert!(p.trusts(ip("127.0.0.1")));
        assert!(!p.trusts(ip("127.0.0.2")));
        assert!(!p.trusts(ip("11.0.0.1")));
        assert!(p.trusts(ip("::ffff:10.1.2.3")));
        assert!(p.trusts(ip("fd12::1")));
        assert!(!p.trusts(ip("fe80::1")));
        let odd: Cidr = "192.168.0.0/23".parse().unwrap();
        assert!(odd.contains(ip("192.168.1.255")));
        assert!(!odd.contains(ip("192.168.2.0")));
        assert!(TrustedProxies::parse(&["10.0.0.0/33"]).is_err());
        assert!(TrustedProxies::parse(&["proxy.internal"]).is_err());
    }

    #[test]
    fn forwarded_headers_are_believed_only_from_a_trusted_peer() {
        let h = headers(&[
            ("x-forwarded-for", "203.0.113.9"),
            ("x-forwarded-proto", "https"),
            ("x-forwarded-host", "skills.example.com"),
        ]);
        let trusted = ClientInfo::read(Some(ip("10.0.0.5")), &h, &proxies(), "http");
        assert_eq!(trusted.addr, Some(ip("203.0.113.9")));
        assert_eq!(
            trusted.origin.as_deref(),
            Some("https://skills.example.com")
        );
        let stranger = ClientInfo::read(Some(ip("198.51.100.7")), &h, &proxies(), "http");
        assert_eq!(stranger.addr, Some(ip("198.51.100.7")));
        assert_eq!(stranger.origin, None);
    }

    #[test]
    fn the_client_is_the_right_most_untrusted_hop_and_bad_values_are_ignored() {
        // The client wrote a fake first entry; proxy 10.0.0.9 appended what it saw.
        let h = headers(&[
            ("x-forwarded-for", "1.2.3.4, 203.0.113.9"),
            ("x-forwarded-for", "10.0.0.9"),
            ("x-forwarded-proto", "javascript"),
            ("x-forwarded-host", "evil.test/\"><script>"),
        ]);
        let info = ClientInfo::read(Some(ip("10.0.0.5")), &h, &proxies(), "https");
        assert_eq!(info.addr, Some(ip("203.0.113.9")));
        assert_eq!(info.origin, None, "neither value is usable");
        let only_proto = headers(&[("x-forwarded-proto", "https"), ("host", "a.example:8443")]);
        let info = ClientInfo::read(Some(ip("127.0.0.1")), &only_proto, &proxies(), "http");
        assert_eq!(info.origin.as_deref(), Some("https://a.example:8443"));
        assert_eq!(
            info.addr,
            Some(ip("127.0.0.1")),
            "no X-Forwarded-For: the peer"
        );
    }
}
