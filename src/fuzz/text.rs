//! Mutating statement text: splicing SQL tokens and edge values at word
//! boundaries, cutting and repeating spans, so that most mutants still
//! reach the parser's deeper rules rather than failing at the first byte.

use super::dictionary::{STATEMENTS, TOKENS, VALUES};
use super::fuzz_rng::FuzzRng;

/// Statement text no mutation grows beyond.
pub const MAX_TEXT: usize = 256 * 1024;

/// Offsets of word boundaries in `text` (and its two ends).
fn boundaries(text: &[u8]) -> Vec<usize> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut at: Vec<usize> = vec![0];
    at.extend((1..text.len()).filter(|&i| word(text[i - 1]) != word(text[i])));
    at.push(text.len());
    at
}

/// One mutation of `text`.
pub fn mutate_text(text: &[u8], rng: &mut FuzzRng, extra: &[Vec<u8>]) -> Vec<u8> {
    let cuts = boundaries(text);
    let pick_cut = |rng: &mut FuzzRng| cuts.get(rng.below(cuts.len())).copied().unwrap_or(0);
    let a = pick_cut(rng);
    let b = pick_cut(rng);
    let (lo, hi) = (a.min(b), a.max(b));
    let splice = |rng: &mut FuzzRng| -> Vec<u8> {
        match rng.below(3) {
            0 => rng.pick(TOKENS).map_or_else(Vec::new, |t| t.as_bytes().to_vec()),
            1 => rng.pick(VALUES).map_or_else(Vec::new, |v| v.as_bytes().to_vec()),
            _ => rng.pick(extra).cloned().unwrap_or_default(),
        }
    };
    let head = text.get(..lo).unwrap_or_default();
    let mid = text.get(lo..hi).unwrap_or_default();
    let tail = text.get(hi..).unwrap_or_default();
    let mut out = match rng.below(9) {
        0 => [head, &splice(rng), mid, tail].concat(),
        1 => [head, &splice(rng), tail].concat(),
        2 => [head, tail].concat(),
        3 => [head, mid, mid, tail].concat(),
        4 => [tail, head].concat(),
        5 => head.to_vec(),
        6 => rng.pick(STATEMENTS).map_or_else(Vec::new, |s| s.as_bytes().to_vec()),
        7 => {
            let mut t = text.to_vec();
            let at = rng.below(t.len());
            if let Some(b) = t.get_mut(at) {
                *b ^= 1 << rng.below(8);
            }
            t
        }
        _ => [text, b" ", &splice(rng)].concat(),
    };
    out.truncate(MAX_TEXT);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_fall_between_words_and_symbols() {
        assert_eq!(boundaries(b"SELECT c FROM t"), vec![0, 6, 7, 8, 9, 13, 14, 15]);
        assert_eq!(boundaries(b""), vec![0, 0]);
    }

    #[test]
    fn mutants_differ_and_stay_bounded() {
        let mut rng = FuzzRng::new(5, 0);
        let base = b"SELECT c FROM sbtest1 WHERE id=?".to_vec();
        let mutants: std::collections::HashSet<Vec<u8>> =
            (0..200).map(|_| mutate_text(&base, &mut rng, &[b"x".to_vec()])).collect();
        assert!(mutants.len() > 50);
        assert!(mutants.iter().all(|m| m.len() <= MAX_TEXT));
        assert!(mutate_text(b"", &mut rng, &[]).len() <= MAX_TEXT);
    }
}
