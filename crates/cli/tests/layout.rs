//! The size limits issue 16 set for the source tree, kept by a test so that they stay true: no
//! non-test source file over 1,000 lines, and no non-test function over 150 lines in the two
//! driver crates (`rmcast-net`, `rmcast-sim`), where long functions used to hide phases.

use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 1_000;
const MAX_FN_LINES: usize = 150;

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file below `dir` that is not test code (a `tests` folder, `tests.rs`, or the
/// fuzz and bench harness folders).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !matches!(name.as_str(), "tests" | "fuzz" | "benches" | "target") {
                sources(&p, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(p);
        }
    }
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

#[test]
fn no_driver_function_is_over_150_lines() {
    let mut files = Vec::new();
    for krate in ["net", "sim"] {
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
