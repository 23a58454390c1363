//! Schemas every client understands, and arguments checked against them.
//!
//! schemars writes what serde can read: `["integer", "null"]` for an
//! `Option<u64>`, `format: "uint64"`, `$ref`s into `$defs`, `oneOf` of
//! `const`s for a documented enum. Clients differ in what they make of
//! that: the Inspector CLI turns a `--tool-arg n=200` into a number only
//! where `type` is the plain string `"integer"`, and its validator prints a
//! warning per unknown `format`. So every schema is rewritten here into
//! plain JSON Schema: one `type` per property, no `null` (optional means
//! not required), no `format` on numbers, enums as `enum`, `$ref`s inlined
//! (but where a type holds itself), and `additionalProperties: false` on
//! inputs.
//!
//! [`check_arguments`] then holds every call to its tool's schema before
//! serde sees it: an unknown parameter is refused by name (with the
//! nearest known one), a number or boolean sent as a string is taken where
//! it is unambiguous (`"200"`, `"true"`), and a value outside the declared
//! bounds is refused with the bound.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

type Object = Map<String, Value>;

/// An input schema: plain, closed (`additionalProperties: false`).
pub fn plain_input(schema: &Object) -> Object {
    let mut v = Value::Object(schema.clone());
    plain(&mut v, true);
    let Value::Object(o) = v else { unreachable!() };
    o
}

/// An output schema: plain, with the `notices` every answer may carry.
pub fn plain_output(schema: &Object) -> Object {
    let mut v = Value::Object(schema.clone());
    plain(&mut v, false);
    let Value::Object(mut o) = v else {
        unreachable!()
    };
    if let Some(Value::Object(props)) = o.get_mut("properties") {
        props.insert(
            "notices".into(),
            json!({
                "type": "array",
                "items": {"type": "string"},
                "description": "What the answer could not help: the daemon restarted, a first scan under way (results may be incomplete)."
            }),
        );
    }
    o
}

fn plain(root: &mut Value, input: bool) {
    let defs = root
        .as_object_mut()
        .and_then(|o| o.remove("$defs"))
        .and_then(|d| match d {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default();
    let mut kept = Object::new();
    let mut stack = Vec::new();
    inline(root, &defs, &mut stack, &mut kept);
    // Definitions that hold themselves stay definitions.
    let names: Vec<String> = kept.keys().cloned().collect();
    for name in names {
        let mut d = kept[&name].clone();
        let mut stack = vec![name.clone()];
        inline(&mut d, &defs, &mut stack, &mut kept);
        kept.insert(name, d);
    }
    for d in kept.values_mut() {
        simplify(d, input);
    }
    simplify(root, input);
    if !kept.is_empty()
        && let Some(o) = root.as_object_mut()
    {
        o.insert("$defs".into(), Value::Object(kept));
    }
}

/// Replaces each `$ref` by its definition, unless the definition is being
/// expanded already (a type that holds itself): that one stays a `$ref`
/// and its definition is kept.
fn inline(v: &mut Value, defs: &Object, stack: &mut Vec<String>, kept: &mut Object) {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref") {
                let name = r.trim_start_matches("#/$defs/").to_owned();
                if let Some(def) = defs.get(&name) {
                    if stack.contains(&name) {
                        kept.entry(name).or_insert_with(|| def.clone());
                        return;
                    }
                    let mut d = def.clone();
                    stack.push(name);
                    inline(&mut d, defs, stack, kept);
                    stack.pop();
                    o.remove("$ref");
                    if let Value::Object(dm) = d {
                        for (k, val) in dm {
                            // The field's own description wins over the type's.
                            o.entry(k).or_insert(val);
                        }
                    }
                    // What was merged is expanded already.
                    return;
                }
            }
            for val in o.values_mut() {
                inline(val, defs, stack, kept);
            }
        }
        Value::Array(a) => {
            for val in a {
                inline(val, defs, stack, kept);
            }
        }
        _ => {}
    }
}

