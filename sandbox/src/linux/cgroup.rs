//! Per-child cgroups: a hard process limit (pids) and a memory limit that also hold for root, an
//! exact out-of-memory verdict (the kernel's own OOM-kill counter), and a way to find and kill
//! every process a child left behind (even ones that left its process group).
//!
//! Works with cgroup v1 (separate `pids` and `memory` hierarchies: a child joins one cgroup in
//! each) and cgroup v2 (the controllers enabled for our subtree: a child joins one cgroup). The
//! engine's children live under `<engine's cgroup>/skillet-sandbox/<pid>-<n>`; the shared
//! `skillet-sandbox` directory is left in place (empty) when the engine exits.
//!
//! The child joins its cgroups itself, in `pre_exec`, by writing `0` to each `cgroup.procs` (see
//! `limits.rs`), so it is contained before it can fork or allocate.
//!
//! Not here: what the outcome of a run is (`outcome.rs`; `process.rs` asks [`ChildCgroups::oom_killed`]).

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which cgroup interface a controller is reached through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CgroupVersion {
    V1,
    V2,
}

/// A cgroup controller the sandbox uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Controller {
    /// `pids`: the process limit.
    Pids,
    /// `memory`: the memory limit and the OOM-kill counter.
    Memory,
}

impl Controller {
    fn name(self) -> &'static str {
        match self {
            Controller::Pids => "pids",
            Controller::Memory => "memory",
        }
    }
}

/// The limits a child's cgroups get.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CgroupLimits {
    pub(crate) max_pids: Option<u64>,
    pub(crate) max_memory_bytes: Option<u64>,
}

/// Every hierarchy the sandbox creates per-child cgroups in, and what each one is for.
#[derive(Debug, Default)]
pub(crate) struct Cgroups {
    roots: Vec<CgroupRoot>,
}

/// The result of probing cgroups: the usable hierarchies and, per controller, where it lives or
/// why it is unavailable (for the platform report).
#[derive(Debug)]
pub(crate) struct CgroupDetection {
    pub(crate) cgroups: Cgroups,
    pub(crate) pids: Result<String, String>,
    pub(crate) memory: Result<String, String>,
}

impl Cgroups {
    /// Finds writable pids and memory hierarchies (v1 first, then v2) and proves each works by
    /// creating and removing one child cgroup with limits.
    pub(crate) fn detect() -> CgroupDetection {
        let unreadable = |e: String| CgroupDetection {
            cgroups: Cgroups::default(),
            pids: Err(e.clone()),
            memory: Err(e),
        };
        let mountinfo = match fs::read_to_string("/proc/self/mountinfo") {
            Ok(text) => text,
            Err(e) => return unreadable(format!("cannot read /proc/self/mountinfo: {e}")),
        };
        let membership = match fs::read_to_string("/proc/self/cgroup") {
            Ok(text) => text,
            Err(e) => return unreadable(format!("cannot read /proc/self/cgroup: {e}")),
        };
        let mut roots = Vec::new();
        let mut reasons = [Vec::new(), Vec::new()];
        let mut v2_wanted = Vec::new();
        for (i, controller) in [Controller::Pids, Controller::Memory]
            .into_iter()
            .enumerate()
        {
            if let Some((mount, own)) = v1_location(&mountinfo, &membership, controller.name()) {
                match CgroupRoot::prepare(
                    mount.join(own.trim_start_matches('/')),
                    CgroupVersion::V1,
                    vec![controller],
                ) {
                    Ok(root) => {
                        roots.push(root);
                        continue;
                    }
                    Err(e) => reasons[i].push(format!("v1 {}: {e}", controller.name())),
                }
            }
            v2_wanted.push(controller);
        }
        if !v2_wanted.is_empty() {
            match v2_location(&mountinfo, &membership) {
                Some((mount, own)) => {
                    let own = mount.join(own.trim_start_matches('/'));
                    let mut enabled = Vec::new();
                    for controller in v2_wanted {
                        let i = controller as usize;
                        match enable_v2_controller(&own, controller) {
                            Ok(()) => enabled.push(controller),
                            Err(e) => reasons[i].push(format!("v2: {e}")),
                        }
                    }
                    if !enabled.is_empty() {
                        match CgroupRoot::prepare(own, CgroupVersion::V2, enabled.clone()) {
                            Ok(root) => roots.push(root),
                            Err(e) => {
                                for controller in enabled {
                                    reasons[controller as usize].push(format!("v2: {e}"));
                                }
                            }
                        }
                    }
                }
                None => {
                    for reason in &mut reasons {
                        if reason.is_empty() {
                            reason.push("no usable cgroup hierarchy mounted".into());
                        }
                    }
                }
            }
        }
        let cgroups = Cgroups { roots };
        let [pids_reasons, memory_reasons] = reasons;
        CgroupDetection {
            pids: cgroups
                .describe(Controller::Pids)
                .ok_or(pids_reasons.join("; ")),
            memory: cgroups
                .describe(Controller::Memory)
                .ok_or(memory_reasons.join("; ")),
            cgroups,
        }
    }

