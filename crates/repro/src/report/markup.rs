//! The two formats the report writes alike (Markdown and HTML): tables, paragraphs, links,
//! figures, and inline Markdown turned into HTML.

use super::*;

/// The two formats of the report, for what both write alike.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Markup {
    /// `report.md`.
    Markdown,
    /// `index.html`.
    Html,
}

impl Markup {
    /// A subsection's heading.
    pub(crate) fn heading(self, out: &mut String, title: &str) {
        match self {
            Markup::Markdown => {
                let _ = writeln!(out, "### {title}\n");
            }
            Markup::Html => {
                let _ = writeln!(out, "<h3>{}</h3>", esc(title));
            }
        }
    }

    /// A figure: the SVG written beside the report as `file` (inline in HTML).
    pub(crate) fn image(self, out: &mut String, file: &str, svg: &str, caption: &str) {
        match self {
            Markup::Markdown => {
                let _ = writeln!(out, "![{caption}]({file})\n");
            }
            Markup::Html => {
                let _ = writeln!(
                    out,
                    "<figure>\n{svg}<figcaption>{} <a href=\"{}\">(SVG)</a></figcaption>\n</figure>",
                    esc(caption),
                    esc(file)
                );
            }
        }
    }

    /// Plain text in a table cell.
    pub(crate) fn text(self, s: &str) -> String {
        match self {
            Markup::Markdown => md_cell(s),
            Markup::Html => esc(s),
        }
    }

    /// A setup text (plain, or with `code` and **bold** spans) in a table cell.
    pub(crate) fn inline(self, s: &str) -> String {
        match self {
            Markup::Markdown => md_cell(s),
            Markup::Html => md_inline_to_html(s),
        }
    }

    /// A link to the section `anchor` of this page.
    pub(super) fn link(self, text: &str, anchor: &str) -> String {
        match self {
            Markup::Markdown => format!("[{text}](#{anchor})"),
            Markup::Html => format!("<a href=\"#{anchor}\">{}</a>", esc(text)),
        }
    }

    /// A paragraph.
    pub(crate) fn para(self, out: &mut String, text: &str) {
        match self {
            Markup::Markdown => {
                let _ = writeln!(out, "{text}\n");
            }
            Markup::Html => {
                let _ = writeln!(out, "<p>{text}</p>");
            }
        }
    }

    /// A table of `head` and `rows` (cells already in this format).
    pub(crate) fn table(
        self,
        out: &mut String,
        head: &[&str],
        rows: impl IntoIterator<Item = Vec<String>>,
    ) {
        match self {
            Markup::Markdown => {
                let _ = writeln!(
                    out,
                    "| {} |\n|{}",
                    head.join(" | "),
                    "---|".repeat(head.len())
                );
                for r in rows {
                    let _ = writeln!(out, "| {} |", r.join(" | "));
                }
                out.push('\n');
            }
            Markup::Html => {
                let _ = writeln!(out, "<table><tr><th>{}</th></tr>", head.join("</th><th>"));
                for r in rows {
                    let _ = writeln!(out, "<tr><td>{}</td></tr>", r.join("</td><td>"));
                }
                out.push_str("</table>\n");
            }
        }
    }
}

pub(super) fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Escape for HTML, then turn `code` and **bold** spans into tags (the only Markdown the
/// setup texts use).
pub(super) fn md_inline_to_html(s: &str) -> String {
    let e = esc(s);
    let mut out = String::new();
    let mut code = false;
    for (i, part) in e.split('`').enumerate() {
        if i > 0 {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
        }
        if code {
            out.push_str(part);
        } else {
            let mut bold = false;
            for (j, b) in part.split("**").enumerate() {
                if j > 0 {
                    out.push_str(if bold { "</strong>" } else { "<strong>" });
                    bold = !bold;
                }
                out.push_str(b);
            }
            if bold {
                out.push_str("</strong>");
            }
        }
    }
    if code {
        out.push_str("</code>");
    }
    out
}
