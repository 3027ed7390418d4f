//! The benchmark scenario measured by `tcplab bench`.

use crate::config::{
    AppConfig, DelayModel, DirectionConfig, FlowConfig, Limit, LinkConfig, NodeConfig, QueueConfig, SimConfig,
};
use tcplab_core::time::Duration;

/// Bottleneck rate, bits per second.
pub const BENCH_BOTTLENECK_BPS: u64 = 1_000_000_000;
/// Access (sender NIC) rate, bits per second.
pub const BENCH_ACCESS_BPS: u64 = 10_000_000_000;
/// Round-trip propagation delay.
pub const BENCH_RTT: Duration = Duration::from_millis(40);

/// One CUBIC flow (`TcpConfig::default()`) for 20 simulated seconds over
///
/// ```text
/// sender ==10 Gbit/s, 0 delay== switch --1 Gbit/s, 20 ms each way-- receiver
/// ```
///
/// RTT 40 ms (all of it on the bottleneck), so the BDP is 1 Gbit/s · 40 ms
/// = 5,000,000 bytes, and the switch's queue toward the receiver is a
/// 1-BDP drop-tail buffer (`Bytes(5_000_000)`, ~3333 full-sized packets).
///
/// The access link is 10× faster than the bottleneck, as with a 10G NIC
/// behind a 1G bottleneck in a testbed: queueing and loss happen at the
/// switch, where the buffer under test is. (With a same-rate access link
/// the queue would form in the sender's NIC instead, where the simulator
/// applies backpressure rather than drops — see `host.rs` — and the switch
/// buffer would never fill.) Host NIC queues are `Packets(10_000)`; the
/// receiver's ACK path uses the same 1 Gbit/s link in reverse.
pub fn bench_config() -> SimConfig {
    let one_way = Duration::from_nanos(BENCH_RTT.as_nanos() / 2);
    let bdp_bytes = BENCH_BOTTLENECK_BPS / 8 * BENCH_RTT.as_nanos() / 1_000_000_000;
    let host_queue = QueueConfig { limit: Limit::Packets(10_000), ecn_threshold: None };
    let direction = |delay: Duration, queue: &QueueConfig| DirectionConfig {
        delay: DelayModel::Fixed(delay),
        queue: queue.clone(),
        loss: crate::config::LossModel::None,
        blackouts: Vec::new(),
        police: None,
        slot: None,
    };
    SimConfig {
        duration: Duration::from_secs(20),
        seed: 1,
        nodes: vec![NodeConfig::host("sender"), NodeConfig::switch("switch"), NodeConfig::host("receiver")],
        links: vec![
            LinkConfig {
                name: "access".into(),
                a: 0,
                b: 1,
                rate_bps: BENCH_ACCESS_BPS,
                ab: direction(Duration::ZERO, &host_queue),
                ba: direction(Duration::ZERO, &QueueConfig { limit: Limit::Bytes(bdp_bytes), ecn_threshold: None }),
            },
            LinkConfig {
                name: "bottleneck".into(),
                a: 1,
                b: 2,
                rate_bps: BENCH_BOTTLENECK_BPS,
                ab: direction(one_way, &QueueConfig { limit: Limit::Bytes(bdp_bytes), ecn_threshold: None }),
                ba: direction(one_way, &host_queue),
            },
        ],
        flows: vec![FlowConfig::new("bulk", 0, 2, AppConfig::Bulk { bytes: None, stop: None })],
        trace_interval: None,
    }
}
