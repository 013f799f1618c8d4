//! The PEP 508 parser's tests: the normal form, the refusals, and generated inputs.

use super::*;

fn normal(text: &str) -> String {
    parse(text)
        .unwrap_or_else(|e| panic!("{text:?}: {e}"))
        .to_string()
}

#[test]
fn requirements_are_written_in_one_normal_form_that_parses_to_the_same_value() {
    for (text, expected) in [
        ("pypdf", "pypdf"),
        ("  PyPDF >= 5 ", "pypdf>=5"),
        ("pdfplumber==0.11.4", "pdfplumber==0.11.4"),
        (
            "Foo.Bar_baz[Z, a,a]  (<2, >=1.0)",
            "foo-bar-baz[a,z]>=1.0,<2",
        ),
        (
            "lxml; python_version < '3.13'",
            "lxml; python_version < \"3.13\"",
        ),
        (
            "x ;python_version>='3.8' and (sys_platform=='linux' or os_name == \"nt\")",
            "x; python_version >= \"3.8\" and (sys_platform == \"linux\" or os_name == \"nt\")",
        ),
        ("x; 'linux' in sys_platform", "x; \"linux\" in sys_platform"),
        ("x; extra not in 'a, b'", "x; extra not in \"a, b\""),
        ("numpy!=1.*,~=2.1,===3.0rc1", "numpy===3.0rc1,!=1.*,~=2.1"),
    ] {
        assert_eq!(normal(text), expected, "{text:?}");
        assert_eq!(parse(expected).unwrap(), parse(text).unwrap(), "{text:?}");
        assert_eq!(normal(expected), expected);
    }
}

#[test]
fn a_line_break_that_would_smuggle_an_option_is_refused() {
    for text in [
        "evilpkg\n--find-links /dir",
        "evilpkg\r\n-e /tmp/x",
        "evilpkg\r-r other.txt",
        "pkg; os_name == 'a\n--index-url x'",
    ] {
        assert_eq!(parse(text), Err(RequirementError::LineBreak), "{text:?}");
    }
}

#[test]
fn options_urls_paths_and_direct_references_are_refused_with_their_reason() {
    use RequirementError::*;
    for (text, why) in [
        ("--index-url https://evil.example/simple", Option),
        ("-e .", Option),
        ("git+https://example.com/x.git", Url),
        ("pkg @ https://evil.example/pkg.whl", Url),
        ("pkg@file:x", DirectReference),
        ("./local", Path),
        ("/abs/pkg", Path),
        ("~/pkg", Path),
        ("pkg\\x", Path),
        ("pkg\u{7}", Control),
    ] {
        assert_eq!(parse(text), Err(why), "{text:?}");
    }
}

#[test]
fn what_is_not_pep_508_is_refused_with_where() {
    for text in [
        "",
        "-",
        "pkg >= ",
        "pkg[",
        "pkg[a b]",
        "pkg extra",
        "pkg; python_version",
        "pkg; foo == '1'",
        "pkg; os_name == 'a#b'",
        "pkg; os_name == '${UV_DEFAULT_INDEX}'",
        "pkg; (os_name == 'a'",
        "pkg==1 # comment",
        "_pkg",
        "pkg-",
        "pkg; os_name == 'a' oé",
        "pkg; os_name == 'a' ané",
        "pkg; os_name nó 'a'",
        "pké",
        "pkg; os_name == 'é'",
    ] {
        let err = parse(text).unwrap_err();
        assert!(
            matches!(
                err,
                RequirementError::Syntax { .. } | RequirementError::Option
            ),
            "{text:?}: {err:?}"
        );
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn generated_inputs_never_panic_and_accepted_ones_round_trip() {
    const PIECES: [&str; 32] = [
        "pkg",
        "A_b.c",
        "[",
        "]",
        ",",
        "(",
        ")",
        ";",
        " ",
        "\t",
        "==",
        ">=",
        "<",
        "~=",
        "===",
        "!=",
        "1.0",
        "*",
        "and",
        "or",
        "not",
        "in",
        "'",
        "\"",
        "python_version",
        "extra",
        "é",
        "x-",
        "@",
        "/",
        "#",
        "\n",
    ];
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut accepted = 0;
    for _ in 0..50_000 {
        let mut text = String::new();
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        for _ in 0..(state % 12) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(PIECES[(state % PIECES.len() as u64) as usize]);
        }
        if let Ok(requirement) = parse(&text) {
            accepted += 1;
            let line = requirement.to_string();
            assert_eq!(
                parse(&line).as_ref(),
                Ok(&requirement),
                "{text:?} -> {line:?}"
            );
            assert!(!line.contains(['\n', '@', '/', '#']), "{line:?}");
        }
    }
    assert!(
        accepted > 100,
        "the generator reaches accepted inputs: {accepted}"
    );
}
