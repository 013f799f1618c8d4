//! Loads and compiles 1,000 generated skills (frontmatter, two schemas, a strict template each)
//! and prints how long it took. Run with `cargo bench -p skillet-engine --bench load_skills`.
//! A benchmark, not a test: it asserts only that every skill loaded.

use std::time::Instant;

use serde_json::json;
use skillet_engine::skill::load_skills_root;

const SKILLS: usize = 1_000;

const INPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "text": {"type": "string", "minLength": 1},
    "max_words": {"type": "integer", "minimum": 1},
    "tags": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["text"],
  "additionalProperties": false
}"#;

const OUTPUT_SCHEMA: &str = r##"{
  "$defs": {"point": {"type": "string", "minLength": 1}},
  "type": "object",
  "properties": {
    "summary": {"type": "string"},
    "key_points": {"type": "array", "items": {"$ref": "#/$defs/point"}}
  },
  "required": ["summary", "key_points"]
}"##;

fn skill_md(i: usize) -> String {
    format!(
        "---\nname: skill-{i:04}\ndescription: Generated skill number {i} for the load benchmark.\n\
         license: MIT\nmetadata:\n  a2a-tags: '[\"bench\",\"group-{g}\"]'\n  \
         a2a-examples: '[\"Run skill {i}\"]'\n  a2a-input-schema: assets/input.schema.json\n  \
         a2a-output-schema: assets/output.schema.json\n  a2a-temperature: '0.2'\n  \
         a2e-category: group-{g}\n  a2e-max-turns: '4'\n---\n\
         # Skill {i}\n\nSummarize the text below in a few key points.\n\n{{{{ text }}}}\n\n\
         Escaped: \\{{{{ not a placeholder }}}}\n",
        g = i % 10
    )
}

fn main() {
    let root = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    for i in 0..SKILLS {
        let dir = root.path().join(format!("skill-{i:04}"));
        std::fs::create_dir_all(dir.join("assets")).expect("skill dir");
        std::fs::write(dir.join("SKILL.md"), skill_md(i)).expect("SKILL.md");
        std::fs::write(dir.join("assets/input.schema.json"), INPUT_SCHEMA).expect("input schema");
        std::fs::write(dir.join("assets/output.schema.json"), OUTPUT_SCHEMA)
            .expect("output schema");
    }
    let generated = started.elapsed();

    let started = Instant::now();
    let report = load_skills_root(root.path(), skillet_engine::skill::SkillSource::System);
    let loaded = started.elapsed();
    assert!(
        report.errors.is_empty(),
        "{:#?}",
        &report.errors[..report.errors.len().min(3)]
    );
    assert_eq!(report.skills.len(), SKILLS);

    let args = json!({"text": "The quick brown fox jumps over the lazy dog."});
    let started = Instant::now();
    let mut bytes = 0;
    for skill in &report.skills {
        skill
            .input_schema
            .as_ref()
            .expect("schema")
            .validate(&args)
            .expect("valid");
        bytes += skill.render_instructions(&args).expect("renders").len();
    }
    let per_call = started.elapsed();

    // Where load time goes: the same work per part, 1,000 times each.
    let input: serde_json::Value = serde_json::from_str(INPUT_SCHEMA).expect("json");
    let started = Instant::now();
    for _ in 0..SKILLS {
        skillet_engine::schema::CompiledSchema::compile(&input).expect("compiles");
    }
    let schema_compile = started.elapsed();
    let body = skill_md(7);
    let started = Instant::now();
    for _ in 0..SKILLS {
        skillet_engine::template::Template::compile(&body).expect("compiles");
    }
    let template_compile = started.elapsed();

    println!("generated {SKILLS} skills in {generated:?}");
    println!("  {SKILLS} x strict schema check + compile: {schema_compile:?}");
    println!("  {SKILLS} x template compile: {template_compile:?}");
    println!(
        "loaded + compiled {SKILLS} skills in {loaded:?} ({:?} per skill)",
        loaded / SKILLS as u32
    );
    println!(
        "validated + rendered {SKILLS} calls in {per_call:?} ({:?} per call, {bytes} bytes)",
        per_call / SKILLS as u32
    );
}
