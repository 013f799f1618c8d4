//! The modes a server + model was negotiated down to, kept across processes: a small JSON file
//! under the user's cache directory, so a second `skillet run` against a server that refused a
//! mode does not send the refused request again.
//!
//! Off until the process calls [`enable_mode_cache`] (the `skillet` binary does; a library
//! embedding the providers, and every test in process, never touch the user's cache).
//! Where: `$SKILLET_MODE_CACHE` (a file path; `off` turns the cache off), else
//! `$XDG_CACHE_HOME/skillet/modes.json`, else `$HOME/.cache/skillet/modes.json`; no such
//! variable, no cache. Keyed by the provider kind, base URL (normalized at construction: never
//! credentials, query or fragment) and model; an entry is trusted for [`EXPIRY`], then learned
//! again. Read once per server + model per process (when `modes.rs` builds its cell), written
//! when a refusal is learned: the whole file is written to a temporary file in the same
//! directory and renamed over the old one, so a reader never sees half a file; two writers at
//! once may lose one's entry (it is learned again, one refused request).
//!
//! The file is outside input: read only up to [`MAX_FILE_BYTES`], every entry checked, an
//! entry or file that does not parse is ignored, never an error. Failing to write is logged at
//! debug level and changes nothing else.
//!
//! What is not here: which modes follow a refusal (`modes.rs`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::mode_names::{OutputMode, ToolMode};
use crate::modes::Modes;

/// The variable that relocates the cache file, or turns it off with `off`.
pub const MODE_CACHE_VAR: &str = "SKILLET_MODE_CACHE";

/// How long a learned mode is trusted.
pub(crate) const EXPIRY: Duration = Duration::from_secs(7 * 24 * 3600);

/// A larger file is not read (and is replaced on the next write).
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// At most this many servers + models are kept; the oldest go first.
const MAX_ENTRIES: usize = 256;

/// Which server + model an entry is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheKey {
    /// The provider kind's name.
    pub kind: &'static str,
    /// The normalized base URL.
    pub base_url: String,
    /// The model.
    pub model: String,
}

/// The file's shape.
#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    #[serde(default)]
    entries: Vec<serde_json::Value>,
}

/// One remembered server + model, as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    kind: String,
    base_url: String,
    model: String,
    output: String,
    tools: String,
    /// Unix seconds when the refusal was learned.
    learned_at: u64,
}

impl Entry {
    fn is(&self, key: &CacheKey) -> bool {
        self.kind == key.kind && self.base_url == key.base_url && self.model == key.model
    }

    fn fresh(&self, now: u64) -> bool {
        self.learned_at <= now && now - self.learned_at < EXPIRY.as_secs()
    }
}

/// Whether this process keeps learned modes in the cache file.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns the mode cache on for this process: providers built from now on start from the modes
/// the cache file remembers and write what they learn to it (unless `SKILLET_MODE_CACHE=off`).
pub fn enable_mode_cache() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// The cache file this process uses, from the environment; `None` when it is off.
pub(crate) fn location() -> Option<PathBuf> {
    if !ENABLED.load(Ordering::Relaxed) {
        return None;
    }
    location_from(&|name| std::env::var_os(name).filter(|v| !v.is_empty()))
}

fn location_from(var: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    if let Some(path) = var(MODE_CACHE_VAR) {
        return (path != "off").then(|| PathBuf::from(path));
    }
    let dir = match var("XDG_CACHE_HOME") {
        Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
        _ => PathBuf::from(var("HOME")?).join(".cache"),
    };
    Some(dir.join("skillet").join("modes.json"))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The file's entries that parse; none when it is missing, too large or not this shape.
fn read_entries(path: &Path) -> Vec<Entry> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut text = Vec::new();
    if file
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut text)
        .is_err()
        || text.len() as u64 > MAX_FILE_BYTES
    {
        return Vec::new();
    }
    let Ok(file) = serde_json::from_slice::<CacheFile>(&text) else {
        return Vec::new();
    };
    file.entries
        .into_iter()
        .filter_map(|v| serde_json::from_value::<Entry>(v).ok())
        .collect()
}

/// The modes remembered for `key` in the file at `path`, if fresh and all known.
pub(crate) fn load(path: &Path, key: &CacheKey) -> Option<Modes> {
    let now = now_secs();
    let entry = read_entries(path)
        .into_iter()
        .find(|e| e.is(key) && e.fresh(now))?;
    Some(Modes {
        output: OutputMode::parse(&entry.output).filter(|m| *m != OutputMode::Auto)?,
        tools: ToolMode::parse(&entry.tools).filter(|m| *m != ToolMode::Auto)?,
    })
}

