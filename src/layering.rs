//! The module map of `lib.rs` kept true: each top-level module uses only the modules below it.

/// Top-level modules, lowest layer first (as `lib.rs` lists them).
const LAYERS: &[&str] = &[
    "errors", "random", "model", "api", "live", "compare", "policy", "guard", "baseline", "release", "settings",
    "desired", "helm", "explain", "engine", "repair", "report", "watch", "commands", "cli",
];

/// The `crate::x` paths of one module's code (every file of its folder), tests left out.
fn uses(module: &str) -> std::collections::BTreeSet<String> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.join(format!("{module}.rs"))];
    let mut dirs = vec![src.join(module)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("tests.rs") {
                files.push(path);
            }
        }
    }
    let mut out = std::collections::BTreeSet::new();
    for file in files.iter().filter(|f| f.is_file()) {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
        for (at, _) in code.match_indices("crate::") {
            let name: String = code[at + 7..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
            if name != module {
                out.insert(name);
            }
        }
    }
    out
}

#[test]
fn each_module_uses_only_the_layers_below_it() {
    let mut problems = Vec::new();
    for (i, module) in LAYERS.iter().enumerate() {
        for used in uses(module) {
            match LAYERS.iter().position(|m| *m == used) {
                Some(j) if j < i => {}
                Some(_) => problems.push(format!("{module} uses {used}, a layer at or above it")),
                None => problems.push(format!("{module} uses {used}, which is not in the module map")),
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_module_map_names_every_module() {
    let lib = include_str!("lib.rs");
    for module in LAYERS {
        assert!(lib.contains(&format!("[`{module}`]")), "lib.rs does not describe {module}");
        assert!(lib.contains(&format!("mod {module};")), "{module} is not a module");
    }
    let declared = lib.lines().filter(|l| l.contains(" mod ") && l.ends_with(';') && !l.contains("layering")).count();
    assert_eq!(declared, LAYERS.len(), "a module missing from LAYERS");
}