    /// Where a controller's child cgroups are created (version and path), if it is usable.
    fn describe(&self, controller: Controller) -> Option<String> {
        self.roots
            .iter()
            .find(|root| root.controllers.contains(&controller))
            .map(CgroupRoot::describe)
    }

    /// True when no hierarchy is usable.
    pub(crate) fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// Creates the cgroups for one child (one per hierarchy), with its limits.
    pub(crate) fn create_child(&self, limits: CgroupLimits) -> io::Result<ChildCgroups> {
        let members = self
            .roots
            .iter()
            .map(|root| root.create_child(limits))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(ChildCgroups { members })
    }
}

/// The directory of one hierarchy under which per-child cgroups are created.
#[derive(Debug)]
struct CgroupRoot {
    dir: PathBuf,
    version: CgroupVersion,
    controllers: Vec<Controller>,
    next_child: AtomicU64,
}

impl CgroupRoot {
    fn prepare(
        own: PathBuf,
        version: CgroupVersion,
        controllers: Vec<Controller>,
    ) -> io::Result<Self> {
        let dir = own.join("skillet-sandbox");
        match fs::create_dir(&dir) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("mkdir {}: {e}", dir.display()),
                ));
            }
            _ => {}
        }
        if version == CgroupVersion::V2 {
            for &controller in &controllers {
                enable_v2_controller(&dir, controller)?;
            }
        }
        remove_stale_children(&dir);
        let root = Self {
            dir,
            version,
            controllers,
            next_child: AtomicU64::new(0),
        };
        drop(root.create_child(CgroupLimits {
            max_pids: Some(1),
            max_memory_bytes: Some(16 << 20),
        })?);
        Ok(root)
    }

    fn describe(&self) -> String {
        let version = match self.version {
            CgroupVersion::V1 => "v1",
            CgroupVersion::V2 => "v2",
        };
        format!("{version} {}", self.dir.display())
    }

    fn create_child(&self, limits: CgroupLimits) -> io::Result<ChildCgroup> {
        let n = self.next_child.fetch_add(1, Ordering::Relaxed);
        let dir = self.dir.join(format!("{}-{n}", std::process::id()));
        fs::create_dir(&dir)
            .map_err(|e| io::Error::new(e.kind(), format!("mkdir {}: {e}", dir.display())))?;
        let child = ChildCgroup {
            procs: CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
                .map_err(io::Error::other)?,
            dir,
            version: self.version,
            has_memory: self.controllers.contains(&Controller::Memory),
            limits_pids: limits.max_pids.is_some() && self.controllers.contains(&Controller::Pids),
        };
        let write = |file: &str, value: String| {
            fs::write(child.dir.join(file), value).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("write {file} in {}: {e}", child.dir.display()),
                )
            })
        };
        if let (Some(max), true) = (
            limits.max_pids,
            self.controllers.contains(&Controller::Pids),
        ) {
            write("pids.max", max.to_string())?;
        }
        if let (Some(max), true) = (limits.max_memory_bytes, child.has_memory) {
            match self.version {
                CgroupVersion::V1 => {
                    write("memory.limit_in_bytes", max.to_string())?;
                    // Swap accounting may be off (the file is then missing): no swap limit needed.
                    let _ = write("memory.memsw.limit_in_bytes", max.to_string());
                }
                CgroupVersion::V2 => {
                    write("memory.max", max.to_string())?;
                    let _ = write("memory.swap.max", "0".into());
                    // Kill the whole child on OOM, not one arbitrary process of it.
                    let _ = write("memory.oom.group", "1".into());
                }
            }
        }
        Ok(child)
    }
}