/// Remembers `modes` for `key` in the file at `path`; a failure is logged, nothing more.
pub(crate) fn store(path: &Path, key: &CacheKey, modes: Modes) {
    if let Err(error) = try_store(path, key, modes) {
        tracing::debug!(
            path = %path.display(),
            %error,
            "the learned structured-output mode could not be written to the mode cache"
        );
    }
}

fn try_store(path: &Path, key: &CacheKey, modes: Modes) -> std::io::Result<()> {
    let now = now_secs();
    let mut entries: Vec<Entry> = read_entries(path)
        .into_iter()
        .filter(|e| !e.is(key) && e.fresh(now))
        .collect();
    entries.push(Entry {
        kind: key.kind.to_owned(),
        base_url: key.base_url.clone(),
        model: key.model.clone(),
        output: modes.output.as_str().to_owned(),
        tools: modes.tools.as_str().to_owned(),
        learned_at: now,
    });
    if entries.len() > MAX_ENTRIES {
        entries.sort_by_key(|e| std::cmp::Reverse(e.learned_at));
        entries.truncate(MAX_ENTRIES);
    }
    let file = CacheFile {
        entries: entries
            .into_iter()
            .filter_map(|e| serde_json::to_value(e).ok())
            .collect(),
    };
    let text = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let temp = dir.join(format!(
        ".modes.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&temp, text)?;
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    fn key(model: &str) -> CacheKey {
        CacheKey {
            kind: "openai-compatible",
            base_url: "http://127.0.0.1:8000/v1".into(),
            model: model.into(),
        }
    }

    const OBJECT: Modes = Modes {
        output: OutputMode::JsonObject,
        tools: ToolMode::Native,
    };

    #[test]
    fn a_stored_mode_is_loaded_for_its_server_and_model_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skillet/modes.json");
        store(&path, &key("gemma"), OBJECT);
        store(&path, &key("qwen"), OBJECT);
        assert_eq!(load(&path, &key("gemma")), Some(OBJECT));
        assert_eq!(load(&path, &key("qwen")), Some(OBJECT));
        assert_eq!(load(&path, &key("llama")), None);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("skillet"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            leftovers,
            [OsString::from("modes.json")],
            "no temp file left"
        );
    }

    #[test]
    fn an_expired_entry_is_learned_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("modes.json");
        let old = now_secs() - EXPIRY.as_secs() - 1;
        std::fs::write(
            &path,
            format!(
                r#"{{"entries": [{{"kind": "openai-compatible", "base_url": "http://127.0.0.1:8000/v1",
                   "model": "gemma", "output": "json_object", "tools": "native", "learned_at": {old}}}]}}"#
            ),
        )
        .unwrap();
        assert_eq!(load(&path, &key("gemma")), None);
    }

    #[test]
    fn a_corrupt_foreign_or_oversized_file_is_ignored_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("modes.json");
        for junk in [
            b"{not json".to_vec(),
            br#"["a list"]"#.to_vec(),
            br#"{"entries": [1, {"kind": 2}, {"kind": "openai-compatible", "base_url": "http://127.0.0.1:8000/v1", "model": "gemma", "output": "grammar", "tools": "native", "learned_at": 1}]}"#.to_vec(),
            vec![b' '; MAX_FILE_BYTES as usize + 1],
        ] {
            std::fs::write(&path, &junk).unwrap();
            assert_eq!(load(&path, &key("gemma")), None);
            store(&path, &key("gemma"), OBJECT);
            assert_eq!(load(&path, &key("gemma")), Some(OBJECT));
        }
    }

    #[test]
    fn the_location_follows_the_variable_then_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            location_from(&env(&[(MODE_CACHE_VAR, "/x/m.json"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/m.json"))
        );
        assert_eq!(location_from(&env(&[(MODE_CACHE_VAR, "off")])), None);
        assert_eq!(
            location_from(&env(&[("XDG_CACHE_HOME", "/c"), ("HOME", "/h")])),
            Some(PathBuf::from("/c/skillet/modes.json"))
        );
        assert_eq!(
            location_from(&env(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/skillet/modes.json"))
        );
        assert_eq!(location_from(&env(&[])), None);
    }
}
