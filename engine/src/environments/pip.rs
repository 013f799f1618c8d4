//! Building a Python environment without uv: the interpreter's own `venv` and `pip`, for a
//! machine that has Python and nothing else. The same plan as uv's (`build`): the requirements
//! file written from the parsed requirements, the host's index only (through the build's
//! environment, `PIP_INDEX_URL`, never argv), wheels only unless `[skills] builds` allows source
//! builds, no user or machine configuration (`PIP_CONFIG_FILE=/dev/null` in a cleared
//! environment with a private `HOME`), its cache under the environments root.
//!
//! The environment's `bin/python` is a link to the host's interpreter and finds its packages
//! from its own place, so the staging directory can be renamed into place as uv's can.
//!
//! Not here: the once-per-key machinery and the marker (`build`).

use std::path::Path;

use super::build::{BuildPlan, cache, isolated, run};
use super::error::{CacheStep, EnvironmentError};
use super::supply::Builds;

/// Fills `staging` with a venv of `plan.python` holding `plan.requirements`, installed by pip.
pub(super) fn build_into(plan: &BuildPlan<'_>, staging: &Path) -> Result<(), EnvironmentError> {
    let mut venv = isolated(plan.python, plan.root)?;
    venv.args(["-I", "-m", "venv"]).arg(staging);
    run(venv, "python -m venv").map_err(|why| EnvironmentError::VenvFailed(Box::new(why)))?;
    let requirements = staging.join("skillet-requirements.txt");
    std::fs::write(&requirements, plan.requirements.file_text())
        .map_err(cache(CacheStep::Write, &requirements))?;
    let mut install = isolated(&staging.join("bin/python"), plan.root)?;
    install
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env("PIP_NO_INPUT", "1")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PIP_CACHE_DIR", plan.root.join(".pip-cache"))
        .args([
            "-I",
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-warn-script-location",
        ]);
    if let Some(index) = plan.index {
        install.env("PIP_INDEX_URL", index.expose());
    }
    if plan.builds == Builds::WheelsOnly {
        install.args(["--only-binary", ":all:"]);
    }
    install.arg("-r").arg(&requirements);
    run(install, "pip install")
}
