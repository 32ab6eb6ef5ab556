//! A claim's quote: the paper's own words, checked against the seed's text.
//!
//! A claim that cites a seed (`source = "seed 001 …"`) carries `quote`, the sentence or
//! sentences it tests, verbatim. Words left out are marked with `…` (or `...`); each piece
//! between the marks must occur in the seed's text. Comparison ignores what a text
//! extraction varies: markdown emphasis (`*`, `_`), curly against straight quotes, the kind of
//! dash, line breaks and runs of spaces. Nothing else is forgiven: a quote that paraphrases
//! fails.

/// The seed a claim's `source` cites (`"seed 001 §7 …"` → 1), if any.
pub fn cited_seed(source: &str) -> Option<u32> {
    let at = source.find("seed ")?;
    let digits: String = source[at + 5..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    if digits.is_empty() {
        None
    } else {
        digits.parse().ok()
    }
}

/// The text as compared: emphasis marks dropped, quotes and dashes unified, whitespace
/// collapsed to single spaces, lowercase.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        let c = match c {
            '*' | '_' | '$' => continue,
            '\u{2018}' | '\u{2019}' | '`' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' => ' ',
            c => c,
        };
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.extend(c.to_lowercase());
    }
    out
}

/// The pieces of a quote between its omission marks, normalized, empty ones dropped.
pub fn pieces(quote: &str) -> Vec<String> {
    quote
        .replace("...", "\u{2026}")
        .split('\u{2026}')
        .map(normalize)
        .map(|p| {
            p.trim_matches(|c: char| c == ' ' || c == '"' || c == '\'')
                .to_string()
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// A seed's text, normalized once, against which any number of quotes are checked.
pub struct SeedText(String);

impl SeedText {
    /// The seed's raw text, normalized ([`normalize`]).
    pub fn new(raw: &str) -> Self {
        SeedText(normalize(raw))
    }

    /// Why `quote` is not the seed's words, or `Ok` when every piece occurs in the text.
    /// A quote needs at least four words: a shorter one would match almost anywhere.
    pub fn check(&self, quote: &str) -> Result<(), String> {
        let words = normalize(quote).split(' ').count();
        if words < 4 {
            return Err(format!(
                "quote too short to identify a sentence ({words} words)"
            ));
        }
        let missing: Vec<String> = pieces(quote)
            .into_iter()
            .filter(|p| !self.0.contains(p.as_str()))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "not in the seed's text: \"{}\"",
                missing.join("\" / \"")
            ))
        }
    }
}

/// [`SeedText::check`] of one quote against a raw seed text.
pub fn check(seed_text: &str, quote: &str) -> Result<(), String> {
    SeedText::new(seed_text).check(quote)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: &str = "In this paper we *combine* the acks\nalong a multicast tree — and the\
        \n  throughput falls \u{201C}slightly\u{201D}.\n\nOther text.";

    #[test]
    fn a_verbatim_quote_passes_across_line_breaks_emphasis_and_quote_marks() {
        assert_eq!(
            check(SEED, "we combine the acks along a multicast tree - and the throughput falls \"slightly\""),
            Ok(())
        );
        assert_eq!(check(SEED, "In this paper … the throughput falls"), Ok(()));
        assert_eq!(
            check(SEED, "In this paper ... the throughput falls"),
            Ok(())
        );
    }

    #[test]
    fn a_paraphrase_or_a_too_short_quote_fails() {
        let e = check(SEED, "the throughput drops slightly").unwrap_err();
        assert!(e.contains("the throughput drops slightly"), "{e}");
        let e = check(SEED, "In this paper … throughput rises a lot").unwrap_err();
        assert!(
            e.contains("throughput rises a lot") && !e.contains("in this paper"),
            "{e}"
        );
        assert!(check(SEED, "falls").unwrap_err().contains("too short"));
    }

    #[test]
    fn the_cited_seed_is_read_from_the_source() {
        assert_eq!(cited_seed("seed 001 §7, Figure 9"), Some(1));
        assert_eq!(cited_seed("closed form (seed 000 §2.5.2 rule)"), Some(0));
        assert_eq!(cited_seed("closed form"), None);
        assert_eq!(cited_seed("seeds"), None);
    }
}
