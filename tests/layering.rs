//! The layering ARCHITECTURE.md promises, enforced: every module of `src/` sits in the
//! layer table of ARCHITECTURE.md (the ```` ```layers ```` block), imports only modules of
//! its own layer or below (outside its `#[cfg(test)]` code), and none of the pairs the
//! table forbids (`never A -> B C`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

struct Table {
    layer: BTreeMap<String, usize>,
    never: BTreeSet<(String, String)>,
}

fn table() -> Table {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .unwrap();
    let start = doc
        .find("```layers\n")
        .expect("ARCHITECTURE.md has a ```layers block")
        + 10;
    let end = start + doc[start..].find("```").unwrap();
    let mut layer = BTreeMap::new();
    let mut never = BTreeSet::new();
    for line in doc[start..end].lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words[0] == "never" {
            assert_eq!(words[2], "->", "{line}");
            for to in &words[3..] {
                never.insert((words[1].to_string(), to.to_string()));
            }
        } else {
            let n: usize = words[0].parse().expect("a layer number");
            for m in &words[1..] {
                assert!(layer.insert(m.to_string(), n).is_none(), "{m} listed twice");
            }
        }
    }
    Table { layer, never }
}

/// The top-level modules of `src/` and their files.
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
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

/// The crate modules `text` imports (`crate::name`, `crate::{a, b}`), before its tests,
/// comments left out.
fn imports(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + 7..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                for item in inner.split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
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
                let file = file
                    .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                    .unwrap()
                    .display();
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

#[test]
fn the_checker_sees_an_upward_import() {
    // The scanner itself: grouped and plain paths, comments and tests left out.
    let text = "use crate::{bridge, vocab::X};\nlet a = crate::engine::run();\n// crate::cli\n#[cfg(test)]\nuse crate::harness;\n";
    let found: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(found, ["bridge", "engine", "vocab"]);
}