/// One node and everything below it made plain.
fn simplify(v: &mut Value, input: bool) {
    let Value::Object(o) = v else {
        if let Value::Array(a) = v {
            for x in a {
                simplify(x, input);
            }
        }
        return;
    };
    // `anyOf: [X, {type: null}]` -> X
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = o.get(key) {
            let non_null: Vec<Value> = alts
                .iter()
                .filter(|a| a.get("type") != Some(&json!("null")))
                .cloned()
                .collect();
            if non_null.len() == 1 && alts.len() == 2 {
                o.remove(key);
                if let Value::Object(x) = non_null.into_iter().next().unwrap() {
                    for (k, val) in x {
                        o.entry(k).or_insert(val);
                    }
                }
            }
        }
    }
    // A documented enum: `oneOf: [{const, description}...]` -> enum.
    // (Undocumented variants come as one `enum` beside them.)
    let words = |a: &Value| -> Option<Vec<Value>> {
        if let Some(c) = a.get("const").filter(|c| c.is_string()) {
            return Some(vec![c.clone()]);
        }
        let e = a.get("enum")?.as_array()?;
        e.iter().all(Value::is_string).then(|| e.clone())
    };
    if let Some(Value::Array(alts)) = o.get("oneOf")
        && alts.iter().all(|a| words(a).is_some())
    {
        let values: Vec<Value> = alts
            .iter()
            .flat_map(|a| words(a).unwrap_or_default())
            .collect();
        let said: Vec<String> = alts
            .iter()
            .filter_map(|a| {
                let word = a.get("const").and_then(Value::as_str)?;
                a.get("description")
                    .and_then(Value::as_str)
                    .map(|d| format!("{word}: {d}"))
            })
            .collect();
        o.remove("oneOf");
        o.insert("type".into(), json!("string"));
        o.insert("enum".into(), Value::Array(values));
        if !said.is_empty() {
            let d = o
                .get("description")
                .and_then(Value::as_str)
                .map(|d| format!("{d} ({})", said.join("; ")))
                .unwrap_or_else(|| said.join("; "));
            o.insert("description".into(), json!(d));
        }
    }
    // `type: [X, "null"]` -> X
    if let Some(Value::Array(types)) = o.get("type") {
        let non_null: Vec<Value> = types
            .iter()
            .filter(|t| *t != &json!("null"))
            .cloned()
            .collect();
        if non_null.len() == 1 {
            o.insert("type".into(), non_null.into_iter().next().unwrap());
        }
    }
    if o.get("type") == Some(&json!("integer")) || o.get("type") == Some(&json!("number")) {
        o.remove("format");
    }
    if let Some(Value::Array(e)) = o.get_mut("enum") {
        e.retain(|x| !x.is_null());
    }
    o.remove("nullable");
    if input && o.get("type") == Some(&json!("object")) && o.contains_key("properties") {
        o.insert("additionalProperties".into(), json!(false));
    }
    // Defaults of `null` say nothing.
    if o.get("default") == Some(&Value::Null) {
        o.remove("default");
    }
    for val in o.values_mut() {
        simplify(val, input);
    }
}

/// Why arguments were refused: one line naming the parameter.
#[derive(Debug, PartialEq, Eq)]
pub struct BadArgument(pub String);

/// Checks `args` against the tool's plain input schema, turning numbers
/// and booleans sent as strings into what the schema says; refuses unknown
/// parameters, wrong types, missing required ones and values out of bounds.
pub fn check_arguments(tool: &str, schema: &Object, args: &mut Object) -> Result<(), BadArgument> {
    check_object(tool, "", schema, args)
}

fn check_object(
    tool: &str,
    at: &str,
    schema: &Object,
    args: &mut Object,
) -> Result<(), BadArgument> {
    let empty = Object::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let known: BTreeSet<&str> = props.keys().map(String::as_str).collect();
    for k in args.keys() {
        if !known.contains(k.as_str()) {
            let hint = nearest(k, &known)
                .map(|n| format!("did you mean `{n}`? "))
                .unwrap_or_default();
            let list = if known.is_empty() {
                "it takes none".to_owned()
            } else {
                format!(
                    "it takes: {}",
                    known.iter().copied().collect::<Vec<_>>().join(", ")
                )
            };
            return Err(BadArgument(format!(
                "{tool}: unknown parameter `{at}{k}`; {hint}{list}"
            )));
        }
    }
    if let Some(Value::Array(req)) = schema.get("required") {
        for r in req.iter().filter_map(Value::as_str) {
            if args.get(r).is_none_or(Value::is_null) {
                let d = props
                    .get(r)
                    .and_then(|p| p.get("description"))
                    .and_then(Value::as_str)
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default();
                return Err(BadArgument(format!("{tool}: `{at}{r}` is required{d}")));
            }
        }
    }
    for (k, v) in args.iter_mut() {
        if v.is_null() {
            // null for an optional parameter: the same as leaving it out.
            continue;
        }
        if let Some(Value::Object(p)) = props.get(k) {
            check_value(tool, &format!("{at}{k}"), p, v)?;
        }
    }
    args.retain(|_, v| !v.is_null());
    Ok(())
}

