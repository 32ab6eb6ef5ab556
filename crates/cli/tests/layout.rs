//! The layout limits issues 16 and 60 set for the source tree, kept by a test so that they stay
//! true: no non-test source file over 1,000 lines, no non-test function over 150 lines in any
//! crate (long functions hide phases: a study's plan, run, measure and plot, or one predicate
//! among many), no import circle between the files of one crate, and no doc comment line
//! (`///`, `//!`) over 100 characters anywhere in the repository's Rust.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 1_000;
const MAX_FN_LINES: usize = 150;

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file below `dir`, leaving out the folders named in `skip`.
fn rust_files(dir: &Path, skip: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !skip.contains(&name.as_str()) {
                rust_files(&p, skip, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

/// Every `.rs` file below `dir` that is not test code (a `tests` folder, `tests.rs`, or the
/// fuzz and bench harness folders).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut all = Vec::new();
    rust_files(dir, &["tests", "fuzz", "benches", "target"], &mut all);
    out.extend(
        all.into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n != "tests.rs")),
    );
}

/// The code of a line without its `//` comment and string literals (enough to count braces in
/// this tree's code; a brace in a char literal is not used).
fn code_of(line: &str) -> String {
    let mut out = String::new();
    let mut in_str = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (in_str, c) {
            (true, '\\') => {
                chars.next();
            }
            (true, '"') => in_str = false,
            (true, _) => {}
            (false, '"') => in_str = true,
            (false, '/') if chars.peek() == Some(&'/') => break,
            (false, _) => out.push(c),
        }
    }
    out
}

/// `(name, first line, length)` of every function over the limit in a file, leaving out an
/// inline `mod tests { .. }` at its end.
fn long_functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.starts_with("mod tests {"))
        .unwrap_or(lines.len());
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate().take(end) {
        let code = code_of(line);
        let Some(at) = code.find("fn ") else { continue };
        let before = code[..at].trim();
        let is_item = before
            .split_whitespace()
            .all(|w| w.starts_with("pub") || matches!(w, "const" | "async" | "unsafe"));
        if !is_item {
            continue;
        }
        let name: String = code[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut opened) = (0i64, false);
        for (j, l) in lines.iter().enumerate().skip(i) {
            let c = code_of(l);
            if !opened && c.trim_end().ends_with(';') && !c.contains('{') {
                break; // a declaration without a body
            }
            for ch in c.chars() {
                match ch {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth <= 0 {
                let len = j - i + 1;
                if len > MAX_FN_LINES {
                    found.push((name.clone(), i + 1, len));
                }
                break;
            }
        }
    }
    found
}

#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let mut files = Vec::new();
    sources(&crates_dir(), &mut files);
    assert!(files.len() > 100, "found only {} source files", files.len());
    let too_long: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).ok()?.lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(
        too_long.is_empty(),
        "split these files (tests may go to a `tests.rs` beside them): {too_long:#?}"
    );
}

/// The name of every crate folder under `crates/` that has a `src`.
fn crate_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(crates_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("src").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn no_function_is_over_150_lines() {
    let mut files = Vec::new();
    let names = crate_names();
    assert!(names.len() >= 7, "found only crates {names:?}");
    for krate in &names {
        sources(&crates_dir().join(krate).join("src"), &mut files);
    }
    let mut too_long = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        for (name, line, len) in long_functions(&text) {
            too_long.push(format!("{}:{line} fn {name} ({len} lines)", p.display()));
        }
    }
    assert!(too_long.is_empty(), "split these functions: {too_long:#?}");
}

#[test]
fn the_function_measure_finds_a_long_function_and_skips_tests() {
    let body = "    let x = \"{\";\n".repeat(MAX_FN_LINES);
    let long = format!("pub fn long() {{\n{body}}}\nfn short() {{}}\n");
    assert_eq!(
        long_functions(&long),
        vec![("long".to_string(), 1, MAX_FN_LINES + 2)]
    );
    let in_tests =
        format!("#[cfg(test)]\nmod tests;\nfn a() {{}}\n#[cfg(test)]\nmod tests {{\n{long}}}\n");
    assert!(long_functions(&in_tests).is_empty());
}

