//! The JSON Schema synthesizer: a deterministic instance that validates against a schema, used as
//! the default answer when a request carries a schema and no rule applies.
//!
//! Handles `type` (and type lists), `const`, `enum`, `properties`/`required`/
//! `additionalProperties`/`min`/`maxProperties`, arrays (`items`, `prefixItems`, tuple `items`,
//! `contains`, `min`/`maxItems`, `uniqueItems`), strings (`min`/`maxLength`, common `format`s,
//! `pattern` via `pattern`), numbers (inclusive/exclusive bounds, `multipleOf`), `allOf` (merged),
//! `anyOf`/`oneOf` (first usable branch), local `$ref`s (`#/$defs/..`, `#/definitions/..`, any
//! JSON pointer) with a depth limit for recursive schemas. It is best effort on `not`,
//! `if`/`then`/`else` and overlapping `oneOf` branches. Same schema ⇒ same instance.

use serde_json::{Map, Number, Value, json};

/// Deeper than this, objects keep only required properties and arrays only `minItems` items, so
/// recursive schemas terminate.
const DEPTH_LIMIT: usize = 24;

/// Schemas arrive from requests, so sizes and work are capped: a hostile schema gets a (possibly
/// invalid) instance quickly instead of exhausting the server.
const MAX_ITEMS: usize = 1_000;
const MAX_STRING: usize = 10_000;
const MAX_FLATTEN_STEPS: u32 = 10_000;

/// A deterministic instance of `schema` (`$ref`s resolve against `schema` itself).
pub fn synthesize(schema: &Value) -> Value {
    let synth = Synth {
        root: schema,
        budget: std::cell::Cell::new(MAX_FLATTEN_STEPS),
    };
    synth.instance(schema, "value", 0, 0)
}

struct Synth<'a> {
    root: &'a Value,
    /// Remaining `flatten` steps; `allOf` of `$ref`s can otherwise fan out exponentially.
    budget: std::cell::Cell<u32>,
}

