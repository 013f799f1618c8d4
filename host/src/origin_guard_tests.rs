//! The `Host`/`Origin` rule as a specification: what parses, what names this server, which
//! origins are its own site.

use super::*;

fn rule_on(bound: &str, hosts: &[&str], origins: &[&str]) -> SiteRule {
    let allowed = AllowedSites::parse(hosts, origins).unwrap();
    SiteRule::new(bound.parse().unwrap(), false, allowed)
}

fn loopback_rule() -> SiteRule {
    rule_on("127.0.0.1:8080", &[], &[])
}

fn public_rule() -> SiteRule {
    rule_on(
        "127.0.0.1:8080",
        &["skills.example.com", "api.example.com:8443"],
        &["https://app.example.com", "http://localhost:*"],
    )
}

#[test]
fn authorities_parse_names_ipv4_and_bracketed_ipv6_with_optional_ports() {
    assert_eq!(
        Authority::parse("LocalHost:8080"),
        Ok(Authority {
            host: Host::Name("localhost".into()),
            port: Some(8080)
        })
    );
    assert_eq!(
        Authority::parse("[::1]:80").unwrap().host,
        Host::Ip("::1".parse().unwrap())
    );
    assert_eq!(Authority::parse("[::1]").unwrap().port, None);
    assert_eq!(
        Authority::parse("127.0.0.1").unwrap().host,
        Host::Ip("127.0.0.1".parse().unwrap())
    );
    for bad in [
        "",
        "::1",
        "[::1",
        "[::1]x",
        "host:",
        "host:0",
        "host:65536",
        "host:+80",
        "a b",
        "ev\"il",
        "[evil.example]",
        "user@host",
    ] {
        assert!(Authority::parse(bad).is_err(), "{bad:?} parsed");
    }
    assert_eq!(Authority::parse(&"a".repeat(256)), Err(ParseError::Length));
}

#[test]
fn origins_are_a_scheme_and_an_authority_and_nothing_else() {
    let origin = WebOrigin::parse("HTTP://127.0.0.1:8080").unwrap();
    assert!(!origin.https);
    assert_eq!(origin.port(), 8080);
    assert_eq!(WebOrigin::parse("https://a.example").unwrap().port(), 443);
    for bad in [
        "null",
        "file://",
        "ftp://a.example",
        "http://",
        "http://a.example/path",
        "http://user@a.example",
        "http://a.example?x",
        "javascript:alert(1)",
        "//a.example",
    ] {
        assert!(WebOrigin::parse(bad).is_err(), "{bad:?} parsed");
    }
}

#[test]
fn loopback_names_and_addresses_on_the_bound_port_are_this_server() {
    let rule = loopback_rule();
    for host in [
        "127.0.0.1:8080",
        "localhost:8080",
        "LOCALHOST:8080",
        "[::1]:8080",
        "127.0.0.2:8080",
    ] {
        assert_eq!(rule.check(&[host], None, None), Ok(()), "{host}");
    }
    for host in [
        "evil.example:8080",
        "evil.example",
        "localhost:8081",
        "localhost",
        "127.0.0.1",
        "10.0.0.1:8080",
        "localhost.:8080",
        "sub.localhost:8080",
    ] {
        assert!(
            matches!(rule.check(&[host], None, None), Err(OffSite::Host(_))),
            "{host} allowed"
        );
    }
    assert_eq!(rule.check(&[], None, None), Err(OffSite::NoHost));
    // Every value present must name this server.
    assert!(
        rule.check(&["127.0.0.1:8080", "evil.example:8080"], None, None)
            .is_err()
    );
}

#[test]
fn a_server_bound_to_every_address_accepts_any_ip_literal_on_its_port_but_no_other_name() {
    let every = rule_on("0.0.0.0:9000", &[], &[]);
    assert_eq!(every.check(&["192.168.1.20:9000"], None, None), Ok(()));
    assert!(every.check(&["192.168.1.20:9001"], None, None).is_err());
    assert!(every.check(&["myhost.lan:9000"], None, None).is_err());
    let bound = rule_on("192.168.1.20:80", &[], &[]);
    assert_eq!(
        bound.check(&["192.168.1.20"], None, None),
        Ok(()),
        "port 80 is http's default"
    );
    assert!(bound.check(&["192.168.1.21"], None, None).is_err());
}