/// The module path of a source file below `src` (`study/mod.rs` is `study`, `lib.rs` is the
/// crate root, the empty path).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if matches!(
        path.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        path.pop();
    }
    path
}

/// `a::{b, c::{d, self}}` as the paths `a::b`, `a::c::d` and `a::c`, each a list of segments.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    let Some(open) = tree.find('{') else {
        return vec![tree.split("::").map(str::to_string).collect()];
    };
    let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
    let prefix = tree[..open].trim_end_matches("::");
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, open + 1);
    for (i, c) in tree.char_indices().take(close).skip(open + 1) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tree[start..close]);
    let mut out = Vec::new();
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        for mut inner in expand_use(part) {
            let mut path: Vec<String> = prefix.split("::").map(str::to_string).collect();
            if inner != ["self"] {
                path.append(&mut inner);
            }
            out.push(path);
        }
    }
    out
}

/// The in-crate paths (starting `crate`, `super` or `self`) that a file's `use` items name, made
/// absolute from the file's module path; an inline `mod tests { .. }` at the end is left out.
fn used_modules(module: &[String], text: &str) -> Vec<Vec<String>> {
    let lines: Vec<String> = text
        .lines()
        .take_while(|l| !l.starts_with("mod tests {"))
        .map(code_of)
        .collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        // An item `use …;` (or `pub use`, `pub(crate) use`) starts its line.
        let item = line.trim_start();
        let item = match item.strip_prefix("pub") {
            Some(rest) if rest.starts_with('(') => rest.split_once(')').map_or("", |r| r.1),
            Some(rest) => rest,
            None => item,
        };
        let Some(first) = item.trim_start().strip_prefix("use ") else {
            continue;
        };
        let mut stmt = first.to_string();
        for more in lines.iter().skip(i + 1) {
            if stmt.contains(';') {
                break;
            }
            stmt.push_str(more);
        }
        let stmt = stmt.split(';').next().unwrap_or("");
        let tree: String = stmt.chars().filter(|c| !c.is_whitespace()).collect();
        for path in expand_use(&tree) {
            let mut base: Vec<String> = match path.first().map(String::as_str) {
                Some("crate") => Vec::new(),
                Some("super" | "self") => module.to_vec(),
                _ => continue,
            };
            let mut rest = &path[1..];
            if path[0] == "super" {
                base.pop();
            }
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            out.push(base);
        }
    }
    out
}

