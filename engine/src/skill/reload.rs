//! Hot reload: [`Registry::reload_root`] swaps the manifest skills of one skills root for a
//! freshly loaded set, in one snapshot swap, and says what changed ([`ReloadReport`]).
//!
//! The caller (the CLI's `serve --watch`) loads the root again into a *staging* [`Registry`],
//! judges it there exactly as at start-up (dependencies, provider settings, environments), and
//! hands it over: so a skill never shows, even for a moment, as `Published` before the host
//! judged it. Here, under the registry's write lock and calling no host code:
//! - a skill of the root that loaded is added or replaces the one of that name;
//! - a skill whose folder no longer loads (its path among `failed`) keeps its last version,
//!   `Blocked` with [`Blockers::load_failed`] (the reason), so discover reports it and the
//!   other skills run on;
//! - a skill of the root that is gone (folder or `SKILL.md` removed) is removed;
//! - skills of other roots, plugins and native skills are untouched, and a fresh skill whose
//!   name one of them holds is refused ([`RegistryError::Duplicate`]) as at start-up.
//!
//! A call in flight holds the [`RegisteredSkill`] it looked up (an `Arc`), so it finishes on
//! the definition it started with. Not here: watching the file system, loading, judging.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::blockers::Blockers;
use super::registry::{Implementation, RegisteredSkill, Registry, RegistryError};

/// What one [`Registry::reload_root`] changed, each list sorted by name.
#[derive(Debug, Default)]
pub struct ReloadReport {
    /// Skills that were not registered before.
    pub added: Vec<String>,
    /// Skills registered again from the fresh load (their definition may or may not differ).
    pub replaced: Vec<String>,
    /// Skills of the root that are gone.
    pub removed: Vec<String>,
    /// Skills kept at their last version, blocked, because their folder no longer loads.
    pub failed: Vec<String>,
    /// Fresh skills refused because another root, a plugin or the host holds the name.
    pub refused: Vec<RegistryError>,
}

