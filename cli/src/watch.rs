//! `skillet serve --watch` (and `[skills] watch = true`): hot reload of the skills
//! directories.
//!
//! Each skills root is watched recursively (`notify`: inotify on Linux). Events are gathered
//! until the root has been quiet for [`DEBOUNCE`] (an editor's save is several events: a temp
//! file, a rename, a chmod), then every root that had one is loaded again into a *staging*
//! registry, judged there exactly as at start-up (dependencies, the skill-provider policy,
//! script environments — built first if a new skill needs one), and handed to the served
//! registry in one swap (`Registry::reload_root`): added skills appear, edited ones are
//! replaced, removed ones go, and a folder that no longer loads keeps its last version
//! `Blocked` with `load_failed` (its problems are logged) while the other skills run on. A
//! call in flight finishes on the definition it started with.
//!
//! The skills the reload touched are announced on the host's `SkillChanges` feed, so MCP
//! sessions hear `list_changed` and `resources/updated`; A2E discover and the A2A Agent Card
//! read the registry per request and are current by construction. A failure to watch is a
//! warning: the server serves on without reload.
//!
//! Not here: what a reload swaps (`skillet_engine::skill::reload`), what the doors send.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use skillet_engine::skill::{self, ManifestError, Registry};
use skillet_host::SkillChanges;
use tokio::sync::Notify;

use crate::config::{Config, ProviderChoice};
use crate::setup::{self, Console, HostParts};
use skillet_engine::files::FileSupport;
use skillet_engine::tools::ToolRegistry;

/// How long a root must be quiet before it is reloaded.
pub const DEBOUNCE: Duration = Duration::from_millis(200);
/// Distinct changed paths remembered between reloads; past it, every root is reloaded.
const MAX_PENDING_PATHS: usize = 10_000;

/// The paths changed since the last reload.
#[derive(Debug, Default)]
struct Pending {
    paths: BTreeSet<PathBuf>,
    overflow: bool,
}

/// Keeps the watch alive: dropping it stops watching (the reload task ends with the runtime).
pub struct SkillWatch {
    _watcher: notify::RecommendedWatcher,
}

impl std::fmt::Debug for SkillWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SkillWatch")
    }
}

/// Starts watching `roots` when `enabled`, reloading into `parts.skills` and announcing on
/// `changes`. `None` when not enabled or when the watch could not start (warned).
pub fn start(
    enabled: bool,
    roots: Vec<PathBuf>,
    parts: &HostParts,
    changes: SkillChanges,
    console: Console,
) -> Option<SkillWatch> {
    if !enabled {
        return None;
    }
    let pending = Arc::new(Mutex::new(Pending::default()));
    let wake = Arc::new(Notify::new());
    let (sink, notifier) = (Arc::clone(&pending), Arc::clone(&wake));
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let mut pending = sink.lock().unwrap_or_else(PoisonError::into_inner);
        match event {
            // Reading a file is not changing it: the reload's own reads (and an editor's, or a
            // running script's) would otherwise start another reload, forever.
            Ok(event) if !changes_content(&event.kind) => return,
            Ok(event) => {
                for path in event.paths {
                    if pending.paths.len() < MAX_PENDING_PATHS {
                        pending.paths.insert(path);
                    } else {
                        pending.overflow = true;
                    }
                }
            }
            // The kernel dropped events (queue overflow): reload everything.
            Err(_) => pending.overflow = true,
        }
        drop(pending);
        notifier.notify_one();
    });
    let mut watcher = match watcher {
        Ok(watcher) => watcher,
        Err(e) => {
            console.warn(format!("--watch: cannot watch the skills directories: {e}"));
            return None;
        }
    };
    let mut watched = Vec::new();
    for root in roots {
        let root = WatchedRoot::new(root);
        match watcher.watch(&root.absolute, RecursiveMode::Recursive) {
            Ok(()) => watched.push(root),
            Err(e) => console.warn(format!(
                "--watch: cannot watch {}: {e}",
                root.given.display()
            )),
        }
    }
    if watched.is_empty() {
        return None;
    }
    console.notice(format!(
        "watching {} for skill changes",
        watched
            .iter()
            .map(|root| root.given.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let reloader = Reloader::new(parts, watched, changes, console);
    tokio::spawn(async move {
        loop {
            wake.notified().await;
            // Debounce: wait until nothing arrived for DEBOUNCE.
            while tokio::time::timeout(DEBOUNCE, wake.notified())
                .await
                .is_ok()
            {}
            let batch =
                std::mem::take(&mut *pending.lock().unwrap_or_else(PoisonError::into_inner));
            reloader.reload(batch).await;
        }
    });
    Some(SkillWatch { _watcher: watcher })
}

/// Whether an event of `kind` can mean a skill changed. Opening, reading and closing a file
/// unwritten (`Access`) cannot; neither can an access-time update.
fn changes_content(kind: &notify::EventKind) -> bool {
    use notify::EventKind;
    use notify::event::{MetadataKind, ModifyKind};
    !matches!(
        kind,
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime))
    )
}

