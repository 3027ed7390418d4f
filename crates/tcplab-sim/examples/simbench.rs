//! Runs [`tcplab_sim::bench_config`] and prints throughput figures:
//! `cargo run --release -p tcplab-sim --example simbench [seconds]`.

use std::time::Instant as WallInstant;
use tcplab_core::time::Duration;

fn main() {
    let mut cfg = tcplab_sim::bench_config();
    if let Some(s) = std::env::args().nth(1).and_then(|s| s.parse::<u64>().ok()) {
        cfg.duration = Duration::from_secs(s);
    }
    let t0 = WallInstant::now();
    let r = match tcplab_sim::run(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    println!("simulated {:?} in {wall:.3} s wall", r.sim_time);
    println!(
        "events {} ({:.2} M/s), data segments {} ({:.3} M/s)",
        r.events,
        r.events as f64 / wall / 1e6,
        r.data_segments,
        r.data_segments as f64 / wall / 1e6
    );
    for f in &r.flows {
        println!(
            "flow {} {}: {:.1} Mbit/s, {} bytes, {} retrans, cwnd {}, ssthresh {}, srtt {} us",
            f.id,
            f.cc,
            f.goodput_bps / 1e6,
            f.bytes_delivered,
            f.retransmits,
            f.sender_info.snd_cwnd,
            f.sender_info.snd_ssthresh,
            f.sender_info.rtt_us
        );
    }
    for l in &r.links {
        println!(
            "link {}: util {:.3}, {} pkts, {} drops, {} CE, peak queue {}",
            l.id, l.utilization, l.tx_packets, l.drops, l.ce_marks, l.peak_queue_packets
        );
    }
    for (name, v) in r.counters.nonzero() {
        println!("  {name} {v}");
    }
}
