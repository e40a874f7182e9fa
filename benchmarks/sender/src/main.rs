//! Replays sFlow datagrams over UDP at a set rate, `sendmmsg` batches from one thread:
//! the sender of the live benchmark (benchmarks/sflow_suite.py), fast enough to leave
//! the receiver as the bottleneck.
//!
//! `fabcorr-sflow-send FILE HOST:PORT DATAGRAMS_PER_S SECONDS`: FILE holds the datagrams
//! as (u32 little-endian length, bytes) one after the other; they are sent in order,
//! over and over, for SECONDS. Each pass over the file moves every agent's sequence
//! numbers and uptimes on by that agent's datagrams in the file, so a capture whose
//! sequences run 1, 2, 3 per agent (as the benchmark's do) goes on without a gap or a
//! restart. Prints `{"sent": N, "failed": N, "seconds": S}`.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::io::IoSlice;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::socket::{sendmmsg, MsgFlags, MultiHeaders, SockaddrIn};

const BATCH: usize = 64;

/// Where a datagram's sequence number and uptime are (sFlow v5 header), by agent type.
fn header_offsets(datagram: &[u8]) -> Option<(&[u8], usize)> {
    match datagram.get(4..8)? {
        [0, 0, 0, 1] => Some((datagram.get(8..12)?, 16)),
        [0, 0, 0, 2] => Some((datagram.get(8..24)?, 28)),
        _ => None,
    }
}

/// Adds `by` to the big-endian u32 at `at` (wrapping), if there is one.
fn bump(datagram: &mut [u8], at: usize, by: u32) {
    if let Some(word) = datagram.get_mut(at..at + 4) {
        let value = u32::from_be_bytes([word[0], word[1], word[2], word[3]]).wrapping_add(by);
        word.copy_from_slice(&value.to_be_bytes());
    }
}

/// Each datagram's sequence-number offset and the step of its agent per pass.
fn steps(all: &[Vec<u8>]) -> Vec<(usize, u32)> {
    let mut per_agent: HashMap<Vec<u8>, u32> = HashMap::new();
    for d in all {
        if let Some((agent, _)) = header_offsets(d) {
            *per_agent.entry(agent.to_vec()).or_default() += 1;
        }
    }
    all.iter()
        .map(|d| match header_offsets(d) {
            Some((agent, at)) => (at, per_agent.get(agent).copied().unwrap_or(0)),
            None => (0, 0),
        })
        .collect()
}

fn datagrams(bytes: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let head = bytes.get(at..at + 4).ok_or("a length cut short")?;
        let length = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        out.push(bytes.get(at + 4..at + 4 + length).ok_or("a datagram cut short")?);
        at += 4 + length;
    }
    if out.is_empty() {
        return Err("no datagrams".into());
    }
    Ok(out)
}

fn run(args: &[String]) -> Result<(), String> {
    let [_, file, target, rate, seconds] = args else {
        return Err("usage: fabcorr-sflow-send FILE HOST:PORT DATAGRAMS_PER_S SECONDS".into());
    };
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let mut all: Vec<Vec<u8>> =
        datagrams(&bytes).map_err(|e| format!("{file}: {e}"))?.into_iter().map(<[u8]>::to_vec).collect();
    let steps = steps(&all);
    let rate: f64 = rate.parse().map_err(|_| format!("rate: not a number: {rate}"))?;
    let seconds: f64 = seconds.parse().map_err(|_| format!("seconds: not a number: {seconds}"))?;
    let socket = UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
    socket.connect(target).map_err(|e| format!("{target}: {e}"))?;
    let fd = socket.as_raw_fd();
    let mut headers = MultiHeaders::<SockaddrIn>::preallocate(BATCH, None);
    let addresses: Vec<Option<SockaddrIn>> = vec![None; BATCH];
    let (mut sent, mut failed, mut next) = (0u64, 0u64, 0usize);
    let start = Instant::now();
    let end = Duration::from_secs_f64(seconds);
    loop {
        let elapsed = start.elapsed();
        if elapsed >= end {
            break;
        }
        let due = (rate * elapsed.as_secs_f64()) as u64;
        if sent + failed >= due + BATCH as u64 {
            std::thread::sleep(Duration::from_secs_f64((sent + failed - due) as f64 / rate / 2.0));
            continue;
        }
        let count = BATCH.min(all.len() - next);
        let slices: Vec<[IoSlice<'_>; 1]> =
            all[next..next + count].iter().map(|d| [IoSlice::new(d)]).collect();
        let done = match sendmmsg(fd, &mut headers, &slices, &addresses, [], MsgFlags::empty()) {
            Ok(results) => {
                let n = results.count();
                sent += n as u64;
                n
            }
            Err(Errno::ECONNREFUSED) => {
                failed += 1;
                1
            }
            Err(Errno::EAGAIN | Errno::ENOBUFS | Errno::EINTR) => 0,
            Err(e) => return Err(format!("sendmmsg: {e}")),
        };
        drop(slices);
        for (datagram, &(at, step)) in all[next..next + done].iter_mut().zip(&steps[next..next + done]) {
            if step > 0 {
                bump(datagram, at, step); // the sequence number, for the next pass
                bump(datagram, at + 4, step); // and the uptime
            }
        }
        next = (next + done) % all.len();
    }
    println!("{{\"sent\": {sent}, \"failed\": {failed}, \"seconds\": {}}}", start.elapsed().as_secs_f64());
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("fabcorr-sflow-send: {message}");
            ExitCode::from(2)
        }
    }
}
