//! Which sites may talk to `serve --http`: the `Host` and `Origin` rule every route of the
//! server sits behind (A2E, A2A, MCP, the console and its API, approvals, the card, `/healthz`,
//! `/metrics`), so a web page the user opens can neither drive the server (CSRF: a cross-origin
//! `text/plain` POST needs no CORS preflight) nor read it through DNS rebinding (an attacker's
//! name that resolves to 127.0.0.1, sent as `Host:`).
//!
//! The rule ([`SiteRule::check`]):
//! - `Host` (and the URI's authority, and a trusted proxy's `X-Forwarded-Host`) must name this
//!   server: an IP literal that is loopback, the bound address, or any address when bound to
//!   `0.0.0.0`/`::` — on the bound port — or `localhost` on the bound port, or an entry of
//!   `[server] allowed_hosts` (`name` any port, `name:port` that port, `*` any host). An IP
//!   literal cannot be rebound: only a DNS name can change what it resolves to.
//! - `Origin`, when sent, must be the request's own site (its scheme's host and port equal to
//!   `Host`, or to the origin a trusted proxy forwarded) or an entry of
//!   `[server] allowed_origins` (`scheme://host[:port]`, port `*` for any). `Origin: null`
//!   (sandboxed frames, `file:` pages) is refused. No `Origin` (curl, SDKs, servers) passes.
//!
//! A refusal is `403` before any other layer or handler runs, with one `skillet::audit` warning
//! naming the header (escaped, cut) — never the body. CORS is never granted here: no answer
//! carries `Access-Control-Allow-Origin`, so a browser keeps other sites' reads closed.
//!
//! Not here: who the client is behind a proxy (`forwarded`), credentials (`auth::http`), the
//! console's same-origin token for its state-changing routes (`console::token`).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::forwarded::client_of;

/// `host[:port]` as a `Host` header or an origin names it, lower-cased; an IPv6 literal
/// without its brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authority {
    /// The host: a DNS name (lower case) or an IP literal.
    pub host: Host,
    /// The port, when written.
    pub port: Option<u16>,
}

/// The host part of an [`Authority`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// An IP literal (`127.0.0.1`, `[::1]`).
    Ip(IpAddr),
    /// A DNS name, lower case (`localhost`, `skills.example.com`).
    Name(String),
}

/// Why a `Host`, an origin or a configured entry did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Empty, or longer than 255 bytes.
    #[error("it is empty or longer than 255 bytes")]
    Length,
    /// A character outside `[A-Za-z0-9.-_]` in a name, or a stray `[`/`]`.
    #[error("it is not a host name, an IPv4 address or a bracketed IPv6 address")]
    Host,
    /// The port is not 1 to 65535 (`*` only where a pattern allows it).
    #[error("the port is not a number from 1 to 65535")]
    Port,
    /// An origin that is not `http://` or `https://` followed by an authority alone (`null`,
    /// a path, userinfo, another scheme).
    #[error("it is not an origin of the form http[s]://host[:port]")]
    Origin,
}

impl Authority {
    /// Parses `host[:port]` (`[v6]:port` for IPv6).
    pub fn parse(text: &str) -> Result<Authority, ParseError> {
        let (host, port) = split_port(text)?;
        let port = match port {
            None => None,
            Some(port) => Some(parse_port(port)?),
        };
        Ok(Authority {
            host: parse_host(host)?,
            port,
        })
    }

    /// The port, or `default` when none is written.
    fn port_or(&self, default: u16) -> u16 {
        self.port.unwrap_or(default)
    }
}

/// `host` and the text after its last `:` (outside brackets), if any.
fn split_port(text: &str) -> Result<(&str, Option<&str>), ParseError> {
    if text.is_empty() || text.len() > 255 {
        return Err(ParseError::Length);
    }
    if text.starts_with('[') {
        let end = text.find(']').ok_or(ParseError::Host)?;
        let (host, rest) = text.split_at(end + 1);
        return match rest {
            "" => Ok((host, None)),
            _ => rest
                .strip_prefix(':')
                .map(|port| (host, Some(port)))
                .ok_or(ParseError::Host),
        };
    }
    Ok(match text.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (text, None),
    })
}

