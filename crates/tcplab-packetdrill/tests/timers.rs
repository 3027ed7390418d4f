//! Timer arithmetic in jiffies at each HZ, on small hand-written scripts
//! against the real core (Linux 6.12's rounding, pinned by hand).

use std::path::Path;
use tcplab_packetdrill::{run_source, Outcome, RunOptions};

/// 4 segments sent at 0.1 s over a 100 ms RTT; at 0.2 s a SACK of the
/// last one arms RACK's reordering timer (`tcp_rack_mark_lost`) for the
/// first three: remaining = rtt + min_rtt/4 − elapsed = 25 ms.
fn script(retransmit_at: &str) -> String {
    format!(
        "\
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
+0 bind(3, ..., ...) = 0
+0 listen(3, 1) = 0
+0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0 > S. 0:0(0) ack 1 <...>
+.1 < . 1:1(0) ack 1 win 320
+0 accept(3, ..., ...) = 4
+0 write(4, ..., 4000) = 4000
+0 > P. 1:4001(4000) ack 1
+.1 < . 1:1(0) ack 1 win 320 <sack 3001:4001,nop,nop>
{retransmit_at} > . 1:1001(1000) ack 1
"
    )
}

fn outcome(retransmit_at: &str, hz: u32) -> Outcome {
    let opts = RunOptions { hz: Some(hz), ..Default::default() };
    run_source(
        &format!("--tolerance_usecs=500\n--tolerance_percent=0\n{}", script(retransmit_at)),
        Path::new("t.pkt"),
        &opts,
    )
    .outcome
}

/// HZ 250: `usecs_to_jiffies(25000 + TCP_TIMEOUT_MIN_US)` = ceil(27000 /
/// 4000) = 7 jiffies, and the timer wheel runs a level-0 timer one jiffy
/// after its expiry (`calc_index` rounds up): 8 ticks, 0.232 s (Linux
/// 6.12 on the kernel backend: 0.2317 s, its clock 0.3 ms off the tick).
/// Rounding the two terms apart (7 + 1) would give 0.236 s.
/// HZ 1000: 27 jiffies + 1: 0.228 s.
#[test]
fn test_rack_reorder_timer_rounds_the_sum_once_at_each_hz() {
    assert!(matches!(outcome("0.232", 250), Outcome::Pass), "{:?}", outcome("0.232", 250));
    assert!(matches!(outcome("0.228", 1000), Outcome::Pass), "{:?}", outcome("0.228", 1000));
    assert!(matches!(outcome("0.236", 250), Outcome::Fail { .. }));
}
