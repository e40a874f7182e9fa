//! Why a datagram or a sample was refused: exactly the reasons the receiver counts.

/// One reject reason; [`Reject::name`] is the label Python counts it under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reject {
    /// Shorter than a datagram header (28 bytes, 40 with an IPv6 agent).
    ShortDatagram,
    /// A datagram version other than 5.
    BadVersion,
    /// An agent address type other than 1 (IPv4) or 2 (IPv6).
    BadAgentType,
    /// A sample running past the datagram, or shorter than its own fixed fields.
    TruncatedSample,
    /// A record running past its sample.
    TruncatedRecord,
    /// A record shorter than its format requires.
    BadRecord,
    /// A panic inside the decoder, caught before it reached Python.
    InternalError,
}

impl Reject {
    pub const ALL: [Reject; 7] = [
        Reject::ShortDatagram,
        Reject::BadVersion,
        Reject::BadAgentType,
        Reject::TruncatedSample,
        Reject::TruncatedRecord,
        Reject::BadRecord,
        Reject::InternalError,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reject::ShortDatagram => "short-datagram",
            Reject::BadVersion => "bad-version",
            Reject::BadAgentType => "bad-agent-type",
            Reject::TruncatedSample => "truncated-sample",
            Reject::TruncatedRecord => "truncated-record",
            Reject::BadRecord => "bad-record",
            Reject::InternalError => "internal-error",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_indexes_agree() {
        for (i, r) in Reject::ALL.iter().enumerate() {
            assert_eq!(r.index(), i);
        }
        assert_eq!(Reject::TruncatedSample.name(), "truncated-sample");
    }
}