impl Synth<'_> {
    /// `hint` names the value (its property name) so strings read sensibly; `variant` makes
    /// sibling array items differ for `uniqueItems`.
    fn instance(&self, schema: &Value, hint: &str, variant: usize, depth: usize) -> Value {
        let schema = match schema {
            Value::Bool(true) => return Value::String(hint.to_owned()),
            Value::Object(_) => self.flatten(schema, depth),
            _ => return Value::Null,
        };
        let Some(obj) = schema.as_object() else {
            return Value::Null;
        };
        if let Some(c) = obj.get("const") {
            return c.clone();
        }
        if let Some(Value::Array(options)) = obj.get("enum")
            && !options.is_empty()
        {
            return options[variant % options.len()].clone();
        }
        match pick_type(obj).as_deref() {
            Some("object") => self.object(obj, variant, depth),
            Some("array") => self.array(obj, hint, depth),
            Some("string") => string(obj, hint, variant),
            Some("integer") => number(obj, variant, true),
            Some("number") => number(obj, variant, false),
            Some("boolean") => Value::Bool(variant.is_multiple_of(2)),
            Some("null") => Value::Null,
            _ => Value::String(hint.to_owned()),
        }
    }

    /// Resolves `$ref`, merges `allOf`, picks an `anyOf`/`oneOf` branch: the result is one
    /// schema object without combinators.
    fn flatten(&self, schema: &Value, depth: usize) -> Value {
        let Some(obj) = schema.as_object() else {
            return schema.clone();
        };
        let budget = self.budget.get();
        if depth > DEPTH_LIMIT * 2 || budget == 0 {
            return Value::Object(obj.clone());
        }
        self.budget.set(budget - 1);
        let mut base = obj.clone();
        let mut parts = Vec::new();
        if let Some(Value::String(r)) = base.remove("$ref")
            && let Some(target) = self.resolve(&r)
        {
            parts.push(self.flatten(target, depth + 1));
        }
        if let Some(Value::Array(all)) = base.remove("allOf") {
            parts.extend(all.iter().map(|s| self.flatten(s, depth + 1)));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = base.remove(key) {
                // Prefer a non-null branch: a value says more than null.
                let chosen = branches
                    .iter()
                    .find(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                    .or_else(|| branches.first());
                if let Some(b) = chosen {
                    parts.push(self.flatten(b, depth + 1));
                }
            }
        }
        let mut merged = Value::Object(base);
        for p in parts {
            merge(&mut merged, &p);
        }
        merged
    }

    fn resolve(&self, reference: &str) -> Option<&Value> {
        let pointer = reference.strip_prefix('#')?;
        let pointer = pointer.replace("%25", "%").replace("%22", "\"");
        self.root.pointer(&pointer)
    }

    fn object(&self, obj: &Map<String, Value>, variant: usize, depth: usize) -> Value {
        let empty = Map::new();
        let props = obj
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let max = obj
            .get("maxProperties")
            .and_then(Value::as_u64)
            .map_or(usize::MAX, to_usize);
        let min = obj
            .get("minProperties")
            .and_then(Value::as_u64)
            .map_or(0, to_usize)
            .min(MAX_ITEMS);
        let extra_schema = match obj.get("additionalProperties") {
            Some(Value::Bool(false)) => None,
            Some(s @ Value::Object(_)) => Some(s.clone()),
            _ => Some(json!({"type": "string"})),
        };
        let mut out = Map::new();
        for name in &required {
            let schema = props.get(*name).cloned().or_else(|| extra_schema.clone());
            let schema = schema.unwrap_or(Value::Bool(true));
            out.insert(
                (*name).to_owned(),
                self.instance(&schema, name, variant, depth + 1),
            );
        }
        if depth < DEPTH_LIMIT {
            for (name, schema) in props {
                if out.len() >= max {
                    break;
                }
                if !out.contains_key(name) && schema != &Value::Bool(false) {
                    out.insert(
                        name.clone(),
                        self.instance(schema, name, variant, depth + 1),
                    );
                }
            }
        }
        if let Some(schema) = &extra_schema {
            let mut n = 1;
            while out.len() < min {
                let name = format!("extra_{n}");
                out.insert(
                    name.clone(),
                    self.instance(schema, &name, variant, depth + 1),
                );
                n += 1;
            }
        }
        Value::Object(out)
    }

    fn array(&self, obj: &Map<String, Value>, hint: &str, depth: usize) -> Value {
        let min = obj
            .get("minItems")
            .and_then(Value::as_u64)
            .map_or(0, to_usize)
            .min(MAX_ITEMS);
        let max = obj
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(usize::MAX, to_usize);
        let tuple: Vec<Value> = match (obj.get("prefixItems"), obj.get("items")) {
            (Some(Value::Array(p)), _) | (None, Some(Value::Array(p))) => p.clone(),
            _ => Vec::new(),
        };
        let rest = match obj.get("items") {
            Some(Value::Array(_)) | None => obj.get("additionalItems").cloned(),
            Some(s) => Some(s.clone()),
        };
        let rest_allowed = rest.as_ref() != Some(&Value::Bool(false));
        let wanted = if depth < DEPTH_LIMIT { min.max(1) } else { min };
        let mut len = wanted.max(tuple.len().min(max)).min(max);
        if !rest_allowed {
            len = len.min(tuple.len());
        }
        let contains = obj.get("contains");
        let item_hint = format!("{hint}_item");
        let items = (0..len)
            .map(|i| {
                let mut schema = tuple
                    .get(i)
                    .cloned()
                    .or_else(|| rest.clone())
                    .unwrap_or(Value::Bool(true));
                if i == 0
                    && let Some(c) = contains
                {
                    schema = if schema == Value::Bool(true) {
                        c.clone()
                    } else {
                        self.flatten(&schema, depth)
                    };
                    if let Value::Object(_) = schema {
                        merge(&mut schema, &self.flatten(c, depth));
                    }
                }
                self.instance(&schema, &item_hint, i, depth + 1)
            })
            .collect();
        Value::Array(items)
    }
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The type to produce: the declared one (first non-null of a list), else inferred from keywords.
fn pick_type(obj: &Map<String, Value>) -> Option<String> {
    match obj.get("type") {
        Some(Value::String(t)) => return Some(t.clone()),
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            return names
                .iter()
                .find(|t| **t != "null")
                .or_else(|| names.first())
                .map(|t| (*t).to_owned());
        }
        _ => {}
    }
    let has = |k: &str| obj.contains_key(k);
    if has("properties") || has("required") || has("additionalProperties") {
        Some("object".into())
    } else if has("items") || has("prefixItems") || has("minItems") {
        Some("array".into())
    } else if has("minLength") || has("maxLength") || has("pattern") || has("format") {
        Some("string".into())
    } else if has("minimum") || has("maximum") || has("multipleOf") {
        Some("number".into())
    } else {
        None
    }
}

/// Merges schema `b` into `a`: properties and required are united, `b` wins elsewhere, except
/// that bounds keep the tighter value.
fn merge(a: &mut Value, b: &Value) {
    let (Some(a), Some(b)) = (a.as_object_mut(), b.as_object()) else {
        return;
    };
    for (k, v) in b {
        match (k.as_str(), a.get_mut(k)) {
            ("properties", Some(Value::Object(ap))) => {
                if let Value::Object(bp) = v {
                    for (pk, pv) in bp {
                        match ap.get_mut(pk) {
                            Some(existing) => merge(existing, pv),
                            None => {
                                ap.insert(pk.clone(), pv.clone());
                            }
                        }
                    }
                }
            }
            ("required", Some(Value::Array(ar))) => {
                if let Value::Array(br) = v {
                    for r in br {
                        if !ar.contains(r) {
                            ar.push(r.clone());
                        }
                    }
                }
            }
            (
                "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties",
                Some(x),
            ) => {
                if v.as_f64() > x.as_f64() {
                    *x = v.clone();
                }
            }
            (
                "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties",
                Some(x),
            ) => {
                if v.as_f64() < x.as_f64() {
                    *x = v.clone();
                }
            }
            _ => {
                a.insert(k.clone(), v.clone());
            }
        }
    }
}

