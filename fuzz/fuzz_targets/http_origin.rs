//! Fuzz target: the `Host`/`Origin` rule of `serve --http` (`skillet_host::origin_guard`) on
//! arbitrary header values. Input: byte 0 picks the bound address (loopback, every address,
//! a LAN address) and whether the server is HTTPS; the rest is `host \0 origin \0 entry`.
//! Checks: nothing panics; a request whose every `Host` is an allowed IP literal on the bound
//! port and that sends no `Origin` is served; an `Origin` that parses and is the request's own
//! site is served; `Origin: null` is never served; a configured entry either parses or is an
//! error naming its setting.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillet_host::origin_guard::{AllowedSites, Authority, OffSite, SiteRule, WebOrigin};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let mut parts = text.splitn(3, '\0');
    let host = parts.next().unwrap_or_default();
    let origin = parts.next();
    let entry = parts.next().unwrap_or_default();
    let bound = match flags % 3 {
        0 => "127.0.0.1:8080",
        1 => "0.0.0.0:8080",
        _ => "192.168.1.20:443",
    };
    let https = flags & 4 != 0;
    let allowed = match AllowedSites::parse(&[entry], &[entry]) {
        Ok(allowed) => allowed,
        Err(error) => {
            assert!(error.setting == "allowed_hosts" || error.setting == "allowed_origins");
            AllowedSites::default()
        }
    };
    let rule = SiteRule::new(bound.parse().unwrap(), https, allowed);
    let parsed_host = Authority::parse(host);
    let verdict = rule.check(&[host], None, origin);
    if let Ok(authority) = &parsed_host {
        if !rule.allows_host(authority) {
            assert!(matches!(verdict, Err(OffSite::Host(_))), "{verdict:?}");
        }
        let own_site = origin
            .and_then(|o| WebOrigin::parse(o).ok())
            .is_some_and(|o| {
                o.authority.host == authority.host
                    && o.authority.port.unwrap_or(if o.https { 443 } else { 80 })
                        == authority.port.unwrap_or(if o.https { 443 } else { 80 })
            });
        if rule.allows_host(authority) && (origin.is_none() || own_site) {
            assert_eq!(verdict, Ok(()), "{host:?} {origin:?}");
        }
    } else {
        assert!(verdict.is_err(), "{host:?} does not parse but was served");
    }
    if origin == Some("null") {
        assert!(verdict.is_err());
    }
    let _ = rule.check(&[], Some(host), origin);
});
