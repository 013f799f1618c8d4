//! Skill files as MCP resources: `resources/list`, `resources/read` and
//! `resources/templates/list`, under the `skill://` scheme of the skills extension (SEP-2640).
//!
//! Each skill offered as a tool has its `SKILL.md` at `skill://NAME/SKILL.md` (name and
//! description from the skill, `text/markdown`) and every file beside it at
//! `skill://NAME/PATH` — the files the engine serves through [`ServedFolder`]: what the model's own
//! `list_skill_files` shows plus the schema assets, never `evals/`, hidden entries or a symlink
//! out, and read under exactly `read_skill_file`'s confinement. Path segments are
//! percent-encoded in URIs and decoded on read (so `%2e%2e` is `..`, and refused as such). A
//! file that is UTF-8 text is answered as `text`, any other as a base64 `blob`; a file over
//! [`MAX_RESOURCE_BYTES`] is refused, not cut. `resources/list` pages through all files,
//! [`PAGE`] at a time (the cursor is opaque to clients); `resources/templates/list` offers
//! [`SKILL_TEMPLATE`], which `completion` completes.
//!
//! Errors: a URI that is not `skill://NAME/PATH`, or a path the confinement refuses (`..`, an
//! absolute path, `evals/`, a symlink out, a pipe) is `-32602`; an unknown skill or a path
//! with no file is "resource not found" — `-32002` on a 2025-11-25 session, which rmcp turns
//! into `-32602` on 2026-07-28 as that revision specifies; a file over the cap is `-32602`.
//! `resources/read` is two halves, [`locate`] (the file and its size) and [`read`], between
//! which the handler takes room for the bytes from the session's `read_budget`.
//! Everything here reads the file system: call it off the async threads. Not here: the skills
//! extension's entries and digests (`skills_ext`), which skills a caller sees (`handler`).

use std::sync::Arc;

use base64::Engine as _;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use rmcp::model::{
    ErrorData, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};

use super::read_budget::{ReadBudget, ReadPermit};
use skillet_core::folder::{FolderError, SKILL_MD, ServedFolder, mime_for};
use skillet_core::service::SkillService;
use skillet_protocol::SkillDefinition;

/// The largest file served, in bytes: the skills extension's per-skill total (16 MiB), so any
/// skill within the extension's limits can be read whole.
pub(crate) const MAX_RESOURCE_BYTES: u64 = 16 * 1024 * 1024;
/// Most files served per skill (`SKILL.md` included): the skills extension's limit.
pub(crate) const MAX_SKILL_FILES: usize = 512;
/// Resources per `resources/list` page.
pub(crate) const PAGE: usize = 500;
/// The URI scheme of skill files.
const SCHEME: &str = "skill://";
/// The resource template of a skill's files.
pub(crate) const SKILL_TEMPLATE: &str = "skill://{skill}/{+path}";

/// What a path segment keeps unencoded: RFC 3986 unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The URI of the file `path` (relative, `/`-separated) of the skill `name`.
pub(crate) fn uri(name: &str, path: &str) -> String {
    let encoded: Vec<String> = path
        .split('/')
        .map(|segment| utf8_percent_encode(segment, SEGMENT).to_string())
        .collect();
    format!("{SCHEME}{name}/{}", encoded.join("/"))
}

/// A `skill://NAME/PATH` URI, decoded.
pub(crate) struct SkillUri {
    /// The skill's name.
    pub name: String,
    /// The file's path inside the skill folder, decoded.
    pub path: String,
}

/// Reads a `skill://NAME/PATH` URI; anything else is `-32602`.
pub(crate) fn parse_uri(uri: &str) -> Result<SkillUri, ErrorData> {
    let refuse = |why: &str| ErrorData::invalid_params(format!("{uri}: {why}"), None);
    let rest = uri
        .strip_prefix(SCHEME)
        .ok_or_else(|| refuse("not a skill:// URI"))?;
    if rest.contains(['?', '#']) {
        return Err(refuse("a skill file URI has no query or fragment"));
    }
    let (name, path) = rest
        .split_once('/')
        .ok_or_else(|| refuse("expected skill://NAME/PATH"))?;
    let path = percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| refuse("the path is not UTF-8 once decoded"))?;
    if name.is_empty() || path.is_empty() {
        return Err(refuse("expected skill://NAME/PATH"));
    }
    Ok(SkillUri {
        name: name.to_owned(),
        path: path.into_owned(),
    })
}

