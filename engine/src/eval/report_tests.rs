//! The JSON and JUnit writers; the JUnit XML is parsed back by a small well-formedness parser
//! (tags nest, attributes are quoted, every `&` starts a known reference, only XML characters).

use serde_json::json;

use super::*;
use crate::eval::check::{CheckFailure, CheckKind};
use crate::eval::observation::{Observation, RunOutcome};

/// An element read back: its name, attributes (unescaped) and child elements.
#[derive(Debug)]
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
    children: Vec<Element>,
    text: String,
}

impl Element {
    fn attribute(&self, name: &str) -> &str {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("<{}> has no {name}", self.name))
    }
}

/// Parses a whole document: the declaration, then exactly one root element.
fn parse_xml(text: &str) -> Result<Element, String> {
    if let Some(bad) = text.chars().find(|c| {
        !matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
    }) {
        return Err(format!("character {bad:?} is not allowed in XML"));
    }
    let rest = text
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .ok_or("no XML declaration")?;
    let mut parser = Parser { rest };
    parser.skip_space();
    let root = parser.element()?;
    parser.skip_space();
    if !parser.rest.is_empty() {
        return Err(format!("content after the root: {:?}", parser.rest));
    }
    Ok(root)
}

struct Parser<'a> {
    rest: &'a str,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        self.rest = self.rest.trim_start();
    }

    fn eat(&mut self, token: &str) -> Result<(), String> {
        self.rest = self
            .rest
            .strip_prefix(token)
            .ok_or_else(|| format!("expected {token:?} at {:?}", head(self.rest)))?;
        Ok(())
    }

    fn name(&mut self) -> Result<String, String> {
        let end = self
            .rest
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
            .unwrap_or(self.rest.len());
        if end == 0 {
            return Err(format!("expected a name at {:?}", head(self.rest)));
        }
        let (name, rest) = self.rest.split_at(end);
        self.rest = rest;
        Ok(name.to_owned())
    }

    fn element(&mut self) -> Result<Element, String> {
        self.eat("<")?;
        let name = self.name()?;
        let mut attributes = Vec::new();
        loop {
            self.skip_space();
            if self.rest.starts_with("/>") {
                self.eat("/>")?;
                return Ok(Element {
                    name,
                    attributes,
                    children: Vec::new(),
                    text: String::new(),
                });
            }
            if self.rest.starts_with('>') {
                self.eat(">")?;
                break;
            }
            let key = self.name()?;
            if attributes.iter().any(|(k, _)| *k == key) {
                return Err(format!("<{name}> repeats {key}"));
            }
            self.eat("=\"")?;
            let end = self.rest.find('"').ok_or("unterminated attribute")?;
            let value = unescape(&self.rest[..end])?;
            self.rest = &self.rest[end + 1..];
            attributes.push((key, value));
        }
        let mut children = Vec::new();
        let mut text = String::new();
        loop {
            if self.rest.starts_with("</") {
                self.eat("</")?;
                let closing = self.name()?;
                if closing != name {
                    return Err(format!("<{name}> closed by </{closing}>"));
                }
                self.eat(">")?;
                return Ok(Element {
                    name,
                    attributes,
                    children,
                    text,
                });
            }
            if self.rest.starts_with('<') {
                children.push(self.element()?);
                continue;
            }
            let end = self
                .rest
                .find('<')
                .ok_or_else(|| format!("<{name}> never closed"))?;
            text.push_str(&unescape(&self.rest[..end])?);
            self.rest = &self.rest[end..];
        }
    }
}

fn unescape(raw: &str) -> Result<String, String> {
    if raw.contains('<') {
        return Err(format!("raw < in {raw:?}"));
    }
    let mut out = String::new();
    let mut rest = raw;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(';').ok_or("unterminated reference")? + at;
        let reference = &rest[at + 1..end];
        let c = match reference {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            numeric if numeric.starts_with('#') => numeric[1..]
                .parse::<u32>()
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| format!("bad reference &{numeric};"))?,
            other => return Err(format!("unknown reference &{other};")),
        };
        out.push(c);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn head(text: &str) -> String {
    text.chars().take(30).collect()
}

fn record(model: &str, case: &str, repeat: u32, failure: Option<&str>) -> RunRecord {
    let failures: Vec<CheckFailure> = failure
        .map(|message| CheckFailure {
            kind: CheckKind::Output,
            code: "output".into(),
            message: message.into(),
        })
        .into_iter()
        .collect();
    RunRecord {
        model: model.into(),
        case: case.into(),
        repeat,
        passed: failures.is_empty(),
        failures,
        expectations: Vec::new(),
        judge_ms: None,
        observation: Observation {
            outcome: RunOutcome::Succeeded,
            data: Some(json!({"total": 1})),
            tool_calls: vec!["calculator".into()],
            turns: Some(2),
            repairs: 0,
            tokens: None,
            cost: None,
            latency_ms: 1500,
            events_truncated: false,
            files: Vec::new(),
        },
    }
}

