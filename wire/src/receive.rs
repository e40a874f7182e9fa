//! Receiving in a thread of its own: `recvmmsg` batches from a UDP socket, each
//! datagram with its kernel arrival time (`SO_TIMESTAMPNS`) and UDP source, into a
//! [`Collector`]. The thread never waits for the caller: requests (close, take, cut,
//! admit) come over a channel and are served between batches.
//!
//! The socket belongs to the caller, who sets it up (bound, `SO_TIMESTAMPNS` on, a receive
//! timeout `SO_RCVTIMEO` so that a quiet socket still lets requests through) and keeps it
//! open until [`Receiving::stop`] has returned.

use std::io::IoSliceMut;
use std::net::IpAddr;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::errno::Errno;
use nix::sys::socket::{recvmmsg, ControlMessageOwned, MsgFlags, MultiHeaders, SockaddrStorage};
use nix::sys::time::TimeSpec;

use crate::admission::Admission;
use crate::collector::{Closed, Collector};
use crate::datagram::Counts;
use crate::loss::Loss;

/// The largest UDP payload.
pub const MAX_DATAGRAM: usize = 65535;

/// What the caller asks of the receiving thread.
pub enum Request {
    /// Read what is queued, then close every interval ended by the time given.
    Close(f64, Sender<Vec<Closed>>),
    /// Read what is queued, then take the interval in progress, cut at the time given.
    Take(f64, Sender<Closed>),
    Cut(f64),
    Admit(Option<Admission>),
    Peek(Sender<(Counts, Loss, [usize; 3])>),
    /// End the thread and hand the collector back.
    Stop(Sender<Collector>),
}

/// A receiving thread and the way to ask it things.
pub struct Receiving {
    requests: Sender<Request>,
    thread: Option<JoinHandle<()>>,
    end: Arc<AtomicU64>,
}

impl Receiving {
    /// Receive from `fd` into `collector`, `batch` datagrams per system call at most.
    pub fn start(collector: Collector, fd: RawFd, batch: usize) -> std::io::Result<Self> {
        let (requests, inbox) = mpsc::channel();
        let end = Arc::new(AtomicU64::new(collector.end.to_bits()));
        let shared = Arc::clone(&end);
        let thread = std::thread::Builder::new()
            .name("fabcorr-sflow-receive".into())
            .spawn(move || run(collector, fd, batch.max(1), &inbox, &shared))?;
        Ok(Receiving { requests, thread: Some(thread), end })
    }

    /// The end of the interval in progress, as the thread last closed one.
    pub fn end(&self) -> f64 {
        f64::from_bits(self.end.load(Ordering::Relaxed))
    }

    /// Sends `request`; false when the thread has ended.
    pub fn ask(&self, request: Request) -> bool {
        self.requests.send(request).is_ok()
    }

    /// Ends the thread; the collector, unless the thread died.
    pub fn stop(mut self) -> Option<Collector> {
        let (reply, answer) = mpsc::channel();
        let sent = self.ask(Request::Stop(reply));
        let collector = if sent { answer.recv().ok() } else { None };
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        collector
    }
}

impl Drop for Receiving {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let (reply, _) = mpsc::channel();
            let _ = self.requests.send(Request::Stop(reply));
            let _ = thread.join();
        }
    }
}

/// Buffers for one `recvmmsg` call and what it received.
pub(crate) struct Batch {
    buffers: Vec<Vec<u8>>,
    headers: MultiHeaders<SockaddrStorage>,
    /// (length, arrival time, source) of each datagram received.
    pub(crate) received: Vec<(usize, f64, Option<IpAddr>)>,
}

impl Batch {
    pub(crate) fn new(size: usize) -> Self {
        Batch {
            buffers: vec![vec![0u8; MAX_DATAGRAM]; size],
            headers: MultiHeaders::preallocate(size, Some(nix::cmsg_space!(TimeSpec))),
            received: Vec::with_capacity(size),
        }
    }

