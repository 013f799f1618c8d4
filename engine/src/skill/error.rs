//! [`ManifestError`]: one structured problem found while loading a skill (file, location,
//! line/column when known, reason, severity).

use std::fmt;
use std::path::{Path, PathBuf};

/// Whether a problem stops the skill from loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The skill is not loaded.
    Error,
    /// The skill loads; `skillet validate --strict` treats it as an error.
    Warning,
}

/// One problem with a skill manifest, located precisely enough to fix without a debugger.
///
/// `location` names the part of the skill: `SKILL.md` (the file as a whole), `frontmatter`
/// (YAML syntax), `frontmatter.<key>`, `metadata.<key>`, `metadata.<key>#<json-pointer>` (inside
/// the schema that key names; `file` is then the schema file), `body` (the instructions
/// template), or `directory`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ManifestError {
    /// The file the problem is in (SKILL.md, an asset, or the skill directory).
    pub file: PathBuf,
    /// Which part of the skill (see the type doc).
    pub location: String,
    /// 1-based line in `file`, when known.
    pub line: Option<usize>,
    /// 1-based column in `file`, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub reason: String,
    /// Error or warning.
    pub severity: Severity,
}

impl ManifestError {
    /// An error at `location` of `file`.
    pub fn error(file: &Path, location: impl Into<String>, reason: impl Into<String>) -> Self {
        ManifestError {
            file: file.to_path_buf(),
            location: location.into(),
            line: None,
            column: None,
            reason: reason.into(),
            severity: Severity::Error,
        }
    }

    /// A warning at `location` of `file`.
    pub fn warning(file: &Path, location: impl Into<String>, reason: impl Into<String>) -> Self {
        ManifestError {
            severity: Severity::Warning,
            ..ManifestError::error(file, location, reason)
        }
    }

    /// The same problem with a line/column.
    pub fn at(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// Whether this problem stops the skill from loading.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for ManifestError {
    /// `file:location: reason`, with ` (line L, column C)` when known and a `warning: ` prefix
    /// on the reason for warnings.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.file.display(), self.location)?;
        if self.severity == Severity::Warning {
            f.write_str("warning: ")?;
        }
        f.write_str(&self.reason)?;
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, " (line {l}, column {c})"),
            (Some(l), None) => write!(f, " (line {l})"),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for ManifestError {}
