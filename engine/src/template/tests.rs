//! One test per clause of the template contract (module doc of `template`).

use serde_json::json;

use super::*;

fn render(source: &str, args: serde_json::Value) -> String {
    Template::compile(source)
        .unwrap_or_else(|e| panic!("{source:?} should compile: {e}"))
        .render(&args)
        .unwrap_or_else(|e| panic!("{source:?} should render: {e}"))
}

fn compile_error(source: &str) -> TemplateError {
    match Template::compile(source) {
        Ok(t) => panic!("{source:?} should be rejected, compiled to {t:?}"),
        Err(e) => e,
    }
}

#[test]
fn plain_placeholder_is_substituted() {
    assert_eq!(
        render("Hello {{name}}!", json!({"name": "Ada"})),
        "Hello Ada!"
    );
}

#[test]
fn whitespace_inside_braces_is_allowed() {
    let args = json!({"name": "Ada"});
    assert_eq!(render("{{ name }}", args.clone()), "Ada");
    assert_eq!(render("{{   name\t}}", args.clone()), "Ada");
    assert_eq!(render("{{\n name \n}}", args), "Ada");
}

#[test]
fn dotted_paths_walk_objects_and_array_indexes() {
    let args = json!({"user": {"name": "Grace", "langs": ["cobol", "fortran"]}});
    assert_eq!(render("{{ user.name }}", args.clone()), "Grace");
    assert_eq!(render("{{ user.langs.1 }}", args), "fortran");
}

#[test]
fn backslash_escape_yields_literal_braces() {
    assert_eq!(
        render(r"use \{{ name }} here", json!({})),
        "use {{ name }} here"
    );
    assert_eq!(
        render(r"\{{ raw }} and {{ x }}", json!({"x": 1})),
        "{{ raw }} and 1"
    );
}

#[test]
fn text_around_placeholders_is_kept_byte_for_byte() {
    let source = "  # Title\n\n  indented {{ a }}  \n\ttabs\t{{ b }}\n\n";
    assert_eq!(
        render(source, json!({"a": "A", "b": "B"})),
        "  # Title\n\n  indented A  \n\ttabs\tB\n\n"
    );
}

#[test]
fn no_html_escaping() {
    let args = json!({"code": "if a < b && c > d { \"q\" } 'x' `y` ="});
    assert_eq!(
        render("{{ code }}", args.clone()),
        args["code"].as_str().unwrap()
    );
}

#[test]
fn null_renders_as_null_and_scalars_as_json() {
    let args = json!({"n": null, "t": true, "f": false, "i": 42, "x": 1.5, "neg": -3});
    assert_eq!(
        render("{{n}} {{t}} {{f}} {{i}} {{x}} {{neg}}", args),
        "null true false 42 1.5 -3"
    );
}

#[test]
fn objects_and_arrays_render_as_compact_json() {
    let args = json!({"o": {"a": 1, "b": [1, 2]}, "arr": ["x", {"y": null}], "e": {}});
    assert_eq!(
        render("{{ o }}|{{ arr }}|{{ e }}", args),
        r#"{"a":1,"b":[1,2]}|["x",{"y":null}]|{}"#
    );
}

#[test]
fn missing_top_level_variable_errors_with_path_and_position() {
    let t = Template::compile("line one\n  hi {{ user }}").unwrap();
    let err = t.render(&json!({})).unwrap_err();
    assert_eq!(err.path, "user");
    assert_eq!((err.line, err.column), (2, 6));
    assert!(err.to_string().contains("`user`"), "{err}");
}

#[test]
fn missing_nested_variable_names_the_full_dotted_path() {
    let t = Template::compile("{{ a }}\n{{ user.address.city }}").unwrap();
    let err = t
        .render(&json!({"a": 1, "user": {"address": {}}}))
        .unwrap_err();
    assert_eq!(err.path, "user.address.city");
    assert_eq!((err.line, err.column), (2, 1));
    assert!(
        err.reason.contains("`user.address` has no key `city`"),
        "{}",
        err.reason
    );
}

#[test]
fn path_through_a_scalar_is_missing_not_empty() {
    let t = Template::compile("{{ user.name }}").unwrap();
    let err = t.render(&json!({"user": "Ada"})).unwrap_err();
    assert!(err.reason.contains("is a string"), "{}", err.reason);
    let err = t.render(&json!({"user": null})).unwrap_err();
    assert!(err.reason.contains("is null"), "{}", err.reason);
}

#[test]
fn array_index_out_of_range_is_missing() {
    let t = Template::compile("{{ items.5 }}").unwrap();
    let err = t.render(&json!({"items": [1]})).unwrap_err();
    assert_eq!(err.path, "items.5");
}

#[test]
fn helper_call_is_rejected_at_compile_with_position() {
    let err = compile_error("ok\n  {{ len items }}");
    assert_eq!((err.line, err.column), (2, 3));
    assert!(err.reason.contains("helper call `len`"), "{}", err.reason);
}

