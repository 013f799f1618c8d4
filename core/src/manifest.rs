//! The `SKILL.md` format's outer shape, shared by the engine's loader and the hosts that serve a
//! skill's files: where the YAML frontmatter ends and the body begins, the YAML options and
//! size cap it is read with, and the frontmatter as the author wrote it.
//!
//! Not here: what the frontmatter's keys mean and the checks on them (the engine's
//! `skill::frontmatter`).

use serde_json::{Map, Value};

/// The largest frontmatter read, in bytes.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// The frontmatter of SKILL.md `text` as written, as one JSON object (every key the author
/// wrote, nothing checked or added): what the MCP skills extension publishes as a skill's
/// `frontmatter`. Parsed with the loader's YAML options and size cap.
pub fn frontmatter_object(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (yaml, _, _) = split(text).ok_or("SKILL.md has no `---` frontmatter")?;
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(format!(
            "the frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes"
        ));
    }
    if yaml.trim().is_empty() {
        return Ok(Map::new());
    }
    serde_saphyr::from_str_with_options(yaml, yaml_options()).map_err(|e| yaml_reason(&e))
}

/// SKILL.md `text` split into `(yaml, body, body_line)`; the first line must be `---`, the frontmatter ends at the next
/// line that is `---` (or YAML's `...`).
pub fn split(text: &str) -> Option<(&str, &str, usize)> {
    let first_end = text.find('\n')?;
    if text[..first_end].trim_end() != "---" {
        return None;
    }
    let yaml_start = first_end + 1;
    let mut offset = yaml_start;
    // The YAML starts on line 2; the body starts on the line after the closing delimiter.
    for (index, raw_line) in text[yaml_start..].split_inclusive('\n').enumerate() {
        let trimmed = raw_line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            let yaml = &text[yaml_start..offset];
            let body = &text[offset + raw_line.len()..];
            return Some((yaml, body, index + 3));
        }
        offset += raw_line.len();
    }
    None
}

/// The YAML options every SKILL.md frontmatter is read with: strict booleans, and budgets that
/// bound what a hostile file can make the parser do.
pub fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        strict_booleans: true,
        budget: serde_saphyr::budget! {
            max_events: 100_000,
            max_aliases: 100,
            max_anchors: 100,
        },
    }
}

/// A YAML error as the one line an author reads.
pub fn yaml_reason(e: &serde_saphyr::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("invalid YAML");
    format!("invalid YAML frontmatter: {first}")
}
