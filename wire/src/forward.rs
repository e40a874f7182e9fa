//! The inlet's thread: `recvmmsg` batches from the switches' socket (the receive path's
//! [`Batch`]), each datagram routed by its header ([`Routes`]) and sent on unchanged to its
//! shard with one `sendmmsg` per shard and batch, from a UDP socket connected to that
//! shard (so that a refusing port is reported back, and counted).
//!
//! As for [`crate::receive`], the receiving socket belongs to the caller (bound, with a
//! receive timeout so that a quiet socket still lets requests through), who keeps it open
//! until [`Forwarding::stop`] has returned. Routes, shard addresses and counts go over a
//! channel, served between batches.

use std::io::IoSlice;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::socket::{sendmmsg, ControlMessage, MsgFlags, MultiHeaders, SockaddrStorage};

use crate::receive::Batch;
use crate::route::{Cause, Counts, Routes};

/// What the caller asks of the forwarding thread.
pub enum Request {
    /// Route by these from the next batch on; the reply says they are in use.
    Routes(Routes, Sender<()>),
    /// Shard `i`'s address is item `i` (None: not known); the reply says it is in use.
    Shards(Vec<Option<SocketAddr>>, Sender<()>),
    /// The counts since the start.
    Counts(Sender<Counts>),
    Stop,
}

/// A forwarding thread and the way to ask it things.
pub struct Forwarding {
    requests: Sender<Request>,
    thread: Option<JoinHandle<()>>,
}

impl Forwarding {
    /// Forward what arrives on `fd`, `batch` datagrams per system call at most, to no
    /// shard until told their routes and addresses.
    pub fn start(fd: RawFd, batch: usize) -> std::io::Result<Self> {
        let (requests, inbox) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("fabcorr-inlet".into())
            .spawn(move || run(fd, batch.max(1), &inbox))?;
        Ok(Forwarding { requests, thread: Some(thread) })
    }

    /// Sends `request`; false when the thread has ended.
    pub fn ask(&self, request: Request) -> bool {
        self.requests.send(request).is_ok()
    }

    /// Ends the thread.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = self.requests.send(Request::Stop);
            let _ = thread.join();
        }
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        self.end();
    }
}

/// A shard's address and the socket connected to it (None: connecting failed).
struct Shard {
    address: SocketAddr,
    socket: Option<UdpSocket>,
}

fn connect(address: SocketAddr) -> Option<UdpSocket> {
    let any: SocketAddr = match address {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = UdpSocket::bind(any).ok()?;
    socket.connect(address).ok()?;
    Some(socket)
}

/// The new shards, keeping the socket of each whose address did not change.
fn reconnect(old: &mut [Option<Shard>], addresses: Vec<Option<SocketAddr>>) -> Vec<Option<Shard>> {
    addresses
        .into_iter()
        .enumerate()
        .map(|(i, address)| {
            let address = address?;
            match old.get_mut(i).and_then(Option::take) {
                Some(shard) if shard.address == address && shard.socket.is_some() => Some(shard),
                _ => Some(Shard { address, socket: connect(address) }),
            }
        })
        .collect()
}

/// Sends `datagrams` (index in `batch`, samples) to `socket`'s peer, shard `shard`; a
/// message the kernel refuses is counted and skipped (`sendmmsg` reports only the first
/// refusal of a call, as a shorter count, or as the error when nothing was sent).
fn send(
    socket: &UdpSocket,
    batch: &Batch,
    datagrams: &[(usize, u32)],
    headers: &mut MultiHeaders<SockaddrStorage>,
    shard: usize,
    counts: &mut Counts,
) {
    let mut at = 0;
    while let Some(rest) = datagrams.get(at..).filter(|rest| !rest.is_empty()) {
        let slices: Vec<[IoSlice<'_>; 1]> =
            rest.iter().map(|&(i, _)| [IoSlice::new(batch.datagram(i))]).collect();
        let addresses = vec![None::<SockaddrStorage>; slices.len()];
        let no_control: [ControlMessage<'_>; 0] = [];
        let sent =
            match sendmmsg(socket.as_raw_fd(), headers, &slices, &addresses, no_control, MsgFlags::empty()) {
                Ok(results) => results.count(),
                Err(_) => 0,
            };
        for &(_, samples) in &rest[..sent] {
            counts.forward(shard, samples);
        }
        at += sent;
        if at < datagrams.len() {
            counts.drop(Cause::SendError, Some(shard));
            at += 1;
        }
    }
}

fn run(fd: RawFd, size: usize, inbox: &Receiver<Request>) {
    let mut batch = Batch::new(size);
    let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(size, None);
    let mut routes = Routes::default();
    let mut shards: Vec<Option<Shard>> = Vec::new();
    let mut counts = Counts::default();
    let mut outgoing: Vec<Vec<(usize, u32)>> = Vec::new();
    loop {
        loop {
            match inbox.try_recv() {
                Ok(Request::Routes(new, reply)) => {
                    routes = new;
                    let _ = reply.send(());
                }
                Ok(Request::Shards(addresses, reply)) => {
                    shards = reconnect(&mut shards, addresses);
                    counts.grow(shards.len());
                    outgoing.resize_with(shards.len(), Vec::new);
                    let _ = reply.send(());
                }
                Ok(Request::Counts(reply)) => {
                    let _ = reply.send(counts.clone());
                }
                Ok(Request::Stop) | Err(TryRecvError::Disconnected) => return,
                Err(TryRecvError::Empty) => break,
            }
        }
        // blocks for the first datagram (at most the socket's receive timeout), then
        // takes what else is queued
        match batch.receive(fd, MsgFlags::MSG_WAITFORONE) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(Errno::ECONNREFUSED) => continue, // an ICMP error queued on the socket
            Err(_) => {
                std::thread::sleep(Duration::from_millis(10)); // closed under us: no spin
                continue;
            }
        }
        for (i, &(_, _, source)) in batch.received.iter().enumerate() {
            match routes.route(batch.datagram(i), source) {
                Ok((shard, samples)) => match outgoing.get_mut(shard) {
                    Some(out) if matches!(shards.get(shard), Some(Some(_))) => out.push((i, samples)),
                    _ => counts.drop(Cause::Unresolved, Some(shard)),
                },
                Err((cause, shard)) => counts.drop(cause, shard),
            }
        }
        for (shard, out) in outgoing.iter_mut().enumerate() {
            if out.is_empty() {
                continue;
            }
            match shards.get(shard) {
                Some(Some(Shard { socket: Some(socket), .. })) => {
                    send(socket, &batch, out, &mut headers, shard, &mut counts)
                }
                _ => {
                    for _ in out.iter() {
                        counts.drop(Cause::SendError, Some(shard));
                    }
                }
            }
            out.clear();
        }
    }
}
