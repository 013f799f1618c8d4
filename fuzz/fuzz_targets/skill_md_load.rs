//! Fuzz target: the bytes of a SKILL.md (frontmatter, metadata keys, template compile), loaded
//! through the public loader from a scratch skill directory. Loading never panics.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use skillet_engine::skill::load_skill_dir;

fn skill_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir()
            .join(format!("skillet-fuzz-{}", std::process::id()))
            .join("fuzz-skill");
        std::fs::create_dir_all(&dir).expect("scratch skill directory");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = skill_dir();
    std::fs::write(dir.join("SKILL.md"), data).expect("write SKILL.md");
    if let Ok(skill) = load_skill_dir(dir, skillet_engine::skill::SkillSource::Project) {
        let _ = skill.render_instructions(&serde_json::json!({}));
    }
});