/// One child's cgroups (one per hierarchy). Dropping them kills every process still inside and
/// removes the directories.
#[derive(Debug)]
pub(crate) struct ChildCgroups {
    members: Vec<ChildCgroup>,
}

impl ChildCgroups {
    /// The `cgroup.procs` files the child writes `0` into to join.
    pub(crate) fn procs_files(&self) -> Vec<CString> {
        self.members.iter().map(|m| m.procs.clone()).collect()
    }

    /// True when one of the cgroups caps the child's processes (`pids.max` is set): the exact,
    /// per-child process limit.
    pub(crate) fn limits_pids(&self) -> bool {
        self.members.iter().any(|m| m.limits_pids)
    }

    /// Sends `SIGKILL` to every process in the cgroups; returns how many were signalled.
    pub(crate) fn kill_all(&self) -> usize {
        self.members.iter().map(ChildCgroup::kill_all).sum()
    }

    /// True when the kernel OOM-killed a process of this child for exceeding its memory limit.
    pub(crate) fn oom_killed(&self) -> bool {
        self.members.iter().any(ChildCgroup::oom_killed)
    }
}

/// One child's cgroup in one hierarchy.
#[derive(Debug)]
struct ChildCgroup {
    dir: PathBuf,
    procs: CString,
    version: CgroupVersion,
    has_memory: bool,
    /// `pids.max` was written.
    limits_pids: bool,
}

impl ChildCgroup {
    fn kill_all(&self) -> usize {
        let Ok(text) = fs::read_to_string(self.dir.join("cgroup.procs")) else {
            return 0;
        };
        let mut killed = 0;
        for pid in text
            .lines()
            .filter_map(|l| l.trim().parse::<libc::pid_t>().ok())
        {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                killed += 1;
            }
        }
        killed
    }

    fn oom_killed(&self) -> bool {
        if !self.has_memory {
            return false;
        }
        let file = match self.version {
            CgroupVersion::V1 => "memory.oom_control",
            CgroupVersion::V2 => "memory.events",
        };
        fs::read_to_string(self.dir.join(file))
            .ok()
            .and_then(|text| oom_kill_count(&text))
            .is_some_and(|count| count > 0)
    }
}

impl Drop for ChildCgroup {
    fn drop(&mut self) {
        // Killed processes leave the cgroup once they are reaped (by their parent, or by init for
        // orphans), so removal may need a few tries; a fork bomb may also still be forking
        // between passes. Bounded: at worst a few hundred milliseconds and an empty directory
        // left behind.
        for _ in 0..100 {
            self.kill_all();
            match fs::remove_dir(&self.dir) {
                Ok(()) => return,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(3)),
            }
        }
        tracing::warn!(cgroup = %self.dir.display(), "could not remove a sandbox cgroup");
    }
}

/// Removes the (empty) cgroups an engine that died without cleaning up left behind: names are
/// `<engine pid>-<n>`, and a pid with no `/proc` entry is gone. Its children died with it
/// (`PR_SET_PDEATHSIG`); a directory still holding processes is not removable and stays.
fn remove_stale_children(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(engine) = name
            .to_str()
            .and_then(|n| n.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{engine}")).exists() {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// The `oom_kill N` line of v1 `memory.oom_control` or v2 `memory.events`.
fn oom_kill_count(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (key, value) = line.split_once(' ')?;
        (key == "oom_kill").then(|| value.trim().parse().ok())?
    })
}

