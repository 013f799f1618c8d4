//! `skillet eval --results DIR`: the results as skill-creator lays them out, so its viewer and
//! scripts read them — `eval-CASE/with_skill/run-N/grading.json` per run (and `without_skill`
//! with `--baseline`), and `benchmark.json` with `--baseline`. With several `--model`s each
//! model gets a folder of its own (`DIR/PROVIDER_MODEL/...`).
//!
//! Names from the case file become folder names only through [`slug`] (letters, digits, `.`,
//! `_`, `-`), so a case name cannot point outside DIR.

use std::path::{Path, PathBuf};

use skillet_engine::eval::{Benchmark, Grading, ModelReport, WITH_SKILL, WITHOUT_SKILL};

use super::exit::Failure;

/// Writes every run's `grading.json` and the benchmarks under `dir`; returns how many files.
pub(super) fn write_results(
    dir: &Path,
    with: &[ModelReport],
    without: Option<&[ModelReport]>,
    benchmarks: &[Benchmark],
) -> Result<usize, Failure> {
    let several = with.len() > 1;
    let model_dir = |model: &str| {
        if several {
            dir.join(slug(model))
        } else {
            dir.to_path_buf()
        }
    };
    let mut written = 0;
    let configurations = [(WITH_SKILL, Some(with)), (WITHOUT_SKILL, without)];
    for (configuration, reports) in configurations {
        for report in reports.unwrap_or_default() {
            for run in &report.runs {
                let folder = model_dir(&report.model)
                    .join(format!("eval-{}", slug(&run.case)))
                    .join(configuration)
                    .join(format!("run-{}", run.repeat));
                let json = serde_json::to_string_pretty(&Grading::of(run))
                    .map_err(|e| Failure::setup(format!("--results: {e}")))?;
                write(&folder, "grading.json", &json)?;
                written += 1;
            }
        }
    }
    for benchmark in benchmarks {
        write(
            &model_dir(&benchmark.metadata.executor_model),
            "benchmark.json",
            &benchmark.to_json(),
        )?;
        written += 1;
    }
    Ok(written)
}

fn write(folder: &PathBuf, name: &str, text: &str) -> Result<(), Failure> {
    let path = folder.join(name);
    std::fs::create_dir_all(folder)
        .and_then(|()| std::fs::write(&path, text))
        .map_err(|e| Failure::setup(format!("--results {}: {e}", path.display())))
}

/// `name` as one path component: other characters become `_`; never empty, `.` or `..`.
fn slug(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if slug.chars().all(|c| c == '.') {
        format!("_{slug}")
    } else {
        slug
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_or_model_name_is_one_safe_path_component() {
        assert_eq!(slug("notes"), "notes");
        assert_eq!(slug("ollama/qwen3:8b"), "ollama_qwen3_8b");
        assert_eq!(slug("../../etc"), ".._.._etc");
        assert_eq!(slug(".."), "_..");
        assert_eq!(slug(""), "_");
    }
}