/// The folder of `name` when it is one of the published `skills` (else "resource not found").
pub(crate) fn folder_of(
    service: &dyn SkillService,
    skills: &[SkillDefinition],
    name: &str,
    uri: &str,
) -> Result<Arc<dyn ServedFolder>, ErrorData> {
    skills
        .iter()
        .any(|s| s.name == name)
        .then(|| service.skill_folder(name))
        .flatten()
        .ok_or_else(|| not_found(format!("no skill serves {uri}"), uri))
}

/// "Resource not found" (`-32002`; rmcp makes it `-32602` on 2026-07-28) with the URI in
/// `data.uri`, as the spec's example error has it.
pub(crate) fn not_found(message: String, uri: &str) -> ErrorData {
    ErrorData::resource_not_found(message, Some(serde_json::json!({ "uri": uri })))
}

/// The bytes of the file `path` of `folder`, with the right JSON-RPC error when refused.
pub(crate) fn read_bytes(
    folder: &dyn ServedFolder,
    path: &str,
    uri: &str,
) -> Result<Vec<u8>, ErrorData> {
    folder
        .read(path, MAX_RESOURCE_BYTES)
        .map_err(|error| match error {
            FolderError::NotFound(_) => not_found(format!("no file at {uri}"), uri),
            FolderError::Refused(_) | FolderError::TooLarge { .. } => {
                ErrorData::invalid_params(format!("{uri}: {error}"), None)
            }
            FolderError::Io(_) => ErrorData::internal_error(format!("{uri}: {error}"), None),
        })
}

/// A file `resources/read` names, found but not read yet.
pub(crate) struct Located {
    uri: String,
    path: String,
    folder: Arc<dyn ServedFolder>,
    /// Its size now, for the read budget (`0` when it cannot be known before the read, which
    /// then refuses it or counts what it got).
    pub size: u64,
}

/// The first half of `resources/read`: the file `uri` names among the published `skills`,
/// and its size.
pub(crate) fn locate(
    service: &dyn SkillService,
    skills: &[SkillDefinition],
    uri: &str,
) -> Result<Located, ErrorData> {
    let target = parse_uri(uri)?;
    let folder = folder_of(service, skills, &target.name, uri)?;
    // Sized only inside the folder: a path the read will refuse tells nothing through it.
    let plain =
        !target.path.starts_with('/') && !target.path.split('/').any(|s| s.is_empty() || s == "..");
    let size = plain
        .then(|| std::fs::metadata(folder.dir().join(&target.path)).ok())
        .flatten()
        .map_or(0, |m| m.len().min(MAX_RESOURCE_BYTES));
    Ok(Located {
        uri: uri.to_owned(),
        path: target.path,
        folder,
        size,
    })
}

/// The second half of `resources/read`: the file's contents, text or blob; a file that grew
/// past its size since [`locate`] takes the rest of the room from `budget` now (or is
/// refused), and that room is returned with the result.
pub(crate) fn read(
    located: Located,
    budget: &ReadBudget,
) -> Result<(ReadResourceResult, Option<ReadPermit>), ErrorData> {
    let Located {
        uri,
        path,
        folder,
        size,
    } = located;
    let bytes = read_bytes(folder.as_ref(), &path, &uri)?;
    let grown = bytes.len() as u64 > size + 1024;
    let more = grown
        .then(|| budget.try_reserve(bytes.len() as u64 - size))
        .transpose()?;
    let contents = match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => ResourceContents::TextResourceContents {
            uri: uri.clone(),
            mime_type: Some(mime_for(&path, true).to_owned()),
            text,
            meta: None,
        },
        Ok(text) => blob(&uri, &path, text.as_bytes()),
        Err(not_text) => blob(&uri, &path, not_text.as_bytes()),
    };
    Ok((ReadResourceResult::new(vec![contents]), more))
}

