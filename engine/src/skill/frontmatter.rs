//! SKILL.md → frontmatter fields + body: the Agent Skills part of the format.
//!
//! Splits the file at its `---` delimiters, parses the YAML with `serde-saphyr` (strict booleans,
//! duplicate keys rejected, budgets against alias bombs), keeps every value's line/column, and
//! checks the Agent Skills fields (`name`, `description`, `license`, `compatibility`,
//! `allowed-tools`, `metadata`). Unknown top-level keys are warnings. What the `metadata` keys
//! *mean* (`a2a-*`, `a2e-*`) is decided in `keys`.

use std::fmt;
use std::path::Path;
use std::sync::LazyLock;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_saphyr::Spanned;

use super::error::ManifestError;
use skillet_core::manifest::{MAX_FRONTMATTER_BYTES, split, yaml_options, yaml_reason};

/// A frontmatter value and where it is in SKILL.md (1-based, absolute).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub value: Value,
    pub line: usize,
    pub column: usize,
}

/// The Agent Skills frontmatter of one SKILL.md, checked, plus its body.
#[derive(Debug, Clone)]
pub(crate) struct Frontmatter {
    pub name: String,
    pub description: String,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub allowed_tools: Vec<String>,
    /// `metadata` entries in file order.
    pub metadata: Vec<(String, Entry)>,
    /// Top-level keys the Agent Skills spec does not define (already reported as warnings).
    pub extra: Vec<(String, Entry)>,
    pub body: String,
    /// 1-based line of SKILL.md where the body starts.
    pub body_line: usize,
}

/// Largest frontmatter accepted (the YAML part), in bytes.
const MAX_DESCRIPTION_CHARS: usize = 1024;
const MAX_COMPATIBILITY_CHARS: usize = 500;
const MAX_NAME_CHARS: usize = 64;

static NAME: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"^[a-z0-9]+(-[a-z0-9]+)*$").expect("name regex is valid"));

/// Parses SKILL.md text. Problems (errors and warnings) go to `problems`; `None` when the
/// frontmatter cannot be used at all.
pub(crate) fn parse(
    file: &Path,
    text: &str,
    dir_name: &str,
    problems: &mut Vec<ManifestError>,
) -> Option<Frontmatter> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some((yaml, body, body_line)) = split(text) else {
        problems.push(
            ManifestError::error(
                file,
                "SKILL.md",
                "missing frontmatter delimiters: SKILL.md must start with a `---` line and the \
                 YAML frontmatter must end with a `---` line",
            )
            .at(1, 1),
        );
        return None;
    };
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        problems.push(ManifestError::error(
            file,
            "frontmatter",
            format!("frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes"),
        ));
        return None;
    }
    let raw = match parse_yaml(yaml) {
        Ok(raw) => raw,
        Err(e) => {
            let mut err = ManifestError::error(file, "frontmatter", yaml_reason(&e));
            if let Some(loc) = e.location() {
                err = err.at(loc.line() as usize + 1, loc.column() as usize);
            }
            problems.push(err);
            return None;
        }
    };
    check(file, raw, dir_name, body.to_owned(), body_line, problems)
}

/// Top-level frontmatter with positions; `metadata` keeps a position per key.
struct RawFrontmatter {
    top: Vec<(String, Entry)>,
    metadata: Option<Vec<(String, Entry)>>,
}

fn parse_yaml(yaml: &str) -> Result<RawFrontmatter, serde_saphyr::Error> {
    if yaml.trim().is_empty() {
        return Ok(RawFrontmatter {
            top: Vec::new(),
            metadata: None,
        });
    }
    let raw: RawFrontmatter = serde_saphyr::from_str_with_options(yaml, yaml_options())?;
    Ok(raw)
}

/// Frontmatter YAML starts on line 2 of SKILL.md.
fn entry(spanned: Spanned<Value>) -> Entry {
    Entry {
        value: spanned.value,
        line: spanned.referenced.line() as usize + 1,
        column: spanned.referenced.column() as usize,
    }
}

struct MetadataMap(Vec<(String, Entry)>);

impl<'de> Deserialize<'de> for MetadataMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MetadataMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of string keys to string values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetadataMap, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    out.push((key, entry(map.next_value::<Spanned<Value>>()?)));
                }
                Ok(MetadataMap(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for RawFrontmatter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawFrontmatter;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a YAML mapping (name, description, ...)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawFrontmatter, A::Error> {
                let mut top = Vec::new();
                let mut metadata = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "metadata" {
                        let m = map.next_value::<Option<MetadataMap>>()?;
                        metadata = Some(m.map(|mm| mm.0).unwrap_or_default());
                    } else {
                        top.push((key, entry(map.next_value::<Spanned<Value>>()?)));
                    }
                }
                Ok(RawFrontmatter { top, metadata })
            }
        }
        d.deserialize_map(V)
    }
}

