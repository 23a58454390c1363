//! `fsctl mcp` fed tool calls with arbitrary arguments: for every tool it
//! lists, seeded cases give each of its parameters values of every JSON
//! type (paths inside, outside and made up, `..`, NUL bytes, escapes of
//! bytes that are not UTF-8, 100 KB strings, numbers at the edges, nested
//! objects), leave parameters out, add unknown ones, or pass arguments that
//! are not an object. Every call must get a reply with its id, either a
//! result (an `isError` tool result included) or a JSON-RPC error with a
//! code and a message, within the client's patience; the server must stay
//! up, and answer a plain call at the end. Nothing outside the allowed
//! folders may be named in any reply.
//!
//! `FUZZ_CASES` (default 600 here) and `FUZZ_SEED` choose the cases.

use serde_json::{Map, Value, json};

use super::mcp::setup;
use super::mcp_robust::Raw;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A value for a parameter: mostly of the type its schema names, often of
/// any other.
fn value(rng: &mut Rng, schema: &Value, tree: &str, depth: usize) -> Value {
    let strings = [
        tree.to_owned(),
        format!("{tree}/docs"),
        format!("{tree}/../outside"),
        "/etc/shadow".to_owned(),
        "../../..".to_owned(),
        "docs".to_owned(),
        String::new(),
        "*".to_owned(),
        "**/*".to_owned(),
        "content:tax".to_owned(),
        "(((((".to_owned(),
        "!".repeat(5000),
        "a\u{0}b".to_owned(),
        format!("{tree}/caf\\xe9-\\xff"),
        "\\xZZ".to_owned(),
        "x".repeat(100_000),
        "名前/😀".to_owned(),
        "size:>1".to_owned(),
        "1y".to_owned(),
        "-1".to_owned(),
        "true".to_owned(),
        "9999999999999999999999".to_owned(),
    ];
    let numbers = [
        json!(0),
        json!(-1),
        json!(1),
        json!(16),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1.5),
        json!(1e308),
        json!(-0.0),
    ];
    let typed = schema["type"].as_str().unwrap_or("");
    let pick = if rng.chance(60) { typed } else { "" };
    match pick {
        "string" => json!(strings[rng.below(strings.len())]),
        "integer" | "number" => numbers[rng.below(numbers.len())].clone(),
        "boolean" => json!(rng.chance(50)),
        "array" if depth < 3 => {
            let n = [0, 1, 2, 50][rng.below(4)];
            let item = schema.get("items").cloned().unwrap_or(Value::Null);
            Value::Array((0..n).map(|_| value(rng, &item, tree, depth + 1)).collect())
        }
        "object" if depth < 3 => {
            let mut m = Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (k, s) in props {
                    if rng.chance(70) {
                        m.insert(k.clone(), value(rng, s, tree, depth + 1));
                    }
                }
            }
            Value::Object(m)
        }
        _ => match rng.below(7) {
            0 => Value::Null,
            1 => json!(strings[rng.below(strings.len())]),
            2 => numbers[rng.below(numbers.len())].clone(),
            3 => json!(rng.chance(50)),
            4 if depth < 3 => json!([value(rng, &Value::Null, tree, depth + 1)]),
            5 if depth < 3 => json!({"k": value(rng, &Value::Null, tree, depth + 1)}),
            _ => json!(""),
        },
    }
}

/// Arguments for one call of `tool` (its `inputSchema`).
fn arguments(rng: &mut Rng, schema: &Value, tree: &str) -> Value {
    match rng.below(20) {
        0 => return Value::Null,
        1 => return json!([tree]),
        2 => return json!(tree),
        _ => {}
    }
    let mut m = Map::new();
    if let Some(props) = schema["properties"].as_object() {
        for (k, s) in props {
            if rng.chance(75) {
                m.insert(k.clone(), value(rng, s, tree, 0));
            }
        }
    }
    if rng.chance(15) {
        m.insert("notAParameter".into(), value(rng, &Value::Null, tree, 0));
    }
    Value::Object(m)
}

/// Why this reply is wrong, if it is ([`Raw::request`] matched its id).
fn wrong(reply: &Value) -> Option<String> {
    if let Some(r) = reply.get("result") {
        let content = r["content"].as_array()?;
        if content.is_empty() && r["isError"] == true {
            return Some("an error result that says nothing".into());
        }
        return None;
    }
    let e = &reply["error"];
    match (e["code"].as_i64(), e["message"].as_str()) {
        (Some(code), Some(m)) if (-32768..=-32000).contains(&code) && !m.is_empty() => None,
        _ => Some(format!("neither a result nor a well-formed error: {reply}")),
    }
}

#[test]
fn mcp_tools_answer_arbitrary_arguments_cleanly() {
    let s = setup();
    let tree = s.tree.to_string_lossy().into_owned();
    let mut raw = Raw::start(&s.inst, "2025-06-18");
    let tools = raw.request("tools/list", json!({}));
    let tools: Vec<(String, Value)> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["inputSchema"].clone(),
            )
        })
        .collect();
    assert!(tools.len() >= 10, "{tools:?}");
    let seed = env_u64("FUZZ_SEED", 0x3CF_F022);
    let cases = env_u64("FUZZ_CASES", 600);
    let mut rng = Rng(seed | 1);
    let mut failures = Vec::new();
    let mut errors = 0;
    for case in 0..cases {
        let (name, schema) = &tools[rng.below(tools.len())];
        let name = if rng.chance(3) {
            format!("{name}\u{0}x")
        } else {
            name.clone()
        };
        let args = arguments(&mut rng, schema, &tree);
        let reply = raw.request("tools/call", json!({"name": name, "arguments": args}));
        if reply.get("error").is_some() || reply["result"]["isError"] == true {
            errors += 1;
        }
        let text = reply.to_string();
        let why = wrong(&reply).or_else(|| {
            // The file beside the tree, outside the allowed folder, is
            // never read.
            text.contains("outside the tree")
                .then(|| "named what is outside the allowed folders".to_owned())
        });
        if let Some(why) = why {
            let shown: String = args.to_string().chars().take(300).collect();
            failures.push(format!(
                "case {case} (FUZZ_SEED={seed}): {name} {shown}: {why}"
            ));
        }
        assert!(
            raw.child.try_wait().unwrap().is_none(),
            "case {case}: fsctl mcp exited after {name} {args}"
        );
    }
    eprintln!("{cases} cases, {errors} refused or tool errors");
    assert!(
        failures.is_empty(),
        "{} wrong replies:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Most cases are refused, some are answered; and a plain call still is.
    assert!(errors > 0 && errors < cases, "{errors} of {cases} refused");
    let r = raw.request(
        "tools/call",
        json!({"name": "list_allowed_directories", "arguments": {}}),
    );
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&tree),
        "{r}"
    );
}
