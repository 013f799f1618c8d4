//! The MCP skills extension (`io.modelcontextprotocol/skills`, SEP-2640): `skills/list` and
//! `skills/get`, for hosts that run skills themselves (fast-agent, FastMCP clients).
//!
//! A skill's entry is built from its folder as it is now, from the same bytes `resources/read`
//! serves (`resources`): `uri` is `skill://NAME/SKILL.md`, `frontmatter` the YAML frontmatter
//! of that `SKILL.md` as written (every key, as JSON), and `resources` the complete manifest —
//! `SKILL.md` and every file served, each with its size and `sha256:` digest. A skill over the
//! extension's limits ([`MAX_SKILL_FILES`] files, 16 MiB in all, or a listing cut at the depth
//! limit) is not served over the extension (the spec's SHOULD NOT): it is left out of
//! `skills/list` (with a warning in the log) and `skills/get` answers why; its files stay
//! readable as resources. `skills/list` pages [`SKILLS_PAGE`] entries at a time.
//! `resources/directory/read` is not offered (`directoryRead` is not declared).
//!
//! Errors: `skills/get` for a URI that is not a published skill's `SKILL.md` is `-32602`, as
//! the extension specifies. Reads the file system: call it off the async threads.

use rmcp::model::{
    ErrorCode, ErrorData, GetSkillResult, ListSkillsResult, PaginatedRequestParams, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};

use super::resources::{MAX_SKILL_FILES, cursor, folder_of, parse_uri, read_bytes, uri};
use skillet_core::folder::SKILL_MD;
use skillet_core::service::SkillService;
use skillet_protocol::SkillDefinition;

/// Entries per `skills/list` page.
pub(crate) const SKILLS_PAGE: usize = 100;
/// The extension's cap on the bytes of one skill.
const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// `skills/list`: the entries of the published skills that have a folder, a page at a time.
pub(crate) fn list(
    service: &dyn SkillService,
    skills: &[SkillDefinition],
    request: Option<&PaginatedRequestParams>,
) -> Result<ListSkillsResult, ErrorData> {
    let start = cursor(request)?;
    let served: Vec<&SkillDefinition> = skills
        .iter()
        .filter(|s| service.skill_folder(&s.name).is_some())
        .collect();
    let mut entries = Vec::new();
    for skill in served.iter().skip(start).take(SKILLS_PAGE) {
        match entry(service, skills, &skill.name) {
            Ok(entry) => entries.push(entry),
            Err(why) => {
                tracing::warn!(skill = %skill.name, reason = %why.message, "not listed in skills/list");
            }
        }
    }
    let mut result = ListSkillsResult::with_all_items(entries);
    if start + SKILLS_PAGE < served.len() {
        result.next_cursor = Some((start + SKILLS_PAGE).to_string());
    }
    Ok(result)
}

/// `skills/get`: the entry of the skill whose `SKILL.md` is at `skill_uri`.
pub(crate) fn get(
    service: &dyn SkillService,
    skills: &[SkillDefinition],
    skill_uri: &str,
) -> Result<GetSkillResult, ErrorData> {
    let not_served = |why: Option<String>| {
        let message = match why {
            Some(why) => format!("No skill is served at {skill_uri}: {why}"),
            None => format!("No skill is served at {skill_uri}"),
        };
        ErrorData::invalid_params(message, Some(serde_json::json!({ "uri": skill_uri })))
    };
    let target = parse_uri(skill_uri).map_err(|e| not_served(Some(e.message.into_owned())))?;
    if target.path != SKILL_MD || uri(&target.name, SKILL_MD) != skill_uri {
        return Err(not_served(Some(misplaced(&target.name, &target.path))));
    }
    entry(service, skills, &target.name)
        .map(GetSkillResult::new)
        .map_err(|e| {
            // An unknown skill needs no reason; one over the limits says which.
            (e.code != ErrorCode::RESOURCE_NOT_FOUND).then(|| e.message.into_owned())
        })
        .map_err(not_served)
}

/// Why `skill://NAME/PATH` is not a skill's URI although it got past rmcp's check (it ends in
/// `/SKILL.md`): a `SKILL.md` further down the folder (skills here are not nested), or the
/// right file under a URI spelled otherwise than the server spells it.
fn misplaced(name: &str, path: &str) -> String {
    let canonical = uri(name, SKILL_MD);
    if path == SKILL_MD {
        format!("the skill's URI is spelled {canonical}")
    } else {
        format!(
            "skills are not nested here: this is a file of the skill {name}, whose URI is \
             {canonical}"
        )
    }
}

/// The entry of the published skill `name`, or why it is not served over the extension.
fn entry(
    service: &dyn SkillService,
    skills: &[SkillDefinition],
    name: &str,
) -> Result<Skill, ErrorData> {
    let skill_uri = uri(name, SKILL_MD);
    let folder = folder_of(service, skills, name, &skill_uri)?;
    let listing = folder.list(MAX_SKILL_FILES);
    let over = |why: String| ErrorData::invalid_params(why, None);
    if listing.cut {
        return Err(over(format!(
            "the skill has more than {MAX_SKILL_FILES} files or folders deeper than the \
             listing goes"
        )));
    }
    let mut manifest = Vec::with_capacity(listing.files.len());
    let mut frontmatter = None;
    let mut total = 0u64;
    for file in &listing.files {
        let file_uri = uri(name, &file.path);
        let bytes = read_bytes(folder.as_ref(), &file.path, &file_uri)?;
        total += bytes.len() as u64;
        if total > MAX_SKILL_BYTES {
            return Err(over(format!(
                "the skill's files are more than {MAX_SKILL_BYTES} bytes"
            )));
        }
        if file.path == SKILL_MD {
            frontmatter = Some(frontmatter_of(&bytes)?);
        }
        manifest.push(SkillResource::from_bytes(file_uri, &bytes));
    }
    let frontmatter = frontmatter.ok_or_else(|| over(format!("{SKILL_MD} is missing")))?;
    let skill = Skill::new(skill_uri, frontmatter, SkillResources::Files(manifest));
    skill
        .validate()
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(skill)
}

/// The frontmatter of `SKILL.md` bytes, verbatim.
fn frontmatter_of(bytes: &[u8]) -> Result<SkillFrontmatter, ErrorData> {
    let broken = |why: String| ErrorData::internal_error(format!("{SKILL_MD}: {why}"), None);
    let text = std::str::from_utf8(bytes).map_err(|_| broken("not UTF-8".into()))?;
    let object = skillet_core::manifest::frontmatter_object(text).map_err(broken)?;
    serde_json::from_value(serde_json::Value::Object(object))
        .map_err(|e| broken(format!("no string `name` and `description`: {e}")))
}
