//! Per-child pids cgroups: a hard process limit that also holds for root, and a way to find and
//! kill every process a child left behind (even ones that left its process group).
//!
//! Works with cgroup v1 (a `pids` hierarchy) and cgroup v2 (the `pids` controller enabled for our
//! subtree). The engine's children live under `<engine's cgroup>/skillet-sandbox/<pid>-<n>`; the
//! shared `skillet-sandbox` directory is left in place (empty) when the engine exits.
//!
//! The child joins its cgroup itself, in `pre_exec`, by writing `0` to `cgroup.procs` (see
//! `limits.rs`), so it is contained before it can fork.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which cgroup interface the pids controller is reached through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CgroupVersion {
    V1,
    V2,
}

/// The directory under which per-child pids cgroups are created.
#[derive(Debug)]
pub(crate) struct PidsCgroupRoot {
    dir: PathBuf,
    version: CgroupVersion,
    next_child: AtomicU64,
}

impl PidsCgroupRoot {
    /// Finds a writable pids cgroup hierarchy and proves it works by creating and removing one
    /// child with a `pids.max`. The error says why not, for the platform report.
    pub(crate) fn detect() -> Result<Self, String> {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
        let membership = fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
        let mut reasons = Vec::new();
        if let Some((mount, own)) = v1_pids_location(&mountinfo, &membership) {
            match Self::prepare(mount.join(own.trim_start_matches('/')), CgroupVersion::V1) {
                Ok(root) => return Ok(root),
                Err(e) => reasons.push(format!("v1 pids: {e}")),
            }
        }
        if let Some((mount, own)) = v2_location(&mountinfo, &membership) {
            match Self::prepare(mount.join(own.trim_start_matches('/')), CgroupVersion::V2) {
                Ok(root) => return Ok(root),
                Err(e) => reasons.push(format!("v2: {e}")),
            }
        }
        if reasons.is_empty() {
            reasons.push("no cgroup pids hierarchy mounted".into());
        }
        Err(reasons.join("; "))
    }

    fn prepare(own: PathBuf, version: CgroupVersion) -> io::Result<Self> {
        if version == CgroupVersion::V2 {
            enable_pids_controller(&own)?;
        }
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
            enable_pids_controller(&dir)?;
        }
        let root = Self {
            dir,
            version,
            next_child: AtomicU64::new(0),
        };
        drop(root.create_child(Some(1))?);
        Ok(root)
    }

    /// Where children are created, for the platform report.
    pub(crate) fn describe(&self) -> String {
        let version = match self.version {
            CgroupVersion::V1 => "v1",
            CgroupVersion::V2 => "v2",
        };
        format!("{version} {}", self.dir.display())
    }

    /// Creates a fresh cgroup for one child, limited to `max_pids` processes when given.
    pub(crate) fn create_child(&self, max_pids: Option<u64>) -> io::Result<ChildCgroup> {
        let n = self.next_child.fetch_add(1, Ordering::Relaxed);
        let dir = self.dir.join(format!("{}-{n}", std::process::id()));
        fs::create_dir(&dir)
            .map_err(|e| io::Error::new(e.kind(), format!("mkdir {}: {e}", dir.display())))?;
        let child = ChildCgroup {
            procs: CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
                .map_err(io::Error::other)?,
            dir,
        };
        if let Some(max) = max_pids {
            fs::write(child.dir.join("pids.max"), max.to_string())?;
        }
        Ok(child)
    }
}

/// One child's cgroup. Dropping it kills every process still in it and removes the directory.
#[derive(Debug)]
pub(crate) struct ChildCgroup {
    dir: PathBuf,
    procs: CString,
}

impl ChildCgroup {
    /// The `cgroup.procs` file the child writes `0` into to join.
    pub(crate) fn procs_file(&self) -> &std::ffi::CStr {
        &self.procs
    }

    /// Sends `SIGKILL` to every process in the cgroup; returns how many were signalled.
    pub(crate) fn kill_all(&self) -> usize {
        let Ok(text) = fs::read_to_string(self.dir.join("cgroup.procs")) else {
            return 0;
        };
        let mut killed = 0;
        for pid in text
            .lines()
            .filter_map(|l| l.trim().parse::<libc::pid_t>().ok())
        {
            if pid > 0 {
                let _ = rustix::process::kill_process(
                    rustix::process::Pid::from_raw(pid).expect("pid > 0"),
                    rustix::process::Signal::KILL,
                );
                killed += 1;
            }
        }
        killed
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

/// Makes sure `pids` is enabled for the children of the v2 cgroup `dir`.
fn enable_pids_controller(dir: &Path) -> io::Result<()> {
    let control = dir.join("cgroup.subtree_control");
    let enabled = fs::read_to_string(&control)?;
    if enabled.split_whitespace().any(|c| c == "pids") {
        return Ok(());
    }
    let available = fs::read_to_string(dir.join("cgroup.controllers"))?;
    if !available.split_whitespace().any(|c| c == "pids") {
        return Err(io::Error::other(format!(
            "pids controller not available in {}",
            dir.display()
        )));
    }
    fs::write(&control, "+pids").map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("enable pids in {}: {e}", control.display()),
        )
    })
}

/// The mount point of the v1 `pids` hierarchy and this process's path inside it.
fn v1_pids_location(mountinfo: &str, membership: &str) -> Option<(PathBuf, String)> {
    let mount = mountinfo.lines().find_map(|line| {
        let (fs_type, mount_point, super_options) = parse_mountinfo_line(line)?;
        (fs_type == "cgroup" && super_options.split(',').any(|o| o == "pids"))
            .then(|| PathBuf::from(mount_point))
    })?;
    let own = membership.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "pids")
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
36 25 0:31 / /sys/fs/cgroup/unified rw,relatime shared:14 - cgroup2 cgroup2 rw
";

    #[test]
    fn finds_v1_pids_mount_and_own_path() {
        let membership = "8:pids:/a/b\n4:memory:/x\n0::/\n";
        let (mount, own) = v1_pids_location(MOUNTINFO, membership).expect("pids hierarchy");
        assert_eq!(mount, PathBuf::from("/sys/fs/cgroup/pids"));
        assert_eq!(own, "/a/b");
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
        assert_eq!(v1_pids_location("garbage\n", "8:pids:/\n"), None);
    }
}
