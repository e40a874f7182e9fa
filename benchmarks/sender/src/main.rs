//! Replays sFlow datagrams over UDP at a set rate, `sendmmsg` batches from one thread:
//! the sender of the live benchmark (benchmarks/sflow_suite.py), fast enough to leave
//! the receiver as the bottleneck.
//!
//! `fabcorr-sflow-send FILE HOST:PORT DATAGRAMS_PER_S SECONDS`: FILE holds the datagrams
//! as (u32 little-endian length, bytes) one after the other; they are sent in order,
//! over and over, for SECONDS. Prints `{"sent": N, "failed": N, "seconds": S}`.
#![forbid(unsafe_code)]

use std::io::IoSlice;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::socket::{sendmmsg, MsgFlags, MultiHeaders, SockaddrIn};

const BATCH: usize = 64;

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
    let all = datagrams(&bytes).map_err(|e| format!("{file}: {e}"))?;
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
        let slices: Vec<[IoSlice<'_>; 1]> =
            (0..BATCH).map(|i| [IoSlice::new(all[(next + i) % all.len()])]).collect();
        match sendmmsg(fd, &mut headers, &slices, &addresses, [], MsgFlags::empty()) {
            Ok(results) => {
                let n = results.count();
                sent += n as u64;
                next = (next + n) % all.len();
            }
            Err(Errno::ECONNREFUSED) => {
                failed += 1;
                next = (next + 1) % all.len();
            }
            Err(Errno::EAGAIN | Errno::ENOBUFS | Errno::EINTR) => {}
            Err(e) => return Err(format!("sendmmsg: {e}")),
        }
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