    /// Receives into the buffers; the number of datagrams (0 when none was queued in time).
    pub(crate) fn receive(&mut self, fd: RawFd, flags: MsgFlags) -> Result<usize, Errno> {
        self.received.clear();
        let mut slices: Vec<[IoSliceMut<'_>; 1]> =
            self.buffers.iter_mut().map(|b| [IoSliceMut::new(&mut b[..])]).collect();
        let results = match recvmmsg(fd, &mut self.headers, slices.iter_mut(), flags, None) {
            Ok(results) => results,
            Err(Errno::EAGAIN | Errno::EINTR) => return Ok(0),
            Err(errno) => return Err(errno),
        };
        for message in results {
            let stamp = message.cmsgs().ok().and_then(|mut cmsgs| {
                cmsgs.find_map(|c| match c {
                    ControlMessageOwned::ScmTimestampns(t) => {
                        Some(t.tv_sec() as f64 + t.tv_nsec() as f64 / 1e9)
                    }
                    _ => None,
                })
            });
            let source = message.address.and_then(|a| source_address(&a));
            self.received.push((message.bytes, stamp.unwrap_or_else(now), source));
        }
        Ok(self.received.len())
    }

    /// The bytes of datagram `i` of those received.
    pub(crate) fn datagram(&self, i: usize) -> &[u8] {
        match (self.buffers.get(i), self.received.get(i)) {
            (Some(buffer), Some(&(length, _, _))) => buffer.get(..length).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Hands every datagram received to `collector`; the latest arrival time.
    fn hand(&self, collector: &mut Collector) -> f64 {
        let mut latest = f64::NEG_INFINITY;
        for (buffer, &(length, at, source)) in self.buffers.iter().zip(&self.received) {
            collector.handle(buffer.get(..length).unwrap_or(&[]), at, source);
            latest = latest.max(at);
        }
        latest
    }
}

fn source_address(address: &SockaddrStorage) -> Option<IpAddr> {
    if let Some(v4) = address.as_sockaddr_in() {
        return Some(IpAddr::V4(v4.ip()));
    }
    address.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
}

/// Wall-clock seconds now.
pub fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Reads what is queued, up to the first datagram that arrived at or after `until`
/// (everything before it in the queue arrived earlier).
fn drain(collector: &mut Collector, fd: RawFd, batch: &mut Batch, until: f64) {
    loop {
        match batch.receive(fd, MsgFlags::MSG_DONTWAIT) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if batch.hand(collector) >= until {
                    return;
                }
            }
        }
    }
}

fn run(mut collector: Collector, fd: RawFd, size: usize, inbox: &Receiver<Request>, end: &AtomicU64) {
    let mut batch = Batch::new(size);
    loop {
        loop {
            let request = match inbox.try_recv() {
                Ok(request) => request,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            };
            match request {
                Request::Close(now, reply) => {
                    drain(&mut collector, fd, &mut batch, now);
                    let _ = reply.send(collector.close(now));
                }
                Request::Take(at, reply) => {
                    drain(&mut collector, fd, &mut batch, at);
                    let _ = reply.send(collector.take(at));
                }
                Request::Cut(at) => collector.cut(at),
                Request::Admit(admission) => collector.admit(admission),
                Request::Peek(reply) => {
                    let _ = reply.send(collector.peek());
                }
                Request::Stop(reply) => {
                    let _ = reply.send(collector);
                    return;
                }
            }
            end.store(collector.end.to_bits(), Ordering::Relaxed);
        }
        // blocks for the first datagram (at most the socket's receive timeout), then takes
        // what else is queued
        match batch.receive(fd, MsgFlags::MSG_WAITFORONE) {
            Ok(0) => {}
            Ok(_) => {
                batch.hand(&mut collector);
                end.store(collector.end.to_bits(), Ordering::Relaxed);
            }
            // an error queued on the socket (an ICMP message after a refusal): read on;
            // a socket that cannot be read at all (closed under us) is not spun on
            Err(Errno::ECONNREFUSED) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}
