//! Whether the binary's output may carry ANSI colour: one decision, taken once from the
//! environment, that the log lines (`with_ansi`), the progress bars and clap's help and errors
//! all follow.
//!
//! | environment | colour |
//! |---|---|
//! | `NO_COLOR` set and non-empty (no-color.org) | never |
//! | else `CLICOLOR_FORCE` or `FORCE_COLOR` set, non-empty and not `0` | always |
//! | else | only when the stream is a terminal |
//!
//! Not here: what is coloured (`progress`, `eval`'s bar, the log format in `telemetry::logs`).

use std::ffi::OsString;
use std::io::IsTerminal;

/// What the environment asks for, before looking at the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorChoice {
    /// `NO_COLOR`.
    Never,
    /// `CLICOLOR_FORCE` / `FORCE_COLOR`.
    Always,
    /// Colour on a terminal only.
    Auto,
}

impl ColorChoice {
    /// The choice this process's environment makes.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name);
        Self::from_vars(var("NO_COLOR"), var("CLICOLOR_FORCE"), var("FORCE_COLOR"))
    }

    /// The choice for these values of `NO_COLOR`, `CLICOLOR_FORCE` and `FORCE_COLOR`.
    pub fn from_vars(
        no_color: Option<OsString>,
        clicolor_force: Option<OsString>,
        force_color: Option<OsString>,
    ) -> Self {
        let set = |v: &Option<OsString>| v.as_ref().is_some_and(|v| !v.is_empty());
        let forced = |v: &Option<OsString>| set(v) && v.as_deref() != Some("0".as_ref());
        if set(&no_color) {
            ColorChoice::Never
        } else if forced(&clicolor_force) || forced(&force_color) {
            ColorChoice::Always
        } else {
            ColorChoice::Auto
        }
    }

    /// Whether a stream that is (or is not) a terminal gets colour.
    pub fn colors(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Never => false,
            ColorChoice::Always => true,
            ColorChoice::Auto => is_terminal,
        }
    }

    /// The same choice for clap (which checks each of its streams itself under `Auto`).
    pub fn for_clap(self) -> clap::ColorChoice {
        match self {
            ColorChoice::Never => clap::ColorChoice::Never,
            ColorChoice::Always => clap::ColorChoice::Always,
            ColorChoice::Auto => clap::ColorChoice::Auto,
        }
    }
}

/// Whether what this process writes on stderr (logs, progress) may be coloured.
pub fn stderr_colors() -> bool {
    ColorChoice::from_env().colors(std::io::stderr().is_terminal())
}

/// A progress-bar template: `colored` as it is when stderr takes colour, else with every
/// indicatif style (`{name:.cyan}`, `{bar:24.cyan/blue}`) removed.
pub fn bar_template(colored: &str) -> String {
    if stderr_colors() {
        colored.to_owned()
    } else {
        plain_template(colored)
    }
}

/// `colored` without its styles: in every `{key:spec}`, the part of `spec` from its `.` goes
/// (and the `:` when nothing is left of `spec`).
fn plain_template(colored: &str) -> String {
    let mut plain = String::with_capacity(colored.len());
    let mut rest = colored;
    while let Some(open) = rest.find('{') {
        plain.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let field = &rest[open..open + close + 1];
        match field.find('.') {
            Some(dot) => {
                plain.push_str(field[..dot].trim_end_matches(':'));
                plain.push('}');
            }
            None => plain.push_str(field),
        }
        rest = &rest[open + close + 1..];
    }
    plain.push_str(rest);
    plain
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(no: Option<&str>, clicolor: Option<&str>, force: Option<&str>) -> ColorChoice {
        let os = |v: Option<&str>| v.map(OsString::from);
        ColorChoice::from_vars(os(no), os(clicolor), os(force))
    }

    #[test]
    fn no_color_wins_an_empty_one_counts_as_unset_and_force_0_does_not_force() {
        assert_eq!(choice(Some("1"), Some("1"), None), ColorChoice::Never);
        assert_eq!(choice(Some(""), None, None), ColorChoice::Auto);
        assert_eq!(choice(None, Some("1"), None), ColorChoice::Always);
        assert_eq!(choice(None, None, Some("true")), ColorChoice::Always);
        assert_eq!(choice(None, Some("0"), Some("0")), ColorChoice::Auto);
        assert!(!ColorChoice::Auto.colors(false));
        assert!(ColorChoice::Auto.colors(true));
        assert!(!ColorChoice::Never.colors(true));
    }

    #[test]
    fn a_plain_template_keeps_the_keys_and_widths_and_drops_the_styles() {
        assert_eq!(
            plain_template(
                "{spinner:.cyan} {prefix:.bold} [{bar:24.cyan/blue}] {pos:>3}% {wide_msg}"
            ),
            "{spinner} {prefix} [{bar:24}] {pos:>3}% {wide_msg}"
        );
    }
}
