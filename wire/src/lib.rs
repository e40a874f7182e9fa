//! fabcorr's sFlow v5 wire path: datagrams decoded down to the RoCEv2 BTH
//! (REFERENCE §6, §7) and summed per interval, without Python objects per sample.
//!
//! One module per structure of the spec: [`datagram`] (the header and the sample loop),
//! [`flow_sample`], [`counters_sample`], [`discard_sample`], and [`packet`] for the
//! sampled header (Ethernet, 802.1Q / QinQ, IPv4 / IPv6, UDP 4791, the InfiniBand BTH).
//! Every read is from a slice cut to the length its structure declares ([`xdr`]); a
//! failure is one [`reject::Reject`], named as the Python decoder counts it.
//! [`accumulate`] sums flow samples per key as `correlator/attribution/accumulate.py`,
//! each agent's apart ([`agent_flows`]).
//!
//! The receive path around them: [`admission`] (known agents from their own addresses
//! or a relay), [`loss`] (sequence and drop accounting), bounded tables ([`lru`]), the
//! [`collector`] that does all of it per interval, and [`receive`], a thread reading
//! `recvmmsg` batches into a collector without ever waiting for Python.
//!
//! The inlet's path (`fabcorr inlet`): [`route`] (a datagram's shard from its header
//! alone) and [`forward`], a thread passing `recvmmsg` batches on unchanged with
//! `sendmmsg`, one shard at a time.
//!
//! Beside the wire path, [`go_float`] writes `/metrics` sample values as
//! prometheus-client does, many at once, and [`json_layout`] writes JSON as Python's
//! `json.dumps(indent=N)` does, and [`share`] apportions a link direction's bytes among
//! its groups; [`timeline`] keeps a port counter's known moments in time and
//! [`interval_rates`] every port's, and their rates over an interval.
#![forbid(unsafe_code)]

pub mod accumulate;
pub mod admission;
pub mod agent_flows;
pub mod attribute;
pub mod capture;
pub mod clock;
pub mod collector;
pub mod counters_sample;
pub mod datagram;
pub mod discard_sample;
pub mod flow_sample;
pub mod forward;
pub mod go_float;
pub mod hash;
pub mod interval_rates;
pub mod json_layout;
pub mod loss;
pub mod lru;
pub mod packet;
pub mod receive;
pub mod reject;
pub mod route;
pub mod share;
pub mod timeline;
pub mod xdr;

#[cfg(feature = "python")]
mod python;
