//! The layering ARCHITECTURE.md promises, enforced over whole files (only the items under
//! `#[cfg(test)]` are left out):
//! - every module of `src/` sits in the layer table of ARCHITECTURE.md (the
//!   ```` ```layers ```` block), imports only modules of its own layer or below, and none
//!   of the pairs the table forbids (`never A -> B C`);
//! - the files of one module import each other without a cycle, except where the table
//!   says a folder is one unit (`unit engine/native`);
//! - no code reaches into an engine's files from outside that engine: the other engines,
//!   the run service and the checks use what the engine's `mod.rs` exports, and what the
//!   engines share lives beside them in `engine/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

struct Table {
    layer: BTreeMap<String, usize>,
    never: BTreeSet<(String, String)>,
    /// Folders whose files are one unit (a cycle among them is allowed), as `engine/native`.
    units: BTreeSet<String>,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn table() -> Table {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = doc
        .find("```layers\n")
        .expect("ARCHITECTURE.md has a ```layers block")
        + 10;
    let end = start + doc[start..].find("```").unwrap();
    let mut layer = BTreeMap::new();
    let mut never = BTreeSet::new();
    let mut units = BTreeSet::new();
    for line in doc[start..end].lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[0] {
            "never" => {
                assert_eq!(words[2], "->", "{line}");
                for to in &words[3..] {
                    never.insert((words[1].to_string(), to.to_string()));
                }
            }
            "unit" => {
                units.extend(words[1..].iter().map(|w| w.to_string()));
            }
            n => {
                let n: usize = n.parse().expect("a layer number");
                for m in &words[1..] {
                    assert!(layer.insert(m.to_string(), n).is_none(), "{m} listed twice");
                }
            }
        }
    }
    Table {
        layer,
        never,
        units,
    }
}