#[test]
fn configured_hosts_match_any_port_unless_they_name_one_and_a_star_matches_all() {
    let rule = public_rule();
    assert_eq!(rule.check(&["skills.example.com"], None, None), Ok(()));
    assert_eq!(rule.check(&["Skills.Example.com:443"], None, None), Ok(()));
    assert_eq!(rule.check(&["api.example.com:8443"], None, None), Ok(()));
    assert!(rule.check(&["api.example.com"], None, None).is_err());
    assert!(
        rule.check(&["evil.skills.example.com"], None, None)
            .is_err()
    );
    let any = rule_on("127.0.0.1:8080", &["*"], &[]);
    assert_eq!(any.check(&["whatever.example:1"], None, None), Ok(()));
    assert!(
        any.check(&["whatever.example:1"], None, Some("http://evil.example"))
            .is_err(),
        "allowing every Host still refuses other sites' pages"
    );
}

#[test]
fn an_origin_passes_when_it_is_the_requests_own_site_or_configured() {
    let rule = public_rule();
    let host = ["127.0.0.1:8080"];
    assert_eq!(
        rule.check(&host, None, Some("http://127.0.0.1:8080")),
        Ok(())
    );
    assert_eq!(
        rule.check(&host, None, Some("https://127.0.0.1:8080")),
        Ok(()),
        "only this listener serves that port"
    );
    for refused in [
        "null",
        "http://evil.example",
        "http://127.0.0.1:8081",
        "http://localhost:8080x",
        "http://127.0.0.1",
    ] {
        assert!(
            matches!(
                rule.check(&host, None, Some(refused)),
                Err(OffSite::Origin(_))
            ),
            "{refused} allowed"
        );
    }
    // The page at localhost:8080 calling 127.0.0.1:8080 is another origin to a browser.
    assert!(
        rule.check(&host, None, Some("http://localhost:8080"))
            .is_ok(),
        "allowed by the configured http://localhost:*"
    );
    assert!(
        loopback_rule()
            .check(&host, None, Some("http://localhost:8080"))
            .is_err()
    );
    assert_eq!(
        rule.check(&host, None, Some("https://app.example.com")),
        Ok(())
    );
    assert!(
        rule.check(&host, None, Some("http://app.example.com"))
            .is_err()
    );
    assert_eq!(
        rule.check(
            &["skills.example.com"],
            None,
            Some("https://skills.example.com")
        ),
        Ok(()),
        "a TLS-terminating proxy that keeps Host"
    );
}

#[test]
fn a_trusted_proxys_forwarded_host_must_be_allowed_and_is_the_pages_site() {
    let rule = public_rule();
    let hosts = ["127.0.0.1:8080", "skills.example.com"];
    assert_eq!(
        rule.check(
            &hosts,
            Some("https://skills.example.com"),
            Some("https://skills.example.com")
        ),
        Ok(())
    );
    assert!(
        rule.check(
            &["127.0.0.1:8080", "evil.example"],
            Some("https://evil.example"),
            None
        )
        .is_err(),
        "a rebound name forwarded by the proxy"
    );
}

#[test]
fn bad_configured_entries_name_the_setting_and_the_entry() {
    let error = AllowedSites::parse(&["bad host"], &[]).unwrap_err();
    assert_eq!(error.setting, "allowed_hosts");
    assert!(error.to_string().contains("\"bad host\""), "{error}");
    let error = AllowedSites::parse(&[], &["app.example.com"]).unwrap_err();
    assert_eq!(error.setting, "allowed_origins");
    assert_eq!(error.reason, ParseError::Origin);
}

#[test]
fn refused_values_are_escaped_and_cut_for_the_log() {
    let long = format!("evil\n{}", "x".repeat(500));
    let Err(OffSite::Host(logged)) = loopback_rule().check(&[long.as_str()], None, None) else {
        panic!("refused");
    };
    assert!(!logged.contains('\n'));
    assert!(logged.len() < 120, "{logged}");
}

#[test]
fn no_combination_of_hostile_fragments_panics_or_passes_a_foreign_name() {
    let pieces = [
        "",
        "[",
        "]",
        ":",
        "::1",
        "127.0.0.1",
        "localhost",
        "evil.example",
        ":8080",
        ":0",
        ":99999",
        "http://",
        "https://",
        "null",
        "/",
        "@",
        "\u{e9}",
        "%00",
        "*",
        ".",
    ];
    let rule = public_rule();
    for a in pieces {
        for b in pieces {
            for c in pieces {
                let text = format!("{a}{b}{c}");
                let _ = Authority::parse(&text);
                let _ = WebOrigin::parse(&text);
                let _ = AllowedSites::parse(&[text.as_str()], &[text.as_str()]);
                let verdict = rule.check(&[text.as_str()], Some(&text), Some(&text));
                if text.contains("evil") {
                    assert!(verdict.is_err(), "{text:?} served");
                }
            }
        }
    }
}