/// Makes sure `controller` is enabled for the children of the v2 cgroup `dir`.
fn enable_v2_controller(dir: &Path, controller: Controller) -> io::Result<()> {
    let name = controller.name();
    let control = dir.join("cgroup.subtree_control");
    let enabled = fs::read_to_string(&control)?;
    if enabled.split_whitespace().any(|c| c == name) {
        return Ok(());
    }
    let available = fs::read_to_string(dir.join("cgroup.controllers"))?;
    if !available.split_whitespace().any(|c| c == name) {
        return Err(io::Error::other(format!(
            "{name} controller not available in {}",
            dir.display()
        )));
    }
    fs::write(&control, format!("+{name}")).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("enable {name} in {}: {e}", control.display()),
        )
    })
}

/// The mount point of the v1 hierarchy of `controller` and this process's path inside it.
fn v1_location(mountinfo: &str, membership: &str, controller: &str) -> Option<(PathBuf, String)> {
    let mount = mountinfo.lines().find_map(|line| {
        let (fs_type, mount_point, super_options) = parse_mountinfo_line(line)?;
        (fs_type == "cgroup" && super_options.split(',').any(|o| o == controller))
            .then(|| PathBuf::from(mount_point))
    })?;
    let own = membership.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == controller)
            .then(|| path.to_owned())
    })?;
    Some((mount, own))
}

/// The cgroup2 mount point and this process's path in the unified hierarchy.
fn v2_location(mountinfo: &str, membership: &str) -> Option<(PathBuf, String)> {
    let mount = mountinfo.lines().find_map(|line| {
        let (fs_type, mount_point, _) = parse_mountinfo_line(line)?;
        (fs_type == "cgroup2").then(|| PathBuf::from(mount_point))
    })?;
    let own = membership
        .lines()
        .find_map(|line| line.strip_prefix("0::").map(str::to_owned))?;
    Some((mount, own))
}

/// (filesystem type, mount point, super options) of one `/proc/self/mountinfo` line.
fn parse_mountinfo_line(line: &str) -> Option<(&str, &str, &str)> {
    let (before, after) = line.split_once(" - ")?;
    let mount_point = before.split(' ').nth(4)?;
    let mut after = after.split(' ');
    let fs_type = after.next()?;
    let _source = after.next()?;
    let super_options = after.next().unwrap_or("");
    Some((fs_type, mount_point, super_options))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
35 25 0:30 / /sys/fs/cgroup/pids rw,relatime shared:13 - cgroup cgroup rw,pids
37 25 0:32 / /sys/fs/cgroup/memory rw,relatime shared:15 - cgroup cgroup rw,memory
36 25 0:31 / /sys/fs/cgroup/unified rw,relatime shared:14 - cgroup2 cgroup2 rw
";

    #[test]
    fn finds_v1_pids_mount_and_own_path() {
        let membership = "8:pids:/a/b\n4:memory:/x\n0::/\n";
        let (mount, own) = v1_location(MOUNTINFO, membership, "pids").expect("pids hierarchy");
        assert_eq!(mount, PathBuf::from("/sys/fs/cgroup/pids"));
        assert_eq!(own, "/a/b");
        let (mount, own) = v1_location(MOUNTINFO, membership, "memory").expect("memory");
        assert_eq!(mount, PathBuf::from("/sys/fs/cgroup/memory"));
        assert_eq!(own, "/x");
    }

    #[test]
    fn finds_v2_mount_and_own_path() {
        let (mount, own) = v2_location(MOUNTINFO, "0::/user.slice\n").expect("cgroup2");
        assert_eq!(mount, PathBuf::from("/sys/fs/cgroup/unified"));
        assert_eq!(own, "/user.slice");
    }

    #[test]
    fn malformed_mountinfo_lines_are_skipped() {
        assert_eq!(parse_mountinfo_line("garbage"), None);
        assert_eq!(v1_location("garbage\n", "8:pids:/\n", "pids"), None);
    }

    #[test]
    fn oom_kill_counter_is_read_from_v1_and_v2_files() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
        let v2 = "low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\noom_group_kill 0\n";
        assert_eq!(oom_kill_count(v1), Some(2));
        assert_eq!(oom_kill_count(v2), Some(1));
        assert_eq!(oom_kill_count("oom_kill_disable 0\n"), None);
        assert_eq!(oom_kill_count("oom_kill x\n"), None);
    }
}
