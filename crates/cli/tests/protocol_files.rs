//! The files a new protocol touches, as ARCHITECTURE.md lists them ("Where a new protocol
//! goes"), checked against every protocol there is: each row of `PROTOCOLS` has its files at
//! the listed paths, with the one-line entries the list names, so the list stays what a new
//! protocol (issue 62's NORM) can follow.

use rmcast_proto::PROTOCOLS;
use std::path::{Path, PathBuf};

/// The list, in ARCHITECTURE.md's words (`x` the family, `X` its variant): the files of a
/// protocol on sockets whose module in `rmcast-proto` is `x/mod.rs` and `x/tests.rs`.
const LISTED: [&str; 8] = [
    "crates/wire/src/x.rs",
    "crates/wire/src/lib.rs",
    "crates/proto/src/x/mod.rs",
    "crates/proto/src/x/tests.rs",
    "crates/proto/src/lib.rs",
    "tools/wireshark/rmcast.lua",
    "crates/net/src/agents/x.rs",
    "crates/net/src/agents/mod.rs",
];

fn top() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(top().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The section of ARCHITECTURE.md that lists the files.
fn section() -> String {
    let doc = read("ARCHITECTURE.md");
    let start = doc
        .find("## Where a new protocol goes")
        .expect("the section");
    let end = doc[start + 3..]
        .find("\n## ")
        .map_or(doc.len(), |e| start + 3 + e);
    doc[start..end].to_string()
}

#[test]
fn architecture_lists_the_eight_files_in_order() {
    let s = section();
    let mut at = 0;
    for (i, path) in LISTED.iter().enumerate() {
        let item = format!("\n{}. `{path}`", i + 1);
        let found = s[at..]
            .find(&item)
            .unwrap_or_else(|| panic!("ARCHITECTURE.md does not list {item:?} in order"));
        at += found + item.len();
    }
    assert!(
        !s.contains("\n9. "),
        "the list has more than {} items",
        LISTED.len()
    );
    assert!(s.contains("8 files"), "the section states the total");
}

#[test]
fn every_protocol_has_its_files_where_the_list_says() {
    let wire_lib = read("crates/wire/src/lib.rs");
    let proto_lib = read("crates/proto/src/lib.rs");
    let lua = read("tools/wireshark/rmcast.lua");
    let agents = read("crates/net/src/agents/mod.rs");
    let table_at = proto_lib.find("pub const PROTOCOLS").expect("the table");
    for p in PROTOCOLS {
        let (x, variant) = (p.family.name(), format!("{:?}", p.family));
        let module = p.module_name();
        // 1, 2: the family's declaration and its row of `families!`.
        let wire = read(&format!("crates/wire/src/{x}.rs"));
        assert!(wire.contains("pub fn samples()"), "{x}: its samples");
        assert!(wire_lib.contains(&format!("\npub mod {x};\n")), "{x}");
        assert!(
            wire_lib.contains(&format!("{variant} = {} => {x}, ", p.family as u8)),
            "{x}: its row of families!"
        );
        // 3, 4: the protocol's module, its row defined there (`x/spec.rs`, `pub mod spec { .. }`
        // in `x/mod.rs`, or `x/mod.rs` itself).
        let dir = top().join("crates/proto/src").join(module);
        assert!(dir.join("mod.rs").is_file(), "{}: {module}/mod.rs", p.name);
        assert!(
            dir.join("tests.rs").is_file(),
            "{}: {module}/tests.rs",
            p.name
        );
        let mod_rs = read(&format!("crates/proto/src/{module}/mod.rs"));
        let inner = p.module.split("::").nth(2);
        assert!(
            match inner {
                None => true,
                Some(sub) => {
                    dir.join(format!("{sub}.rs")).is_file()
                        || mod_rs.contains(&format!("pub mod {sub} {{"))
                }
            },
            "{}: no file for its row's module {}",
            p.name,
            p.module
        );
        // 5: `pub mod x;` and its row of the table.
        assert!(proto_lib.contains(&format!("\npub mod {module};\n")));
        assert!(
            proto_lib[table_at..].contains(&format!("\n    {module}::")),
            "{}: its row of PROTOCOLS",
            p.name
        );
        // 6: the dissector's generated block names the family.
        assert!(
            lua.contains(&format!("name = \"{x}\"")),
            "{x}: regenerate tools/wireshark/rmcast.lua"
        );
        // 7, 8: the socket adapter and its arm.
        if p.sockets {
            assert!(top()
                .join(format!("crates/net/src/agents/{x}.rs"))
                .is_file());
            assert!(agents.contains(&format!("\nmod {x};\n")), "{x}");
            assert!(agents.contains(&format!("Family::{variant} =>")), "{x}");
        }
    }
}