fn string(obj: &Map<String, Value>, hint: &str, variant: usize) -> Value {
    let min = obj
        .get("minLength")
        .and_then(Value::as_u64)
        .map_or(0, to_usize)
        .min(MAX_STRING);
    let max = obj
        .get("maxLength")
        .and_then(Value::as_u64)
        .map_or(usize::MAX, to_usize);
    let fits = |s: &str| (min..=max).contains(&s.chars().count());
    if let Some(pattern) = obj.get("pattern").and_then(Value::as_str) {
        let re = regex::Regex::new(pattern).ok();
        for reps in [1, 2, 3, 5, 8, 13, 21, 34, 64, 128] {
            if let Some(s) = crate::pattern::generate(pattern, reps)
                && fits(&s)
                && re.as_ref().is_none_or(|re| re.is_match(&s))
            {
                return Value::String(s);
            }
        }
    }
    let formatted = obj
        .get("format")
        .and_then(Value::as_str)
        .and_then(|f| format_example(f, variant));
    let mut s = match formatted {
        Some(s) => s,
        None if variant == 0 => hint.to_owned(),
        None => format!("{hint}-{variant}"),
    };
    let len = s.chars().count();
    if len > max {
        s = s.chars().take(max).collect();
        // Keep items distinct when truncation would merge them.
        if variant > 0 && max > 0 {
            let digit =
                char::from_digit(u32::try_from(variant % 10).unwrap_or(0), 10).unwrap_or('0');
            s.pop();
            s.push(digit);
        }
    }
    let len = s.chars().count();
    if len < min {
        s.push_str(&"x".repeat(min - len));
    }
    Value::String(s)
}

fn format_example(format: &str, variant: usize) -> Option<String> {
    let v = variant % 100;
    Some(match format {
        "date-time" => format!("2024-01-01T00:00:{v:02}Z"),
        "date" => format!("2024-01-{:02}", v % 28 + 1),
        "time" => format!("00:00:{v:02}Z"),
        "email" | "idn-email" => format!("user{v}@example.com"),
        "uri" | "url" | "iri" => format!("https://example.com/{v}"),
        "uri-reference" | "iri-reference" => format!("/item/{v}"),
        "hostname" | "idn-hostname" => format!("host{v}.example.com"),
        "ipv4" => format!("192.0.2.{}", v + 1),
        "ipv6" => format!("2001:db8::{:x}", v + 1),
        "uuid" => format!("00000000-0000-4000-8000-{:012}", v),
        "duration" => format!("PT{}S", v + 1),
        _ => return None,
    })
}

fn number(obj: &Map<String, Value>, variant: usize, integer: bool) -> Value {
    let f = |k: &str| obj.get(k).and_then(Value::as_f64);
    // Draft 4 spells exclusive bounds as booleans next to minimum/maximum.
    let (mut lo, mut lo_excl) = (
        f("minimum"),
        obj.get("exclusiveMinimum") == Some(&Value::Bool(true)),
    );
    if let Some(x) = f("exclusiveMinimum")
        && lo.is_none_or(|l| x >= l)
    {
        (lo, lo_excl) = (Some(x), true);
    }
    let (mut hi, mut hi_excl) = (
        f("maximum"),
        obj.get("exclusiveMaximum") == Some(&Value::Bool(true)),
    );
    if let Some(x) = f("exclusiveMaximum")
        && hi.is_none_or(|h| x <= h)
    {
        (hi, hi_excl) = (Some(x), true);
    }
    let step = f("multipleOf").filter(|m| *m > 0.0);
    let offset = variant as f64;
    let above = |x: f64| lo.is_none_or(|l| if lo_excl { x > l } else { x >= l });
    let below = |x: f64| hi.is_none_or(|h| if hi_excl { x < h } else { x <= h });
    let start = match (lo, hi) {
        (Some(l), _) => l,
        (None, Some(h)) => h.min(0.0),
        (None, None) => 0.0,
    };
    let unit = match (step, integer) {
        (Some(m), true) => m.max(1.0).ceil().max(m),
        (Some(m), false) => m,
        (None, true) => 1.0,
        (None, false) => 0.5,
    };
    // Walk multiples of `unit` upward from `start`; then downward if the range is tiny.
    let base = if step.is_some() || integer {
        (start / unit).ceil() * unit
    } else {
        start
    };
    let candidates = (0..64).map(|i| base + (offset + f64::from(i)) * unit);
    let down = (1..64).map(|i| base - f64::from(i) * unit);
    let pick = candidates
        .chain(down)
        .find(|x| above(*x) && below(*x) && (!integer || x.fract() == 0.0));
    let x = pick.unwrap_or(start);
    if integer || x.fract() == 0.0 && x.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)]
        let i = x as i64;
        Value::Number(Number::from(i))
    } else {
        Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}