fn check_value(tool: &str, name: &str, s: &Object, v: &mut Value) -> Result<(), BadArgument> {
    let ty = s.get("type").and_then(Value::as_str).unwrap_or("");
    let bad = |want: &str, v: &Value| {
        BadArgument(format!("{tool}: `{name}` must be {want}, not {}", short(v)))
    };
    match ty {
        "integer" => {
            if let Value::String(t) = v {
                match t.trim().parse::<i64>() {
                    Ok(n) => *v = json!(n),
                    Err(_) => return Err(bad("an integer", v)),
                }
            }
            // 3.0 is an integer too.
            if let Some(f) = v.as_f64()
                && !v.is_i64()
                && !v.is_u64()
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *v = json!(f as i64);
            }
            if !(v.is_i64() || v.is_u64()) {
                return Err(bad("an integer", v));
            }
            let n = v.as_f64().unwrap_or_default();
            if let Some(min) = s.get("minimum").and_then(Value::as_f64)
                && n < min
            {
                return Err(BadArgument(format!(
                    "{tool}: `{name}` is {v}; the least it takes is {min}"
                )));
            }
            if let Some(max) = s.get("maximum").and_then(Value::as_f64)
                && n > max
            {
                return Err(BadArgument(format!(
                    "{tool}: `{name}` is {v}; the most it takes is {max}"
                )));
            }
        }
        "boolean" => {
            if let Value::String(t) = v {
                match t.trim().to_ascii_lowercase().as_str() {
                    "true" => *v = json!(true),
                    "false" => *v = json!(false),
                    _ => return Err(bad("true or false", v)),
                }
            }
            if !v.is_boolean() {
                return Err(bad("true or false", v));
            }
        }
        "string" => {
            if !v.is_string() {
                return Err(bad("a string", v));
            }
            if let Some(Value::Array(allowed)) = s.get("enum")
                && !allowed.contains(v)
            {
                let names: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
                return Err(BadArgument(format!(
                    "{tool}: `{name}` is {}; it takes one of: {}",
                    short(v),
                    names.join(", ")
                )));
            }
        }
        "array" => {
            // One item sent alone, or a JSON array sent as a string.
            if let Value::String(t) = v {
                let parsed = serde_json::from_str::<Value>(t)
                    .ok()
                    .filter(Value::is_array);
                *v = parsed.unwrap_or_else(|| Value::Array(vec![v.clone()]));
            }
            let Value::Array(items) = v else {
                return Err(bad("a list", v));
            };
            if let Some(Value::Object(is)) = s.get("items") {
                for (i, x) in items.iter_mut().enumerate() {
                    check_value(tool, &format!("{name}[{i}]"), is, x)?;
                }
            }
        }
        "object" => {
            if let Value::String(t) = v
                && let Ok(parsed @ Value::Object(_)) = serde_json::from_str::<Value>(t)
            {
                *v = parsed;
            }
            let Value::Object(o) = v else {
                return Err(bad("an object", v));
            };
            check_object(tool, &format!("{name}."), s, o)?;
        }
        _ => {}
    }
    Ok(())
}

/// A value as quoted in an error, cut short.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