/// The top-level modules of `src/` and their files.
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let src = root().join("src");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            let mut files = Vec::new();
            walk(&path, &mut files);
            out.insert(name, files);
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            out.insert(name, vec![path]);
        }
    }
    out
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The code of a file: comments left out, and every item under `#[cfg(test)]` (a `mod
/// tests { … }`, a test-only `use` or function) skipped to its end, by its braces.
fn production_code(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        if code.starts_with("#[cfg(test)]") {
            // The item that follows: to its `;` or to the `}` that closes its first `{`.
            let mut depth = 0i64;
            let mut opened = false;
            for item in lines.by_ref() {
                let item = item.split("//").next().unwrap_or_default();
                for c in item.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if (opened && depth <= 0) || (!opened && item.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        out.push(line);
    }
    out
}

/// The paths below `crate::` that `code` names (`crate::a::b`, `crate::{a, b::c}`), as
/// their segments.
fn crate_paths(code: &[&str]) -> Vec<Vec<String>> {
    let segments = |s: &str| -> Vec<String> {
        let path: String = s
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        path.split("::")
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut out = Vec::new();
    for line in code {
        let mut rest = *line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + 7..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                for item in inner.split(',') {
                    let p = segments(item.trim());
                    if !p.is_empty() {
                        out.push(p);
                    }
                }
            } else {
                let p = segments(rest);
                if !p.is_empty() {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The crate modules `text` imports.
fn imports(text: &str) -> BTreeSet<String> {
    crate_paths(&production_code(text))
        .into_iter()
        .map(|p| p[0].clone())
        .collect()
}

/// A file's module path inside `src/`: `engine/native/run.rs` → `engine::native::run`.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root().join("src")).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The paths `code` of the file of module `me` names, from the crate's root: its
/// `crate::` paths, and its `super::` paths resolved against where the file sits.
fn absolute_paths(me: &[String], code: &[&str]) -> Vec<Vec<String>> {
    let mut out = crate_paths(code);
    for line in code {
        let mut rest = *line;
        while let Some(at) = rest.find("super::") {
            // Only where a path starts (not the tail of `super::super::`, read below).
            let starts = rest[..at]
                .chars()
                .last()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
            rest = &rest[at..];
            let mut up = 0;
            while let Some(tail) = rest.strip_prefix("super::") {
                up += 1;
                rest = tail;
            }
            if !starts {
                continue;
            }
            let tail: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let Some(base) = me.len().checked_sub(up) else {
                continue;
            };
            let mut path = me[..base].to_vec();
            path.extend(
                tail.split("::")
                    .filter(|p| !p.is_empty())
                    .map(str::to_string),
            );
            out.push(path);
        }
    }
    out
}

fn shown(file: &Path) -> String {
    file.strip_prefix(root()).unwrap().display().to_string()
}

#[test]
fn every_import_points_down_the_layer_table() {
    let table = table();
    let mut problems = Vec::new();
    for (module, files) in modules() {
        let Some(&own) = table.layer.get(&module) else {
            problems.push(format!(
                "`{module}` is not in ARCHITECTURE.md's layer table"
            ));
            continue;
        };
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for dep in imports(&text) {
                if dep == module {
                    continue;
                }
                let Some(&theirs) = table.layer.get(&dep) else {
                    continue; // not a module of ours (e.g. a macro path)
                };
                let file = shown(&file);
                if theirs > own {
                    problems.push(format!(
                        "{file}: `{module}` (layer {own}) imports `{dep}` (layer {theirs}), above it"
                    ));
                }
                if table.never.contains(&(module.clone(), dep.clone())) {
                    problems.push(format!("{file}: `{module}` must never import `{dep}`"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The files of `files` (one top-level module) each file imports: `crate::` paths into
/// the module, and `super::`/`self::` paths resolved against the file's own place.
fn file_graph(files: &[PathBuf]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let known: BTreeSet<Vec<String>> = files.iter().map(|f| module_path(f)).collect();
    // The longest known module path that `path` starts with.
    let resolve = |path: &[String]| -> Option<Vec<String>> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| known.contains(p))
    };
    let mut graph = BTreeMap::new();
    for file in files {
        let me = module_path(file);
        let text = std::fs::read_to_string(file).unwrap();
        let code = production_code(&text);
        let mut deps = BTreeSet::new();
        for path in crate_paths(&code) {
            if let Some(p) = resolve(&path) {
                deps.insert(p);
            }
        }
        // `super::x` from `a/b/c.rs` (module a::b::c) names `a::b::x`.
        let parent: Vec<String> = me[..me.len().saturating_sub(1)].to_vec();
        for line in &code {
            let mut rest = *line;
            while let Some(at) = rest.find("super::") {
                rest = &rest[at + 7..];
                let head: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let mut path = parent.clone();
                path.push(head);
                if let Some(p) = resolve(&path).filter(|p| p.len() > parent.len()) {
                    deps.insert(p);
                }
            }
        }
        deps.remove(&me);
        graph.insert(me, deps);
    }
    graph
}

/// The strongly connected components of more than one file (Tarjan).
fn cycles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct State<'a> {
        graph: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on: BTreeSet<&'a Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Vec<String>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let Some((w, _)) = s.graph.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.out
}

#[test]
fn the_files_of_a_module_import_each_other_without_a_cycle() {
    let table = table();
    let mut problems = Vec::new();
    for files in modules().values() {
        for cycle in cycles(&file_graph(files)) {
            // A folder the table calls one unit may hold a cycle, inside itself only.
            let inside_a_unit = table.units.iter().any(|unit| {
                let unit: Vec<String> = unit.split('/').map(str::to_string).collect();
                cycle.iter().all(|f| f.starts_with(&unit))
            });
            if !inside_a_unit {
                let names: Vec<String> = cycle.iter().map(|f| f.join("::")).collect();
                problems.push(format!("a cycle: {}", names.join(" ⇄ ")));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_code_reaches_into_another_engines_files() {
    let engines: Vec<String> = std::fs::read_dir(root().join("src/engine"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert!(engines.contains(&"native".to_string()), "{engines:?}");
    let mut problems = Vec::new();
    for files in modules().values() {
        for file in files {
            let me = module_path(file);
            let text = std::fs::read_to_string(file).unwrap();
            for path in absolute_paths(&me, &production_code(&text)) {
                // `crate::engine::<engine>::<file>::…` from outside that engine.
                let [first, engine, inner, ..] = path.as_slice() else {
                    continue;
                };
                let item_of_a_file =
                    path.len() > 3 || inner.chars().next().is_some_and(|c| c.is_ascii_lowercase());
                if first == "engine"
                    && engines.contains(engine)
                    && item_of_a_file
                    && !me.starts_with(&["engine".to_string(), engine.clone()])
                    && std::fs::metadata(root().join(format!("src/engine/{engine}/{inner}.rs")))
                        .is_ok()
                {
                    problems.push(format!(
                        "{}: reaches into engine `{engine}`'s file `{inner}` ({})",
                        shown(file),
                        path.join("::")
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checker_reads_whole_files_and_sees_what_it_must() {
    // Grouped and plain paths; comments and test-only items left out, the code after
    // them read.
    let text = "use crate::{bridge, vocab::X};\nlet a = crate::engine::run();\n// crate::cli\n\
                #[cfg(test)]\nuse crate::harness;\n#[cfg(test)]\nmod tests {\n    use crate::cli;\n    \
                fn f() { crate::mcp::x(); }\n}\nfn after() { crate::reason::y(); }\n";
    let found: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(found, ["bridge", "engine", "reason", "vocab"]);

    // `super::` paths resolved against the file: from `engine/pull.rs`.
    let me = ["engine".to_string(), "pull".to_string()];
    let found = absolute_paths(&me, &["use super::native::multi::{self, Layered};"]);
    assert_eq!(found, [["engine", "native", "multi"]]);
    let me = [
        "engine".to_string(),
        "flowable".to_string(),
        "rest".to_string(),
    ];
    let found = absolute_paths(&me, &["use super::super::native::run::Run;"]);
    assert_eq!(found, [["engine", "native", "run", "Run"]]);

    // A cycle of two files, and one of three; a chain is none.
    let g = |edges: &[(&str, &str)]| {
        let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for (a, b) in edges {
            graph
                .entry(vec![a.to_string()])
                .or_default()
                .insert(vec![b.to_string()]);
            graph.entry(vec![b.to_string()]).or_default();
        }
        graph
    };
    assert_eq!(cycles(&g(&[("a", "b"), ("b", "a"), ("c", "a")])).len(), 1);
    assert_eq!(
        cycles(&g(&[("a", "b"), ("b", "c"), ("c", "a")]))[0].len(),
        3
    );
    assert!(cycles(&g(&[("a", "b"), ("b", "c")])).is_empty());
}