fn parse_port(text: &str) -> Result<u16, ParseError> {
    if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::Port);
    }
    text.parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or(ParseError::Port)
}

fn parse_host(text: &str) -> Result<Host, ParseError> {
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return inner
            .parse::<std::net::Ipv6Addr>()
            .map(|ip| Host::Ip(IpAddr::V6(ip)))
            .map_err(|_| ParseError::Host);
    }
    if let Ok(ip) = text.parse::<std::net::Ipv4Addr>() {
        return Ok(Host::Ip(IpAddr::V4(ip)));
    }
    let name_bytes = |b: u8| b.is_ascii_alphanumeric() || b"-._".contains(&b);
    if text.is_empty() || !text.bytes().all(name_bytes) {
        return Err(ParseError::Host);
    }
    Ok(Host::Name(text.to_ascii_lowercase()))
}

/// A browser origin: `http` or `https` and an authority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebOrigin {
    /// `true` for `https`.
    pub https: bool,
    /// Its host and port.
    pub authority: Authority,
}

impl WebOrigin {
    /// Parses `http[s]://host[:port]` (an `Origin` header's value; a trailing `/` is allowed).
    pub fn parse(text: &str) -> Result<WebOrigin, ParseError> {
        let (https, rest) = strip_scheme(text)?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '@', '?', '#']) {
            return Err(ParseError::Origin);
        }
        Ok(WebOrigin {
            https,
            authority: Authority::parse(rest)?,
        })
    }

    /// Its port, written or the scheme's default.
    fn port(&self) -> u16 {
        self.authority.port_or(default_port(self.https))
    }

    /// Whether this origin is the site `host` names (the port `host` omits is this origin's
    /// scheme's default).
    fn is_site_of(&self, host: &Authority) -> bool {
        self.authority.host == host.host && self.port() == host.port_or(default_port(self.https))
    }
}

fn strip_scheme(text: &str) -> Result<(bool, &str), ParseError> {
    let lower = |prefix: &str| {
        text.get(..prefix.len())
            .filter(|head| head.eq_ignore_ascii_case(prefix))
            .map(|_| &text[prefix.len()..])
    };
    match (lower("https://"), lower("http://")) {
        (Some(rest), _) => Ok((true, rest)),
        (None, Some(rest)) => Ok((false, rest)),
        (None, None) => Err(ParseError::Origin),
    }
}

fn default_port(https: bool) -> u16 {
    if https { 443 } else { 80 }
}

/// One `[server] allowed_hosts` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostEntry {
    /// `*`: any host.
    Any,
    /// `name` (any port) or `name:port`.
    Exact(Authority),
}

/// One `[server] allowed_origins` entry: `scheme://host[:port]`, or `:*` for any port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct OriginEntry {
    https: bool,
    host: Host,
    /// `None`: any port (`:*`).
    port: Option<u16>,
}

impl OriginEntry {
    fn parse(text: &str) -> Result<OriginEntry, ParseError> {
        let (https, rest) = strip_scheme(text)?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if let Some(host) = rest.strip_suffix(":*") {
            return Ok(OriginEntry {
                https,
                host: parse_host(host)?,
                port: None,
            });
        }
        let origin = WebOrigin::parse(text)?;
        Ok(OriginEntry {
            https,
            port: Some(origin.port()),
            host: origin.authority.host,
        })
    }

    fn allows(&self, origin: &WebOrigin) -> bool {
        self.https == origin.https
            && self.host == origin.authority.host
            && self.port.is_none_or(|port| port == origin.port())
    }
}