/// The known name nearest `k` (case-insensitive edit distance at most 3).
fn nearest<'a>(k: &str, known: &BTreeSet<&'a str>) -> Option<&'a str> {
    let k = k.to_lowercase();
    known
        .iter()
        .map(|n| (distance(&k, &n.to_lowercase()), *n))
        .filter(|(d, n)| *d <= 3.min(n.len() / 2 + 1))
        .min()
        .map(|(_, n)| n)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct P {
        /// The path.
        path: String,
        #[schemars(range(min = 16))]
        token_budget: Option<u32>,
        numbered: Option<bool>,
        sort: Option<Sort>,
        #[serde(default)]
        moves: Vec<M>,
    }
    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    enum Sort {
        /// By name.
        Name,
        /// Largest first.
        Size,
        Mtime,
    }
    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct M {
        from: String,
        to: String,
    }

    /// A type that holds itself stays a definition.
    #[derive(schemars::JsonSchema, serde::Serialize)]
    struct Node {
        name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        children: Option<Vec<Node>>,
    }
    #[derive(schemars::JsonSchema, serde::Serialize)]
    struct Tree {
        tree: Vec<Node>,
    }

    #[test]
    fn a_type_that_holds_itself_keeps_its_definition() {
        let s = schemars::generate::SchemaSettings::draft2020_12()
            .into_generator()
            .into_root_schema_for::<Tree>();
        let Value::Object(o) = serde_json::to_value(s).unwrap() else {
            panic!()
        };
        let p = plain_output(&o);
        assert_eq!(p["properties"]["tree"]["items"]["type"], "object");
        assert_eq!(
            p["properties"]["tree"]["items"]["properties"]["children"]["items"]["$ref"],
            "#/$defs/Node"
        );
        assert_eq!(
            p["$defs"]["Node"]["properties"]["children"]["type"],
            "array"
        );
        assert!(p["properties"]["notices"].is_object());
    }

    fn schema() -> Object {
        let s = schemars::generate::SchemaSettings::draft2020_12()
            .into_generator()
            .into_root_schema_for::<P>();
        let Value::Object(o) = serde_json::to_value(s).unwrap() else {
            panic!()
        };
        plain_input(&o)
    }

    #[test]
    fn schemas_are_plain() {
        let s = schema();
        let text = serde_json::to_string(&s).unwrap();
        assert!(!text.contains("null"), "{text}");
        assert!(!text.contains("format"), "{text}");
        assert!(!text.contains("$ref"), "{text}");
        let p = &s["properties"];
        assert_eq!(p["tokenBudget"]["type"], "integer");
        assert_eq!(p["tokenBudget"]["minimum"], 16);
        assert_eq!(p["numbered"]["type"], "boolean");
        assert_eq!(p["sort"]["type"], "string");
        let mut words: Vec<String> = p["sort"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_owned())
            .collect();
        words.sort();
        assert_eq!(words, ["mtime", "name", "size"]);
        assert_eq!(p["moves"]["items"]["type"], "object");
        assert_eq!(p["moves"]["items"]["additionalProperties"], false);
        assert_eq!(s["required"], json!(["path"]));
        assert_eq!(s["additionalProperties"], false);
    }

    #[test]
    fn arguments_are_checked_and_coerced() {
        let s = schema();
        let check = |v: Value| {
            let Value::Object(mut o) = v else { panic!() };
            check_arguments("t", &s, &mut o).map(|()| Value::Object(o))
        };
        assert_eq!(
            check(json!({"path": "a", "tokenBudget": "200", "numbered": "true"})).unwrap(),
            json!({"path": "a", "tokenBudget": 200, "numbered": true})
        );
        assert_eq!(
            check(json!({"path": "a", "tokenBudget": null})).unwrap(),
            json!({"path": "a"})
        );
        assert_eq!(
            check(json!({"path": "a", "tokenBudget": 0})).unwrap_err().0,
            "t: `tokenBudget` is 0; the least it takes is 16"
        );
        let e = check(json!({"path": "a", "tokenBugdet": 20}))
            .unwrap_err()
            .0;
        assert!(
            e.contains("unknown parameter `tokenBugdet`; did you mean `tokenBudget`?"),
            "{e}"
        );
        assert!(
            check(json!({}))
                .unwrap_err()
                .0
                .contains("`path` is required")
        );
        assert!(check(json!({"path": "a", "tokenBudget": "lots"})).is_err());
        assert!(
            check(json!({"path": "a", "sort": "date"}))
                .unwrap_err()
                .0
                .contains("size")
        );
        let e = check(json!({"path": "a", "moves": [{"from": "x", "too": "y"}]}))
            .unwrap_err()
            .0;
        assert!(e.contains("`moves[0].too`"), "{e}");
        assert_eq!(
            check(json!({"path": "a", "moves": "[{\"from\": \"x\", \"to\": \"y\"}]"})).unwrap()["moves"]
                [0]["to"],
            "y"
        );
    }
}
