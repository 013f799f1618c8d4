//! The host's supply-chain settings for builds: the package index (a secret when it carries
//! credentials) and whether a build may run a source distribution's build code
//! (`[skills] builds`).
//!
//! Why the index is a secret: `https://user:token@host/simple` is a credential. It reaches uv
//! only through the build's environment (`UV_DEFAULT_INDEX`; argv is readable by every process
//! in `/proc`), every file the sandbox can read (an environment's marker) gets it without its
//! user information ([`PackageIndex::without_credentials`]), and its password joins the
//! process's redaction set.
//!
//! Not here: running uv (`build`), npm's registry (fixed: `node`).

use std::fmt;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Deserializer};

/// `[skills] package_index`: the index uv installs from, possibly with credentials.
#[derive(Clone)]
pub struct PackageIndex(SecretString);

impl PackageIndex {
    /// The index at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        PackageIndex(SecretString::from(url.into()))
    }

    /// The URL as configured, credentials included: only for uv's environment.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }

    /// The URL without its user information (`https://host/simple`): what may be written down.
    pub fn without_credentials(&self) -> String {
        let url = self.expose();
        let Some((scheme, rest)) = url.split_once("://") else {
            return url.to_owned();
        };
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(authority_end);
        let host = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        format!("{scheme}://{host}{path}")
    }

    /// The secret part of the user information: the password, else a user name alone (a
    /// token). `None` when there is none.
    pub fn credential(&self) -> Option<SecretString> {
        let (_, rest) = self.expose().split_once("://")?;
        let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
        let (userinfo, _) = authority.rsplit_once('@')?;
        let secret = userinfo
            .split_once(':')
            .map_or(userinfo, |(_, password)| password);
        (!secret.is_empty()).then(|| SecretString::from(secret.to_owned()))
    }
}

impl fmt::Debug for PackageIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PackageIndex")
            .field(&self.without_credentials())
            .finish()
    }
}

impl<'de> Deserialize<'de> for PackageIndex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(PackageIndex::new)
    }
}

/// `[skills] builds`: whether a Python build may build source distributions (running their
/// build code on the host, outside the sandbox).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Builds {
    /// Wheels only (`uv pip install --only-binary :all:`): no package's code runs at build.
    WheelsOnly,
    /// Source distributions are built too.
    AllowSdist,
}

impl Builds {
    /// The policy of one build: the setting when set; unset, wheels only for what a skill
    /// folder declares, and sdists allowed for the host's own `[skills.environments.NAME]`
    /// list (the host wrote those requirements itself).
    pub fn of(setting: Option<Builds>, from_host: bool) -> Builds {
        match (setting, from_host) {
            (Some(builds), _) => builds,
            (None, true) => Builds::AllowSdist,
            (None, false) => Builds::WheelsOnly,
        }
    }

    /// `wheels-only` / `allow-sdist`, as in the setting.
    pub fn as_str(self) -> &'static str {
        match self {
            Builds::WheelsOnly => "wheels-only",
            Builds::AllowSdist => "allow-sdist",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_is_written_down_without_its_credentials() {
        let index = PackageIndex::new("https://me:s3cret-pw@pypi.example/simple?x=1");
        assert_eq!(
            index.without_credentials(),
            "https://pypi.example/simple?x=1"
        );
        assert_eq!(
            index.credential().map(|s| s.expose_secret().to_owned()),
            Some("s3cret-pw".to_owned())
        );
        assert!(!format!("{index:?}").contains("s3cret"));
        let token = PackageIndex::new("https://tok-123456@pypi.example/simple");
        assert_eq!(token.without_credentials(), "https://pypi.example/simple");
        assert_eq!(
            token.credential().map(|s| s.expose_secret().to_owned()),
            Some("tok-123456".to_owned())
        );
        let plain = PackageIndex::new("https://pypi.example/simple/a@b");
        assert_eq!(
            plain.without_credentials(),
            "https://pypi.example/simple/a@b"
        );
        assert!(plain.credential().is_none());
    }

    #[test]
    fn unset_builds_are_wheels_only_unless_the_host_listed_the_requirements() {
        assert_eq!(Builds::of(None, false), Builds::WheelsOnly);
        assert_eq!(Builds::of(None, true), Builds::AllowSdist);
        assert_eq!(
            Builds::of(Some(Builds::WheelsOnly), true),
            Builds::WheelsOnly
        );
        assert_eq!(
            Builds::of(Some(Builds::AllowSdist), false),
            Builds::AllowSdist
        );
    }
}
