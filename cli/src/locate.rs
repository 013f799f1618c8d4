//! Where the binary looks for its configuration file and its skills when the command line does
//! not say, following the XDG base directory convention:
//!
//! | what | order |
//! |---|---|
//! | config | `--config FILE` / `SKILLET_CONFIG`, else `./skillet.toml`, else `$XDG_CONFIG_HOME/skillet/skillet.toml` (`~/.config/…` when unset), else built-in defaults |
//! | skills | `--skills-dir DIR`..., else the config's `skills_dirs`, else `./skills`, else `$XDG_DATA_HOME/skillet/skills` (`~/.local/share/…` when unset) |
//!
//! The environment is read once, into [`BaseDirs`], so the lookups themselves are plain
//! functions of it (and of the file system) that tests can drive. Per the XDG specification an
//! empty or relative `XDG_*_HOME` is ignored.
//!
//! Not here: parsing the file (`crate::config`), loading skills (`setup`).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::DEFAULT_CONFIG_FILE;

/// The per-user directories the lookups fall back to, read from the environment.
#[derive(Debug, Clone, Default)]
pub struct BaseDirs {
    /// `$XDG_CONFIG_HOME`, else `$HOME/.config`.
    pub config_home: Option<PathBuf>,
    /// `$XDG_DATA_HOME`, else `$HOME/.local/share`.
    pub data_home: Option<PathBuf>,
}

impl BaseDirs {
    /// The directories this process's environment names.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).map(PathBuf::from);
        Self::from_vars(var("XDG_CONFIG_HOME"), var("XDG_DATA_HOME"), var("HOME"))
    }

    /// The directories for these values of `XDG_CONFIG_HOME`, `XDG_DATA_HOME` and `HOME`.
    pub fn from_vars(
        xdg_config: Option<PathBuf>,
        xdg_data: Option<PathBuf>,
        home: Option<PathBuf>,
    ) -> Self {
        let usable = |dir: Option<PathBuf>| dir.filter(|d| d.is_absolute());
        let home = usable(home);
        BaseDirs {
            config_home: usable(xdg_config).or_else(|| home.as_ref().map(|h| h.join(".config"))),
            data_home: usable(xdg_data).or_else(|| home.as_ref().map(|h| h.join(".local/share"))),
        }
    }

    /// `CONFIG_HOME/skillet/skillet.toml`.
    pub fn user_config_file(&self) -> Option<PathBuf> {
        self.config_home
            .as_ref()
            .map(|d| d.join("skillet").join(DEFAULT_CONFIG_FILE))
    }

    /// `DATA_HOME/skillet/skills`.
    pub fn user_skills_dir(&self) -> Option<PathBuf> {
        self.data_home
            .as_ref()
            .map(|d| d.join("skillet").join("skills"))
    }
}

/// Which configuration file a command uses, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigFile {
    /// Named by `--config` or `SKILLET_CONFIG` (it must exist).
    Named(PathBuf),
    /// `./skillet.toml`.
    CurrentDir(PathBuf),
    /// The per-user file under the XDG config directory.
    User(PathBuf),
    /// None found: the built-in defaults.
    Defaults,
}

impl ConfigFile {
    /// The file to read, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ConfigFile::Named(p) | ConfigFile::CurrentDir(p) | ConfigFile::User(p) => Some(p),
            ConfigFile::Defaults => None,
        }
    }
}

impl fmt::Display for ConfigFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigFile::Named(p) => write!(f, "{} (--config or SKILLET_CONFIG)", p.display()),
            ConfigFile::CurrentDir(p) => write!(f, "{} (current directory)", p.display()),
            ConfigFile::User(p) => write!(f, "{} (user config directory)", p.display()),
            ConfigFile::Defaults => f.write_str("built-in defaults (no skillet.toml found)"),
        }
    }
}

/// The configuration file in force: `named`, else `./skillet.toml`, else the user's, else none.
pub fn config_file(named: Option<&Path>, dirs: &BaseDirs) -> ConfigFile {
    if let Some(path) = named {
        return ConfigFile::Named(path.to_path_buf());
    }
    let local = Path::new(DEFAULT_CONFIG_FILE);
    if local.is_file() {
        return ConfigFile::CurrentDir(local.to_path_buf());
    }
    match dirs.user_config_file() {
        Some(user) if user.is_file() => ConfigFile::User(user),
        _ => ConfigFile::Defaults,
    }
}

/// The skill root used when neither the command line nor the config names one: `./skills`
/// when it is a directory, else the user's when that is, else `./skills` (so the "no skills
/// here" warning names the place people look first).
pub fn default_skills_dir(dirs: &BaseDirs) -> PathBuf {
    let local = PathBuf::from("skills");
    if local.is_dir() {
        return local;
    }
    match dirs.user_skills_dir() {
        Some(user) if user.is_dir() => user,
        _ => local,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdg_homes_win_over_home_and_relative_or_missing_ones_are_ignored() {
        let dirs = BaseDirs::from_vars(
            Some("/x/config".into()),
            Some("/x/data".into()),
            Some("/home/u".into()),
        );
        assert_eq!(
            dirs.user_config_file(),
            Some(PathBuf::from("/x/config/skillet/skillet.toml"))
        );
        assert_eq!(
            dirs.user_skills_dir(),
            Some(PathBuf::from("/x/data/skillet/skills"))
        );

        let fallback = BaseDirs::from_vars(Some("rel".into()), None, Some("/home/u".into()));
        assert_eq!(
            fallback.user_config_file(),
            Some(PathBuf::from("/home/u/.config/skillet/skillet.toml"))
        );
        assert_eq!(
            fallback.user_skills_dir(),
            Some(PathBuf::from("/home/u/.local/share/skillet/skills"))
        );

        let nothing = BaseDirs::from_vars(None, None, None);
        assert_eq!(nothing.user_config_file(), None);
        assert_eq!(nothing.user_skills_dir(), None);
    }

    #[test]
    fn a_named_config_wins_whether_or_not_it_exists() {
        let named = config_file(Some(Path::new("/no/such.toml")), &BaseDirs::default());
        assert_eq!(named, ConfigFile::Named("/no/such.toml".into()));
        assert_eq!(named.path(), Some(Path::new("/no/such.toml")));
    }
}
