//! XDR reads (big-endian, 4-byte aligned) from a slice cut to a declared length.
//!
//! Every read returns `None` past the end of its slice: a caller turns that into the
//! reject reason its structure calls for, never into a read of the next structure's bytes.

/// The u32 at `at` of `buf`.
#[inline]
pub fn u32_at(buf: &[u8], at: usize) -> Option<u32> {
    let end = at.checked_add(4)?;
    let b = buf.get(at..end)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// The u64 (XDR unsigned hyper) at `at` of `buf`.
#[inline]
pub fn u64_at(buf: &[u8], at: usize) -> Option<u64> {
    let hi = u32_at(buf, at)?;
    let lo = u32_at(buf, at.checked_add(4)?)?;
    Some(u64::from(hi) << 32 | u64::from(lo))
}

/// The u16 at `at` of `buf` (inside sampled headers, which are not XDR).
#[inline]
pub fn u16_at(buf: &[u8], at: usize) -> Option<u16> {
    let end = at.checked_add(2)?;
    let b = buf.get(at..end)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

/// `n` u32 words from `at`, or `None` when the slice holds fewer.
#[inline]
pub fn words<const N: usize>(buf: &[u8], at: usize) -> Option<[u32; N]> {
    let mut out = [0u32; N];
    let end = at.checked_add(4 * N)?;
    let b = buf.get(at..end)?;
    for (i, chunk) in b.chunks_exact(4).enumerate() {
        out[i] = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    Some(out)
}

/// `at` rounded up to the next multiple of 4 (XDR opaque padding).
#[inline]
pub fn align4(at: usize) -> usize {
    at.saturating_add(3) & !3
}

/// The opaque items of an XDR array of (format, opaque): sample or record framing.
///
/// Yields `(format, body)` for up to `count` items, each `body` cut to its declared
/// length; `Err(())` when an item's framing or body runs past `buf`.
pub struct Items<'a> {
    buf: &'a [u8],
    at: usize,
    left: u32,
}

impl<'a> Items<'a> {
    pub fn new(buf: &'a [u8], at: usize, count: u32) -> Self {
        Items { buf, at, left: count }
    }

    /// Where the next item starts (after the last one read, padded).
    pub fn offset(&self) -> usize {
        self.at
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = Result<(u32, &'a [u8]), ()>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let (Some(format), Some(length)) =
            (u32_at(self.buf, self.at), u32_at(self.buf, self.at.saturating_add(4)))
        else {
            self.left = 0;
            return Some(Err(()));
        };
        let body = self.at + 8;
        let Some(stop) = body.checked_add(length as usize).filter(|&s| s <= self.buf.len()) else {
            self.left = 0;
            return Some(Err(()));
        };
        self.at = align4(stop);
        Some(Ok((format, &self.buf[body..stop])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_slice_end() {
        let b = [0, 0, 0, 7, 0, 0, 0, 1, 0xff];
        assert_eq!(u32_at(&b, 0), Some(7));
        assert_eq!(u64_at(&b, 0), Some(7 << 32 | 1));
        assert_eq!(u32_at(&b, 6), None);
        assert_eq!(u32_at(&b, usize::MAX), None);
        assert_eq!(words::<2>(&b, 0), Some([7, 1]));
        assert_eq!(words::<3>(&b, 0), None);
        assert_eq!((align4(5), align4(8)), (8, 8));
    }

    #[test]
    fn items_are_cut_to_their_declared_length() {
        // two items: (1, 3 bytes + pad), (2, 0 bytes); then a third whose length overruns
        let b = [0, 0, 0, 1, 0, 0, 0, 3, 9, 9, 9, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 9];
        let got: Vec<_> = Items::new(&b, 0, 3).collect();
        assert_eq!(got, vec![Ok((1, &[9u8, 9, 9][..])), Ok((2, &[][..])), Err(())]);
        let mut short = Items::new(&b[..10], 0, 1);
        assert_eq!(short.next(), Some(Err(())));
        assert_eq!(short.next(), None);
    }
}