fn report(records: Vec<RunRecord>) -> EvalReport {
    let case = |name: &str| crate::eval::EvalCase {
        id: name.into(),
        name: name.into(),
        arguments: Default::default(),
        expected_output: None,
        assertions: vec!["judged by a human".into()],
        checks: Vec::new(),
    };
    let plan = EvalPlan {
        skill: "demo <&> skill".into(),
        cases: vec![case("ok"), case("bad \"one\"")],
        repeat: 1,
        concurrency: 1,
        timeout_seconds: 0,
    };
    EvalReport::build(&plan, &["p/m1".into(), "p/m2".into()], records)
}

#[test]
fn junit_xml_is_well_formed_and_counts_every_run() {
    let nasty = "expected <b> & \"c\" 'd'\nnext line \u{1b}[31m (a terminal escape)";
    let report = report(vec![
        record("p/m1", "ok", 1, None),
        record("p/m1", "bad \"one\"", 1, Some(nasty)),
        record("p/m2", "ok", 1, None),
        record("p/m2", "bad \"one\"", 1, None),
    ]);
    let xml = write_junit(&report);
    let root = parse_xml(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    assert_eq!(root.name, "testsuites");
    assert_eq!(root.attribute("tests"), "4");
    assert_eq!(root.attribute("failures"), "1");
    assert_eq!(root.attribute("name"), "skillet eval demo <&> skill");
    assert_eq!(root.attribute("time"), "6.000");
    assert_eq!(root.children.len(), 2);
    let first = &root.children[0];
    assert_eq!(first.attribute("name"), "demo <&> skill on p/m1");
    assert_eq!(
        (first.attribute("tests"), first.attribute("failures")),
        ("2", "1")
    );
    let failed = &first.children[1];
    assert_eq!(failed.attribute("name"), "bad \"one\" #1");
    assert_eq!(failed.attribute("time"), "1.500");
    let failure = &failed.children[0];
    assert_eq!(failure.name, "failure");
    assert_eq!(failure.attribute("type"), "output");
    assert_eq!(
        failure.attribute("message"),
        nasty.replace('\u{1b}', "\u{FFFD}"),
        "newlines survive in attributes; the escape character is replaced"
    );
    assert!(
        failure.text.contains("tool calls: calculator"),
        "{}",
        failure.text
    );
    assert!(
        first.children[0].children.is_empty(),
        "a passed run has no failure"
    );
    assert_eq!(root.children[1].attribute("failures"), "0");
}

#[test]
fn the_test_parser_rejects_broken_xml() {
    let declaration = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    for broken in [
        "<a><b></a></b>",
        "<a x=\"1 & 2\"/>",
        "<a>1 < 2</a>",
        "<a>&bogus;</a>",
        "<a>",
    ] {
        assert!(
            parse_xml(&format!("{declaration}{broken}")).is_err(),
            "{broken}"
        );
    }
    assert!(parse_xml(&format!("{declaration}<a x=\"&lt;\">t&amp;t</a>")).is_ok());
}

#[test]
fn the_json_report_has_statistics_per_model_and_case_and_every_run() {
    let report = report(vec![
        record("p/m1", "ok", 1, None),
        record("p/m1", "bad \"one\"", 1, Some("no")),
    ]);
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["skill"], "demo <&> skill");
    assert_eq!(json["passed"], false);
    let m1 = &json["models"][0];
    assert_eq!(m1["model"], "p/m1");
    assert_eq!(m1["summary"]["runs"], 2);
    assert_eq!(m1["summary"]["passed"], 1);
    assert_eq!(m1["summary"]["failure_codes"]["output"], 1);
    assert_eq!(
        m1["summary"]["tokens"],
        serde_json::Value::Null,
        "unknown, not 0"
    );
    assert_eq!(m1["cases"][1]["case"], "bad \"one\"");
    assert_eq!(
        m1["cases"][1]["ungraded_assertions"][0],
        "judged by a human"
    );
    assert_eq!(m1["runs"][1]["failures"][0]["message"], "no");
    assert_eq!(m1["runs"][0]["observation"]["tool_calls"][0], "calculator");
    assert_eq!(json["models"][1]["summary"]["runs"], 0);
}

#[test]
fn the_table_shows_unknown_figures_as_a_dash_and_the_interval() {
    let report = report(vec![
        record("p/m1", "ok", 1, None),
        record("p/m1", "bad \"one\"", 1, Some("no")),
    ]);
    let table = crate::eval::render_table(&report.skill, &report.models[0]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        "demo <&> skill on p/m1: 2 cases × 1 repeat = 2 runs, 1 passed"
    );
    assert!(lines[1].starts_with("case") && lines[1].contains("pass rate (95% CI)"));
    let all = lines.last().unwrap();
    assert!(all.starts_with("all"), "{table}");
    assert!(all.contains("50% (9–91%)"), "{table}");
    assert!(all.contains("2/2"), "turns: {table}");
    assert!(all.contains("1500/1500 ms"), "{table}");
    assert!(all.contains("output×1"), "{table}");
    assert!(all.contains('—'), "unknown tokens and cost: {table}");
    let ok = lines.iter().find(|l| l.starts_with("ok ")).unwrap();
    assert!(ok.contains("100% (21–100%)"), "{table}");
}