/// The groups of files (named by module path) that import each other in a loop, given every
/// file's module path and text. A module naming its own submodules (a parent composing or
/// re-exporting its parts) is the module tree, not an import between peers, so it is not an edge.
fn import_circles(files: &BTreeMap<Vec<String>, String>) -> Vec<Vec<String>> {
    let mut edges: BTreeMap<&Vec<String>, BTreeSet<&Vec<String>>> = BTreeMap::new();
    for (module, text) in files {
        for path in used_modules(module, text) {
            let target = (0..=path.len())
                .rev()
                .find_map(|n| files.get_key_value(&path[..n]).map(|(k, _)| k));
            if let Some(target) = target.filter(|t| !t.starts_with(module)) {
                edges.entry(module).or_default().insert(target);
            }
        }
    }
    let reach = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(m) = todo.pop() {
            for &next in edges.get(m).into_iter().flatten() {
                if seen.insert(next) {
                    todo.push(next);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&Vec<String>, BTreeSet<&Vec<String>>> =
        files.keys().map(|m| (m, reach(m))).collect();
    let mut circles: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, seen) in &reaches {
        if !seen.contains(m) {
            continue;
        }
        let circle = seen
            .iter()
            .filter(|o| reaches[*o].contains(m))
            .map(|o| format!("crate::{}", o.join("::")))
            .collect();
        circles.insert(circle);
    }
    circles.into_iter().collect()
}

#[test]
fn no_files_of_a_crate_import_each_other_in_a_loop() {
    let mut found = Vec::new();
    for krate in crate_names() {
        let src = crates_dir().join(&krate).join("src");
        let mut paths = Vec::new();
        sources(&src, &mut paths);
        let files = paths
            .iter()
            .map(|p| (module_of(&src, p), std::fs::read_to_string(p).unwrap()))
            .collect();
        for circle in import_circles(&files) {
            found.push(format!("{krate}: {}", circle.join(" <-> ")));
        }
    }
    assert!(
        found.is_empty(),
        "move what these files share to a lower module they both use: {found:#?}"
    );
}

#[test]
fn the_circle_finder_sees_a_loop_through_use_and_not_a_parent_using_its_parts() {
    let file = |m: &str, text: &str| {
        let path = m.split("::").filter(|s| !s.is_empty()).map(str::to_string);
        (path.collect::<Vec<_>>(), text.to_string())
    };
    let tree: BTreeMap<Vec<String>, String> = [
        file("", "mod a;\nmod b;\nmod c;\npub use a::A;\n"),
        file("a", "mod part;\nuse self::part::P;\npub struct A;\n"),
        file("a::part", "use super::A;\npub struct P;\n"),
        file("b", "use crate::{a::{self, A}, c::C};\n"),
        file(
            "c",
            "pub struct C;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\n",
        ),
    ]
    .into_iter()
    .collect();
    assert!(import_circles(&tree).is_empty());
    let mut looped = tree.clone();
    looped.insert(
        file("c", "use super::b::B;\npub struct C;\n").0,
        "use super::b::B;".into(),
    );
    assert_eq!(
        import_circles(&looped),
        vec![vec!["crate::b".to_string(), "crate::c".to_string()]]
    );
}

const MAX_DOC_CHARS: usize = 100;

/// `(line, characters)` of every `///` or `//!` line of `text` longer than [`MAX_DOC_CHARS`]
/// characters (indentation included). rustfmt leaves comments alone (`wrap_comments` is
/// nightly-only) and clippy has no such lint, so this test is what keeps the limit.
fn long_doc_lines(text: &str) -> Vec<(usize, usize)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start();
            t.starts_with("///") || t.starts_with("//!")
        })
        .map(|(i, l)| (i + 1, l.chars().count()))
        .filter(|&(_, n)| n > MAX_DOC_CHARS)
        .collect()
}

#[test]
fn no_doc_comment_line_is_over_100_characters() {
    let root = crates_dir().join("..");
    let mut files = Vec::new();
    // tests, benches and fuzz targets included; build output and version control left out
    rust_files(&root, &["target", ".git", "node_modules"], &mut files);
    assert!(files.len() > 100, "found only {} Rust files", files.len());
    let mut too_long = Vec::new();
    for p in &files {
        let rel = p
            .strip_prefix(&root)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/");
        let long = long_doc_lines(&std::fs::read_to_string(p).unwrap());
        for (line, n) in long {
            too_long.push(format!("{rel}:{line} ({n} characters)"));
        }
    }
    assert!(too_long.is_empty(), "rewrap these doc lines: {too_long:#?}");
}

#[test]
fn the_doc_width_check_counts_characters_of_doc_lines_only() {
    let at_limit = format!("    /// {}", "é".repeat(MAX_DOC_CHARS - 8));
    let over = format!("//! {}", "x".repeat(MAX_DOC_CHARS - 3));
    let code = format!("let s = \"{}\";", "x".repeat(2 * MAX_DOC_CHARS));
    let plain = format!("// {}", "x".repeat(2 * MAX_DOC_CHARS));
    let text = [at_limit.as_str(), &code, &over, &plain].join("\n");
    assert_eq!(long_doc_lines(&text), vec![(3, MAX_DOC_CHARS + 1)]);
}