#[test]
fn helper_names_do_not_shadow_variables() {
    // `log`, `len`, `lookup` are handlebars built-in helper names; here they are just keys.
    let args = json!({"log": "L", "len": 3, "lookup": "K"});
    assert_eq!(render("{{ log }} {{ len }} {{ lookup }}", args), "L 3 K");
}

#[test]
fn block_is_rejected_at_compile_with_position() {
    let err = compile_error("a\nb {{#each items}}{{this}}{{/each}}");
    assert_eq!((err.line, err.column), (2, 3));
    assert!(err.reason.contains("block `{{#each}}`"), "{}", err.reason);
    let err = compile_error("{{#if x}}y{{else}}z{{/if}}");
    assert!(err.reason.contains("block"), "{}", err.reason);
}

#[test]
fn partial_is_rejected_at_compile_with_position() {
    let err = compile_error("x {{> header }}");
    assert_eq!((err.line, err.column), (1, 3));
    assert!(err.reason.contains("partial"), "{}", err.reason);
}

#[test]
fn triple_stash_and_ampersand_are_rejected() {
    let err = compile_error("{{{ html }}}");
    assert!(err.reason.contains("triple-stash"), "{}", err.reason);
    let err = compile_error("\n{{& html }}");
    assert_eq!(err.line, 2);
    assert!(err.reason.contains("triple-stash"), "{}", err.reason);
}

#[test]
fn comments_are_rejected() {
    let err = compile_error("a {{! note }}");
    assert_eq!((err.line, err.column), (1, 3));
    assert!(err.reason.contains("comment"), "{}", err.reason);
    assert!(compile_error("{{!-- long --}}").reason.contains("comment"));
}

#[test]
fn decorators_and_raw_blocks_are_rejected() {
    assert!(compile_error("{{* inline }}").reason.contains("decorator"));
    assert!(
        compile_error("{{{{raw}}}} x {{{{/raw}}}}")
            .reason
            .contains("not allowed")
    );
}

#[test]
fn handlebars_only_paths_are_rejected() {
    for source in [
        "{{ this }}",
        "{{ ../up }}",
        "{{ @root.x }}",
        "{{ a/b }}",
        "{{ [a b] }}",
        "{{~ name ~}}",
        "{{ @index }}",
    ] {
        let err = compile_error(source);
        assert_eq!((err.line, err.column), (1, 1), "{source}");
        assert!(
            err.reason.contains("not allowed"),
            "{source}: {}",
            err.reason
        );
    }
}

#[test]
fn unterminated_braces_are_a_syntax_error_with_position() {
    let err = compile_error("line one\nhello {{ name");
    assert_eq!(err.line, 2);
    assert!(
        err.reason.contains("invalid template syntax"),
        "{}",
        err.reason
    );
}

#[test]
fn placeholders_are_listed_in_source_order() {
    let t = Template::compile("{{ b }} {{ a.c }} {{ b }}").unwrap();
    let paths: Vec<_> = t.placeholders().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["b", "a.c", "b"]);
}

#[test]
fn positions_count_characters_not_bytes() {
    let t = Template::compile("ééé {{ x }}").unwrap();
    let err = t.render(&json!({})).unwrap_err();
    assert_eq!((err.line, err.column), (1, 5));
}

#[test]
fn literal_template_renders_text_verbatim() {
    let t = Template::literal("run `${{ github.token }}` and {{#each}}");
    assert!(t.is_literal());
    assert_eq!(t.placeholders().count(), 0);
    assert_eq!(
        t.render(&json!({})).unwrap(),
        "run `${{ github.token }}` and {{#each}}"
    );
}

#[test]
fn display_round_trips_through_compile() {
    let t = Template::compile(r"a \{{ b }} {{ c.d }} e").unwrap();
    assert_eq!(Template::compile(&t.to_string()).unwrap(), t);
}

#[test]
fn template_is_send_sync_and_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Template>();
    let t = std::sync::Arc::new(Template::compile("{{ x }}").unwrap());
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let t = t.clone();
            std::thread::spawn(move || t.render(&json!({"x": i})).unwrap())
        })
        .collect();
    let outputs: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(outputs, ["0", "1", "2", "3"]);
}

#[test]
fn cache_compiles_each_distinct_source_once() {
    let cache = TemplateCache::new();
    let first = cache.compile("Hi {{ name }}").unwrap();
    assert_eq!(cache.compile("Hi {{ name }}").unwrap(), first);
    assert_eq!(cache.len(), 1);
    let other = cache.compile("Bye {{ name }}").unwrap();
    assert_ne!(other, first);
    assert_eq!(cache.len(), 2);
    assert_eq!(first.render(&json!({"name": "Ada"})).unwrap(), "Hi Ada");
}

#[test]
fn cache_repeats_a_compile_error_with_its_position() {
    let cache = TemplateCache::new();
    let source = "ok\n{{#each items}}x{{/each}}";
    let first = cache.compile(source).unwrap_err();
    assert_eq!(cache.compile(source).unwrap_err(), first);
    assert_eq!(Template::compile(source).unwrap_err(), first);
    assert_eq!((first.line, first.column), (2, 1));
}