/// A skills root as the registry knows it (`given`, perhaps relative: `./skills`) and as the
/// watcher reports its paths (`absolute`): events always carry absolute paths, so a relative
/// root would match none of them.
#[derive(Debug, Clone)]
struct WatchedRoot {
    given: PathBuf,
    absolute: PathBuf,
}

impl WatchedRoot {
    fn new(given: PathBuf) -> Self {
        let absolute = std::fs::canonicalize(&given)
            .or_else(|_| std::path::absolute(&given))
            .unwrap_or_else(|_| given.clone());
        WatchedRoot { given, absolute }
    }
}

/// What a reload needs of the host, owned so it can outlive `serve`'s borrows.
struct Reloader {
    roots: Vec<WatchedRoot>,
    skills: Arc<Registry>,
    tools: Arc<ToolRegistry>,
    config: Config,
    choice: ProviderChoice,
    files: FileSupport,
    changes: SkillChanges,
    console: Console,
}

impl Reloader {
    fn new(
        parts: &HostParts,
        roots: Vec<WatchedRoot>,
        changes: SkillChanges,
        console: Console,
    ) -> Self {
        Reloader {
            roots,
            skills: Arc::clone(&parts.skills),
            tools: Arc::clone(&parts.tools),
            config: parts.config.clone(),
            choice: parts.choice.clone(),
            files: parts.files.clone(),
            changes,
            console,
        }
    }

    /// Reloads every root `batch` touched and announces what changed.
    async fn reload(&self, batch: Pending) {
        let mut announced = BTreeSet::new();
        for WatchedRoot {
            given: root,
            absolute,
        } in &self.roots
        {
            let touched = touched_folders(absolute, &batch);
            if touched.is_empty() && !batch.overflow {
                continue;
            }
            let report = {
                let root = root.clone();
                tokio::task::spawn_blocking(move || {
                    skill::load_skills_root(&root, skill::SkillSource::Project)
                })
                .await
                .unwrap_or_default()
            };
            let failed = failed_folders(root, &report.errors);
            for problem in &report.errors {
                self.console.warn(format!("reload: {problem}"));
            }
            let staging = Arc::new(Registry::new());
            for refused in staging.register_all(report.skills) {
                self.console.warn(format!("reload: {refused}"));
            }
            setup::judge_skills(
                &staging,
                &self.tools,
                &self.config,
                &self.choice,
                &self.files,
            );
            setup::prepare_missing_environments(&staging, &self.files, self.console).await;
            let changed = self.skills.reload_root(root, &staging, &failed);
            for refused in &changed.refused {
                self.console.warn(format!("reload: {refused}"));
            }
            for name in &changed.failed {
                self.console.warn(format!(
                    "reload: skill `{name}` no longer loads; keeping its last version, Blocked"
                ));
            }
            let folder_of = |name: &String| absolute.join(name);
            let edited = changed
                .replaced
                .iter()
                .filter(|name| batch.overflow || touched.contains(&folder_of(name)));
            let names: Vec<String> = changed
                .added
                .iter()
                .chain(&changed.removed)
                .chain(&changed.failed)
                .chain(edited)
                .cloned()
                .collect();
            if !names.is_empty() {
                self.console.notice(format!(
                    "reloaded {}: added [{}], changed [{}], removed [{}]",
                    root.display(),
                    changed.added.join(", "),
                    names
                        .iter()
                        .filter(|n| !changed.added.contains(n) && !changed.removed.contains(n))
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", "),
                    changed.removed.join(", "),
                ));
            }
            announced.extend(names);
        }
        self.changes.announce(announced.into_iter().collect());
    }
}

/// The skill folders of `root` (its immediate subdirectories) that `batch` changed something
/// in.
fn touched_folders(root: &Path, batch: &Pending) -> BTreeSet<PathBuf> {
    batch
        .paths
        .iter()
        .filter_map(|path| folder_in(root, path))
        .collect()
}

/// The skill folder of `root` that `path` is in or is.
fn folder_in(root: &Path, path: &Path) -> Option<PathBuf> {
    let rest = path.strip_prefix(root).ok()?;
    rest.components().next().map(|first| root.join(first))
}

/// Each skill folder of `root` that did not load, with its first error.
fn failed_folders(root: &Path, errors: &[ManifestError]) -> BTreeMap<PathBuf, String> {
    let mut failed = BTreeMap::new();
    for problem in errors.iter().filter(|p| p.is_error()) {
        if let Some(folder) = folder_in(root, &problem.file) {
            failed.entry(folder).or_insert_with(|| problem.to_string());
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_path_names_its_skill_folder_and_nothing_outside_the_root() {
        let root = Path::new("/srv/skills");
        assert_eq!(
            folder_in(root, Path::new("/srv/skills/alpha/docs/a.md")),
            Some(PathBuf::from("/srv/skills/alpha"))
        );
        assert_eq!(
            folder_in(root, Path::new("/srv/skills/alpha")),
            Some(PathBuf::from("/srv/skills/alpha"))
        );
        assert_eq!(folder_in(root, Path::new("/srv/skills")), None);
        assert_eq!(folder_in(root, Path::new("/srv/other/alpha")), None);
    }
}