impl ReloadReport {
    /// Every skill name the reload touched (added, replaced, removed or failed).
    pub fn touched(&self) -> Vec<String> {
        let mut names: Vec<String> = [&self.added, &self.replaced, &self.removed, &self.failed]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

impl Registry {
    /// Replaces the manifest skills loaded from `root` with those of `fresh` (a staging
    /// registry holding this root's new load, judged); `failed` maps each skill folder of the
    /// root that did not load to why. See the module doc.
    pub fn reload_root(
        &self,
        root: &Path,
        fresh: &Registry,
        failed: &BTreeMap<PathBuf, String>,
    ) -> ReloadReport {
        let fresh = fresh.skills();
        let mut report = ReloadReport::default();
        self.swap_snapshot(|snapshot| {
            let mut next = snapshot.clone();
            let ours: Vec<(String, Arc<RegisteredSkill>)> = snapshot
                .iter()
                .filter(|(_, skill)| is_from(skill, root))
                .map(|(name, skill)| (name.clone(), Arc::clone(skill)))
                .collect();
            for (name, old) in ours {
                let folder_failed = old.compiled.dir.as_deref().and_then(|dir| failed.get(dir));
                if let Some(why) = folder_failed {
                    let blockers = Blockers {
                        load_failed: Some(why.clone()),
                        ..old.blockers.clone()
                    };
                    next.insert(name.clone(), old.with_blockers(blockers));
                    report.failed.push(name);
                } else {
                    next.remove(&name);
                    if !fresh.iter().any(|skill| skill.compiled.name() == name) {
                        report.removed.push(name);
                    }
                }
            }
            for skill in fresh {
                let name = skill.compiled.name().to_owned();
                if let Some(holder) = next.get(&name) {
                    report.refused.push(RegistryError::Duplicate {
                        name,
                        existing: super::registry::origin(&holder.compiled),
                        refused: super::registry::origin(&skill.compiled),
                    });
                    continue;
                }
                if snapshot.contains_key(&name) {
                    report.replaced.push(name.clone());
                } else {
                    report.added.push(name.clone());
                }
                let unblocked = Blockers {
                    load_failed: None,
                    ..skill.blockers.clone()
                };
                next.insert(name, skill.with_blockers(unblocked));
            }
            next
        });
        report
    }
}

/// Whether `skill` is a SKILL.md skill loaded from a folder of `root`.
fn is_from(skill: &RegisteredSkill, root: &Path) -> bool {
    matches!(skill.implementation, Implementation::Manifest)
        && skill
            .compiled
            .dir
            .as_deref()
            .and_then(Path::parent)
            .is_some_and(|parent| parent == root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SkillStatus;
    use crate::skill::load_skills_root;

    fn write_skill(root: &Path, name: &str, description: &str) {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nDo {{{{ prompt }}}}.\n"),
        )
        .unwrap();
    }

    /// Loads `root` as the CLI's watcher does: good skills into a staging registry, each bad
    /// folder with its first problem.
    fn reload(registry: &Registry, root: &Path) -> ReloadReport {
        let report = load_skills_root(root, crate::skill::SkillSource::Project);
        let mut failed = BTreeMap::new();
        for problem in &report.errors {
            let folder = problem
                .file
                .strip_prefix(root)
                .ok()
                .and_then(|rest| rest.components().next())
                .map(|first| root.join(first));
            if let Some(folder) = folder {
                failed
                    .entry(folder)
                    .or_insert_with(|| problem.reason.clone());
            }
        }
        let staging = Registry::new();
        assert!(staging.register_all(report.skills).is_empty());
        registry.reload_root(root, &staging, &failed)
    }

    #[test]
    fn an_edit_replaces_an_addition_adds_and_a_removal_removes() {
        let root = tempfile::tempdir().unwrap();
        write_skill(root.path(), "alpha", "First.");
        write_skill(root.path(), "beta", "Second.");
        let registry = Registry::new();
        reload(&registry, root.path());
        let held = registry.get("alpha").unwrap();

        write_skill(root.path(), "alpha", "First, edited.");
        write_skill(root.path(), "gamma", "Third.");
        std::fs::remove_dir_all(root.path().join("beta")).unwrap();
        let report = reload(&registry, root.path());

        assert_eq!(report.added, ["gamma"]);
        assert_eq!(report.replaced, ["alpha"]);
        assert_eq!(report.removed, ["beta"]);
        assert_eq!(report.touched(), ["alpha", "beta", "gamma"]);
        let alpha = registry.get("alpha").unwrap();
        assert_eq!(alpha.compiled.spec.description, "First, edited.");
        // What a call in flight holds is the version it started with.
        assert_eq!(held.compiled.spec.description, "First.");
        assert!(registry.get("beta").is_none());
    }

    #[test]
    fn a_broken_edit_keeps_the_last_version_blocked_and_a_fix_unblocks_it() {
        let root = tempfile::tempdir().unwrap();
        write_skill(root.path(), "alpha", "First.");
        write_skill(root.path(), "beta", "Second.");
        let registry = Registry::new();
        reload(&registry, root.path());

        std::fs::write(
            root.path().join("alpha/SKILL.md"),
            "---\nname: alpha\n---\nno description\n",
        )
        .unwrap();
        let report = reload(&registry, root.path());
        assert_eq!(report.failed, ["alpha"]);
        let alpha = registry.get("alpha").unwrap();
        assert_eq!(alpha.status, SkillStatus::Blocked);
        assert_eq!(alpha.compiled.spec.description, "First.");
        let advertised = alpha.to_wire();
        let metadata = advertised.metadata.as_ref().unwrap();
        assert!(
            metadata["load_failed"]
                .as_str()
                .unwrap()
                .contains("description")
        );
        assert!(registry.get("beta").unwrap().is_runnable());

        write_skill(root.path(), "alpha", "Fixed.");
        reload(&registry, root.path());
        let alpha = registry.get("alpha").unwrap();
        assert!(alpha.is_runnable());
        assert_eq!(alpha.compiled.spec.description, "Fixed.");
        assert!(
            alpha
                .to_wire()
                .metadata
                .as_ref()
                .is_none_or(|m| !m.contains_key("load_failed"))
        );
    }

    #[test]
    fn a_fresh_skill_whose_name_another_root_holds_is_refused() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write_skill(one.path(), "alpha", "From one.");
        let registry = Registry::new();
        reload(&registry, one.path());
        write_skill(two.path(), "alpha", "From two.");
        let report = reload(&registry, two.path());
        assert_eq!(report.refused.len(), 1);
        assert_eq!(
            registry.get("alpha").unwrap().compiled.spec.description,
            "From one."
        );
    }
}