fn check(
    file: &Path,
    raw: RawFrontmatter,
    dir_name: &str,
    body: String,
    body_line: usize,
    problems: &mut Vec<ManifestError>,
) -> Option<Frontmatter> {
    let before = problems.iter().filter(|p| p.is_error()).count();
    let mut name = None;
    let mut description = None;
    let mut license = None;
    let mut compatibility = None;
    let mut allowed_tools = Vec::new();
    let mut extra = Vec::new();
    for (key, e) in raw.top {
        let location = format!("frontmatter.{key}");
        let err =
            |reason: String| ManifestError::error(file, &location, reason).at(e.line, e.column);
        match key.as_str() {
            "name" => match e.value.as_str() {
                Some(n) => {
                    problems.extend(check_name(n, dir_name).into_iter().map(err));
                    name = Some(n.to_owned());
                }
                None => problems.push(err(format!("`name` must be a string, found {}", e.value))),
            },
            "description" => match e.value.as_str() {
                Some(d) if d.trim().is_empty() => {
                    problems.push(err("`description` is empty".into()))
                }
                Some(d) => {
                    // Published skills exceed the spec's limit (the public `claude-api` skill
                    // has 1,068 characters) and the hosts using them accept it: a warning, an
                    // error only under `validate --strict`.
                    if d.chars().count() > MAX_DESCRIPTION_CHARS {
                        problems.push(
                            ManifestError::warning(file, &location, format!(
                                "`description` is {} characters long; the Agent Skills maximum is \
                                 {MAX_DESCRIPTION_CHARS} (loaded anyway)",
                                d.chars().count()
                            ))
                            .at(e.line, e.column),
                        );
                    }
                    description = Some(d.to_owned());
                }
                None => problems.push(err(format!(
                    "`description` must be a string, found {}",
                    e.value
                ))),
            },
            "license" => match scalar_text(&e.value) {
                Some(l) => license = Some(l),
                None => problems.push(err("`license` must be a string".into())),
            },
            "compatibility" => match e.value.as_str() {
                Some(c) if c.chars().count() > MAX_COMPATIBILITY_CHARS => problems.push(err(
                    format!("`compatibility` is longer than {MAX_COMPATIBILITY_CHARS} characters"),
                )),
                Some(c) => compatibility = Some(c.to_owned()),
                None => problems.push(err("`compatibility` must be a string".into())),
            },
            "allowed-tools" => match &e.value {
                Value::String(s) => {
                    allowed_tools = s.split_whitespace().map(str::to_owned).collect()
                }
                Value::Array(items) if items.iter().all(Value::is_string) => {
                    allowed_tools = items
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect();
                }
                Value::Null => {}
                _ => problems.push(err(
                    "`allowed-tools` must be a space-separated string".into()
                )),
            },
            _ => {
                problems.push(
                    ManifestError::warning(
                        file,
                        &location,
                        format!("`{key}` is not an Agent Skills frontmatter field; ignored"),
                    )
                    .at(e.line, e.column),
                );
                extra.push((key, e));
            }
        }
    }
    if name.is_none() && !problems.iter().any(|p| p.location == "frontmatter.name") {
        problems
            .push(ManifestError::error(file, "frontmatter.name", "`name` is required").at(2, 1));
    }
    if description.is_none()
        && !problems
            .iter()
            .any(|p| p.location == "frontmatter.description")
    {
        problems.push(
            ManifestError::error(file, "frontmatter.description", "`description` is required")
                .at(2, 1),
        );
    }
    let metadata = raw.metadata.unwrap_or_default();
    if problems.iter().filter(|p| p.is_error()).count() > before {
        return None;
    }
    Some(Frontmatter {
        name: name?,
        description: description?,
        license,
        compatibility,
        allowed_tools,
        metadata,
        extra,
        body,
        body_line,
    })
}

/// Every reason `name` is not a valid Agent Skills name for directory `dir_name`.
pub(crate) fn check_name(name: &str, dir_name: &str) -> Vec<String> {
    let mut reasons = name_problems(name);
    if name != dir_name {
        reasons.push(format!(
            "`name` {name:?} must equal the directory name {dir_name:?}"
        ));
    }
    reasons
}

/// Every reason `name` is not a valid Agent Skills name, whatever its folder: 1 to 64 of
/// `a-z`, `0-9` and `-`, no leading, trailing or double `-` (empty: valid).
pub fn name_problems(name: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    let len = name.chars().count();
    if len == 0 || len > MAX_NAME_CHARS {
        reasons.push(format!(
            "`name` must be 1 to {MAX_NAME_CHARS} characters, found {len}"
        ));
    }
    if len > 0 && !NAME.is_match(name) {
        reasons.push(format!(
            "`name` {name:?} must be lowercase letters, digits and single hyphens \
             ([a-z0-9-], no leading, trailing or double `-`)"
        ));
    }
    reasons
}

/// A YAML scalar as text (`1.0` → "1.0", `true` → "true"); `None` for null, lists and maps.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