/// A `[server] allowed_hosts` or `allowed_origins` entry that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[server] {setting}: {entry:?}: {reason}")]
pub struct EntryError {
    /// `allowed_hosts` or `allowed_origins`.
    pub setting: &'static str,
    /// The entry as written.
    pub entry: String,
    /// What is wrong with it.
    pub reason: ParseError,
}

/// Why a request was refused (the audit line's `reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OffSite {
    /// No `Host` header and no authority in the URI.
    NoHost,
    /// A `Host` (or URI authority, or forwarded host) that names no address of this server.
    Host(String),
    /// An `Origin` of another site (or `null`, or not an origin at all).
    Origin(String),
}

/// The configured `[server] allowed_hosts` and `allowed_origins`, parsed (none by default:
/// only this server's own addresses and its own pages).
#[derive(Debug, Clone, Default)]
pub struct AllowedSites {
    hosts: Vec<HostEntry>,
    origins: Vec<OriginEntry>,
}

impl AllowedSites {
    /// Parses both lists; the first bad entry is the error.
    pub fn parse<S: AsRef<str>>(
        allowed_hosts: &[S],
        allowed_origins: &[S],
    ) -> Result<AllowedSites, EntryError> {
        let hosts = allowed_hosts
            .iter()
            .map(|entry| match entry.as_ref().trim() {
                "*" => Ok(HostEntry::Any),
                text => Authority::parse(text)
                    .map(HostEntry::Exact)
                    .map_err(|reason| EntryError {
                        setting: "allowed_hosts",
                        entry: text.to_owned(),
                        reason,
                    }),
            })
            .collect::<Result<_, _>>()?;
        let origins = allowed_origins
            .iter()
            .map(|entry| {
                OriginEntry::parse(entry.as_ref().trim()).map_err(|reason| EntryError {
                    setting: "allowed_origins",
                    entry: entry.as_ref().to_owned(),
                    reason,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(AllowedSites { hosts, origins })
    }
}

/// The `Host`/`Origin` rule of one server (see the module doc).
#[derive(Debug, Clone)]
pub struct SiteRule {
    bound: SocketAddr,
    https: bool,
    allowed: AllowedSites,
}

impl SiteRule {
    /// The rule of a server listening on `bound` (`https` with TLS) that also allows `allowed`.
    pub fn new(bound: SocketAddr, https: bool, allowed: AllowedSites) -> SiteRule {
        SiteRule {
            bound,
            https,
            allowed,
        }
    }

    /// Whether `authority` (a `Host` value) names this server.
    pub fn allows_host(&self, authority: &Authority) -> bool {
        let on_bound_port = authority.port_or(default_port(self.https)) == self.bound.port();
        let local = match &authority.host {
            Host::Ip(ip) => {
                ip.is_loopback() || *ip == self.bound.ip() || self.bound.ip().is_unspecified()
            }
            Host::Name(name) => name == "localhost",
        };
        (local && on_bound_port)
            || self.allowed.hosts.iter().any(|entry| match entry {
                HostEntry::Any => true,
                HostEntry::Exact(allowed) => {
                    allowed.host == authority.host
                        && allowed.port.is_none_or(|port| Some(port) == authority.port)
                }
            })
    }

    /// Whether a request with these `Host` values (the header, the URI's authority, a trusted
    /// proxy's forwarded host — each when present), its forwarded origin and its `Origin`
    /// header may be served.
    pub fn check(
        &self,
        hosts: &[&str],
        forwarded_origin: Option<&str>,
        origin: Option<&str>,
    ) -> Result<(), OffSite> {
        if hosts.is_empty() {
            return Err(OffSite::NoHost);
        }
        let mut parsed = Vec::with_capacity(hosts.len());
        for text in hosts {
            match Authority::parse(text) {
                Ok(authority) if self.allows_host(&authority) => parsed.push(authority),
                _ => return Err(OffSite::Host(quote(text))),
            }
        }
        let Some(origin) = origin else {
            return Ok(());
        };
        let refused = || OffSite::Origin(quote(origin));
        let sent = WebOrigin::parse(origin).map_err(|_| refused())?;
        let forwarded = forwarded_origin.and_then(|o| WebOrigin::parse(o).ok());
        let same_site = parsed.iter().any(|host| sent.is_site_of(host))
            || forwarded.is_some_and(|f| f == sent || sent.is_site_of(&f.authority));
        if same_site || self.allowed.origins.iter().any(|entry| entry.allows(&sent)) {
            Ok(())
        } else {
            Err(refused())
        }
    }
}

/// `text` escaped and cut for a log line.
fn quote(text: &str) -> String {
    let cut: String = text.chars().take(100).collect();
    format!("{cut:?}")
}

/// `router` with `rule` in front of every route: an off-site request is answered `403` before
/// any other layer or handler runs. Put it inside `forwarded::layer` (it reads the forwarded
/// origin) and outside everything else.
pub fn layer(router: Router, rule: SiteRule) -> Router {
    let rule = Arc::new(rule);
    router.layer(axum::middleware::from_fn(
        move |request: Request, next: Next| {
            let rule = Arc::clone(&rule);
            async move { guard(&rule, request, next).await }
        },
    ))
}

async fn guard(rule: &SiteRule, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let client = client_of(request.extensions());
    let mut hosts: Vec<&str> = Vec::with_capacity(2);
    let mut unreadable = false;
    for value in headers.get_all(header::HOST) {
        match value.to_str() {
            Ok(text) => hosts.push(text),
            Err(_) => unreadable = true,
        }
    }
    let uri_authority = request.uri().authority().map(|a| a.as_str());
    hosts.extend(uri_authority);
    let forwarded_host = client
        .origin
        .as_deref()
        .and_then(|o| o.split_once("://"))
        .map(|(_, authority)| authority);
    hosts.extend(forwarded_host);
    let decided = match (unreadable, origin_header(headers)) {
        (true, _) => Err(OffSite::Host("(not text)".into())),
        (false, Err(())) => Err(OffSite::Origin("(not one text value)".into())),
        (false, Ok(origin)) => rule.check(&hosts, client.origin.as_deref(), origin),
    };
    match decided {
        Ok(()) => next.run(request).await,
        Err(off_site) => {
            let path = request.uri().path();
            let client = client.addr.map(|a| a.to_string()).unwrap_or_default();
            let (what, value) = match &off_site {
                OffSite::NoHost => ("no Host header", String::new()),
                OffSite::Host(host) => ("Host is not this server", host.clone()),
                OffSite::Origin(origin) => ("Origin is another site", origin.clone()),
            };
            tracing::warn!(target: "skillet::audit", %path, %client, value = %value,
                "request refused: {what} ([server] allowed_hosts / allowed_origins)");
            refusal(&off_site)
        }
    }
}

/// The one `Origin` value: `Ok(None)` when absent, `Err` when repeated or not text.
fn origin_header(headers: &HeaderMap) -> Result<Option<&str>, ()> {
    let mut values = headers.get_all(header::ORIGIN).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(());
    }
    first.map(HeaderValue::to_str).transpose().map_err(|_| ())
}

fn refusal(off_site: &OffSite) -> Response {
    let message = match off_site {
        OffSite::NoHost => "the request has no Host header",
        OffSite::Host(_) => {
            "the Host header names no address of this server; a name the server is reached by \
             belongs in [server] allowed_hosts"
        }
        OffSite::Origin(_) => {
            "the request comes from a web page of another site; an origin allowed to call this \
             server belongs in [server] allowed_origins"
        }
    };
    let body = serde_json::json!({"error": "forbidden", "message": message});
    (StatusCode::FORBIDDEN, axum::Json(body)).into_response()
}

#[cfg(test)]
#[path = "origin_guard_tests.rs"]
mod tests;