fn blob(uri: &str, path: &str, bytes: &[u8]) -> ResourceContents {
    ResourceContents::BlobResourceContents {
        uri: uri.to_owned(),
        mime_type: Some(mime_for(path, false).to_owned()),
        blob: base64::engine::general_purpose::STANDARD.encode(bytes),
        meta: None,
    }
}

/// `resources/list`: every file of every published skill, a page at a time.
pub(crate) fn list(
    service: &dyn SkillService,
    skills: &[SkillDefinition],
    request: Option<&PaginatedRequestParams>,
) -> Result<ListResourcesResult, ErrorData> {
    let start = cursor(request)?;
    let mut all = Vec::new();
    for skill in skills {
        let Some(folder) = service.skill_folder(&skill.name) else {
            continue;
        };
        for file in folder.list(MAX_SKILL_FILES).files {
            let resource = if file.path == SKILL_MD {
                Resource::new(uri(&skill.name, &file.path), skill.name.clone())
                    .with_description(skill.description.clone())
                    .with_mime_type("text/markdown")
            } else {
                Resource::new(uri(&skill.name, &file.path), file.path.clone())
                    .with_mime_type(mime_for(&file.path, false))
            };
            all.push(resource.with_size(file.size));
        }
    }
    let page: Vec<Resource> = all.iter().skip(start).take(PAGE).cloned().collect();
    let mut result = ListResourcesResult::with_all_items(page);
    if start + PAGE < all.len() {
        result.next_cursor = Some((start + PAGE).to_string());
    }
    Ok(result)
}

/// The position a list request's cursor names (`0` without one); a cursor this server did not
/// hand out is `-32602`.
pub(crate) fn cursor(request: Option<&PaginatedRequestParams>) -> Result<usize, ErrorData> {
    match request.and_then(|r| r.cursor.as_deref()) {
        None => Ok(0),
        Some(cursor) => cursor
            .parse()
            .map_err(|_| ErrorData::invalid_params(format!("unknown cursor: {cursor}"), None)),
    }
}

/// `resources/templates/list`: the one template of skill files.
pub(crate) fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(SKILL_TEMPLATE, "skill-file")
            .with_title("A file of a skill")
            .with_description(
                "A file of a published skill: SKILL.md or a file beside it, e.g. \
                 skill://code-review/SKILL.md",
            ),
    ])
}

/// The paths of a folder's files (for completion).
pub(crate) fn file_paths(folder: &dyn ServedFolder) -> Vec<String> {
    folder
        .list(MAX_SKILL_FILES)
        .files
        .into_iter()
        .map(|f| f.path)
        .collect()
}

/// Runs `work` (which reads the file system) on the blocking pool.
pub(crate) async fn off_thread<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ErrorData> + Send + 'static,
) -> Result<T, ErrorData> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|_| Err(ErrorData::internal_error("the read did not finish", None)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_encode_segments_and_decode_back() {
        let uri = uri("s", "docs/a b%.md");
        assert_eq!(uri, "skill://s/docs/a%20b%25.md");
        let parsed = parse_uri(&uri).unwrap();
        assert_eq!(
            (parsed.name.as_str(), parsed.path.as_str()),
            ("s", "docs/a b%.md")
        );
        assert_eq!(parse_uri("skill://s/%2e%2e/x").unwrap().path, "../x");
        for bad in [
            "file:///etc/passwd",
            "skill://s",
            "skill:///x",
            "skill://s/",
            "skill://s/a?b",
        ] {
            assert_eq!(
                parse_uri(bad).err().map(|e| e.code),
                Some(rmcp::model::ErrorCode::INVALID_PARAMS),
                "{bad}"
            );
        }
    }
}
