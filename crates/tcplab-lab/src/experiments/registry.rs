//! The registry of named experiments: one entry per kernel patch whose
//! commit message reports an experiment, kept as data with the patch's
//! title and the numbers it reported. `tcplab reproduce NAME` runs an
//! entry; `tcplab reproduce all` runs them all.
//!
//! This is the one place entries live. docs/experiments.md describes how
//! to add one (a scenario file in scenarios/, the arms as knob settings,
//! the metrics, the run count, the patch's table verbatim and its numbers
//! as [`RefValue`](super::RefValue)s, and optional checks). Each entry's
//! page in docs/reproductions/ explains its set-up and its result.

use super::{Arm, ArmStat, Check, Experiment, KernelVariant, RefStat, RefValue, Reference};
use crate::scenario_file;

/// Every registered experiment, in the order `reproduce all` runs them.
pub static REGISTRY: &[Experiment] = &[REORDERING, DCTCP_RPC, HYSTART];

/// "tcp: increase throughput when reordering is high" (v3.12).
const REORDERING: Experiment = Experiment {
    name: "reordering",
    title: "tcp: increase throughput when reordering is high",
    source: "Yuchung Cheng, net-next 2013, merged in v3.12 (../shared/seeds/tcp-reordering-cwnd-growth.patch.txt)",
    summary: "Before v3.12 cwnd grew only on ACKs that advanced snd_una (FLAG_DATA_ACKED), and tcp_moderate_cwnd \
              clamped it in Disorder; v3.12 lets it grow on any forward progress (FLAG_FORWARD_PROGRESS) once \
              tp->reordering exceeds tcp_reordering. One CUBIC bulk flow, 20 Mbit/s, RTT uniform in 45-55 ms. \
              Arms: the v3.11 and v3.12 presets (which differ only in the growth rule), and current Linux.",
    scenario: scenario_file!("reordering-20mbit.toml"),
    set: &[],
    arms: &[
        Arm::new("v3.11", &["tcp.preset=v3.11"]),
        Arm::new("v3.12", &["tcp.preset=v3.12"]),
        Arm::new("linux-current", &["tcp.preset=linux-current"]),
    ],
    metrics: &[
        "goodput",
        "reordering",
        "reordering_mean",
        "ca_share.Open",
        "ca_share.Disorder",
        "ca_share.Recovery",
        "ca_share.Loss",
        "TcpExtTCPSACKReorder",
        "TcpExtTCPFACKReorder",
        "TcpExtTCPTSReorder",
        "TcpExtTCPDSACKUndo",
        "TcpExtTCPFullUndo",
        "TcpExtTCPPartialUndo",
        "TcpExtTCPLossUndo",
        "TcpExtTCPSackRecovery",
        "TcpRetransSegs",
    ],
    runs: 10,
    kernel: Some(KernelVariant {
        note: "Linux 6.12 with the growth rule switched off (tcp_input.forward_progress_growth=0: \
               tcp_may_raise_cwnd grows cwnd on FLAG_DATA_ACKED only) and on (mainline), so the arms differ \
               in the patch's rule alone; then both with the TSval clock of 3.x, one tick a jiffy \
               (tcp_output.ts_jiffies=1), as the era presets have it. No 3.x loss recovery: the kernel has \
               none.",
        set: &[],
        arms: &[
            Arm { name: "6.12 rule off", settings: &["tcp.cwnd_growth=data-acked"], reference: None },
            Arm { name: "6.12", settings: &[], reference: None },
            // The presets' 3.x TSval clock (docs/reproductions/reordering.md):
            // what the check compares with.
            Arm {
                name: "6.12 rule off, 3.x TSval clock",
                settings: &["tcp.cwnd_growth=data-acked", "tcp.ts_clock=jiffies"],
                reference: None,
            },
            Arm { name: "6.12, 3.x TSval clock", settings: &["tcp.ts_clock=jiffies"], reference: None },
        ],
        runs: 5,
    }),
    reference: Reference {
        quote: "Using netperf on a qdisc setup of 20Mbps BW and random RTT from 45ms to\n\
                55ms (for reordering effect). This change increases TCP throughput\n\
                by 20 - 25% to near bottleneck BW.",
        values: &[],
    },
    checks: &[Check::Ratio {
        metric: "goodput",
        num: ArmStat::median("v3.12", "6.12, 3.x TSval clock"),
        den: ArmStat::median("v3.11", "6.12 rule off, 3.x TSval clock"),
        min: 1.20,
        max: 1.25,
    }],
};

/// The v4.17 preset's DCTCP receiver and `tcp_cwnd_reduction` bound, as
/// the kernel backend's switches (kernel/patches/0003, 0004, 0009, 0010).
const V417_RECEIVER_AND_PRR: &[&str] = &[
    "tcp.ack_on_cwr=false",
    "tcp.dctcp_ack_on_ce_change=false",
    "tcp.special_ack_keeps_delack=false",
    "tcp.prr_rule=v4.17",
];
const V417_RECEIVER_AND_PRR_FLOOR2: &[&str] = &[
    "tcp.ack_on_cwr=false",
    "tcp.dctcp_ack_on_ce_change=false",
    "tcp.special_ack_keeps_delack=false",
    "tcp.prr_rule=v4.17",
    "tcp.cwnd_reduction_floor=2",
];

/// "tcp: force cwnd at least 2 in tcp_cwnd_reduction" (not merged; the
/// stall was fixed on the receiver side instead).
const DCTCP_RPC: Experiment = Experiment {
    name: "dctcp-rpc",
    title: "tcp: force cwnd at least 2 in tcp_cwnd_reduction",
    source: "Lawrence Brakmo, net-next 2018, not merged (../shared/seeds/tcp-cwnd-reduction-floor.patch.txt)",
    summary: "With DCTCP, a CE mark on the last packet of a request leaves the sender in CWR with cwnd 1 \
              (PRR with nothing in flight); the next request's single segment waits for the receiver's \
              delayed ACK, or for the sender's loss probe when 4.17's DCTCP special ACK cancelled the \
              segment's own ACK. The patch floors cwnd at 2. Mainline fixed it on the receiver instead: ACK at once \
              on CWR (ack_on_cwr), and DCTCP's ACK on a CE-state change (current preset). 3 hosts x (bulk, \
              1 MB RPC, 10 KB RPC) into a 4th, 10 Gbit/s, v4.17.",
    scenario: scenario_file!("dctcp-rpc.toml"),
    set: &["run.duration=10s"],
    arms: &[
        Arm::new("cubic", &["flow.*.cc=cubic"]),
        Arm::new("dctcp", &[]),
        Arm::new("dctcp-floor2", &["tcp.cwnd_reduction_floor=2"]),
        Arm::new("dctcp-ack-on-cwr", &["tcp.ack_on_cwr=true"]),
        Arm::new("dctcp-current", &["tcp.preset=linux-current"]),
    ],
    metrics: &[
        "rpc.*-1m.p99",
        "rpc.*-1m.p99.9",
        "rpc.*-10k.p99",
        "rpc.*-10k.p99.9",
        "rpc.*-10k.p50",
        "TcpExtDelayedACKs",
        "TcpExtTCPTimeouts",
        "TcpExtTCPSpuriousRTOs",
        "TcpRetransSegs",
    ],
    runs: 3,
    kernel: Some(KernelVariant {
        note: "Linux 6.12 with the v4.17 era's receiver and reduction switched in: no ACK at once on CWR \
               (tcp_input.ack_on_cwr=0) or on a CE-state change (tcp_dctcp.dctcp_ack_on_ce_change=0), DCTCP's \
               special ACK as 4.11-4.17 sent it (tcp_output.special_ack_keeps_delack=0) and tcp_cwnd_reduction's \
               v4.x bound (tcp_input.prr_rule_v417=1); the floor is tcp_input.cwnd_reduction_floor=2. 1 s per run \
               instead of 10 s: the guest takes one to two minutes of wall time per virtual second at 9 flows x \
               10 Gbit/s (docs/KERNEL.md).",
        set: &["tcp.preset=linux-current", "run.duration=1s"],
        arms: &[
            Arm { name: "cubic", settings: &["flow.*.cc=cubic"], reference: None },
            Arm { name: "dctcp", settings: V417_RECEIVER_AND_PRR, reference: None },
            Arm { name: "dctcp-floor2", settings: V417_RECEIVER_AND_PRR_FLOOR2, reference: None },
            Arm { name: "dctcp-current", settings: &[], reference: None },
        ],
        runs: 3,
    }),
    reference: Reference {
        quote: "           Cubic 99%  Cubic 99.9%   dctcp 99%    dctcp 99.9%\n\
                 1MB RPCs    3.5ms       6.0ms         43ms          208ms\n\
                10KB RPCs    1.0ms       2.5ms         53ms          212ms\n\
                ...\n\
                             dctcp 99%       dctcp 99.9%\n\
                 1MB RPCs      3.8ms             4.4ms\n\
                10KB RPCs      168us             211us",
        values: &[
            RefValue { arm: "cubic", metric: "rpc.*-1m.p99", stat: RefStat::Median(3_500.0) },
            RefValue { arm: "cubic", metric: "rpc.*-1m.p99.9", stat: RefStat::Median(6_000.0) },
            RefValue { arm: "cubic", metric: "rpc.*-10k.p99", stat: RefStat::Median(1_000.0) },
            RefValue { arm: "cubic", metric: "rpc.*-10k.p99.9", stat: RefStat::Median(2_500.0) },
            RefValue { arm: "dctcp", metric: "rpc.*-1m.p99", stat: RefStat::Median(43_000.0) },
            RefValue { arm: "dctcp", metric: "rpc.*-1m.p99.9", stat: RefStat::Median(208_000.0) },
            RefValue { arm: "dctcp", metric: "rpc.*-10k.p99", stat: RefStat::Median(53_000.0) },
            RefValue { arm: "dctcp", metric: "rpc.*-10k.p99.9", stat: RefStat::Median(212_000.0) },
            RefValue { arm: "dctcp-floor2", metric: "rpc.*-1m.p99", stat: RefStat::Median(3_800.0) },
            RefValue { arm: "dctcp-floor2", metric: "rpc.*-1m.p99.9", stat: RefStat::Median(4_400.0) },
            RefValue { arm: "dctcp-floor2", metric: "rpc.*-10k.p99", stat: RefStat::Median(168.0) },
            RefValue { arm: "dctcp-floor2", metric: "rpc.*-10k.p99.9", stat: RefStat::Median(211.0) },
        ],
    },
    // "p99.9 from ~210 ms down to a few ms": the floor's p99.9 at most
    // 1/20 of DCTCP's (the patch: 211 µs / 212 ms, 4.4 ms / 208 ms).
    checks: &[
        Check::Ratio {
            metric: "rpc.*-10k.p99.9",
            num: ArmStat::median("dctcp-floor2", "dctcp-floor2"),
            den: ArmStat::median("dctcp", "dctcp"),
            min: 0.0,
            max: 0.05,
        },
        Check::Ratio {
            metric: "rpc.*-1m.p99.9",
            num: ArmStat::median("dctcp-floor2", "dctcp-floor2"),
            den: ArmStat::median("dctcp", "dctcp"),
            min: 0.0,
            max: 0.05,
        },
    ],
};

/// The seed-003 scenario's own sender qdisc: fq with pre-4.20 credit
/// pacing (the kernel variant's `set` chooses EDT for its other arms).
const FQ_CREDIT_3X: &str = r#"node.sender.qdisc={ kind = "fq", pacing = "credit", low_rate_threshold = "0bit" }"#;

/// "tcp_cubic: refine Hystart delay threshold" (v3.19).
const HYSTART: Experiment = Experiment {
    name: "hystart",
    title: "tcp_cubic: refine Hystart delay threshold",
    source: "Eric Dumazet, net-next 2014, commit 42eef7a0bb09, merged in v3.19 \
             (../shared/seeds/tcp-cubic-hystart-delay-threshold.patch.txt)",
    summary: "HyStart left slow start when the minimum RTT of a round exceeded delay_min + delay_min/16 \
              (clamped to 4..16 ms): 5 ms at 80 ms RTT, within ordinary RTT noise. v3.19 uses delay_min/8. \
              One CUBIC bulk flow of 10 s, 80 ms RTT, fq pacing on the sender, on-off RTT noise of 8 ms on the \
              path; ten independent seeds per arm. Arms: the v3.18 and v3.19 presets (which differ in the \
              divisor and in running 3.18's or 3.19's HyStart code: 3.18 has no HyStart counters), current \
              Linux, both eras with delay detection only (hystart_detect = 2), and the patch's divisor switched \
              in the current core under fq's EDT pacing as on the kernel (hystart_delay_thresh_shift 4 and 3).",
    scenario: scenario_file!("hystart-80ms.toml"),
    set: &[],
    arms: &[
        Arm::new("v3.18 (/16)", &["tcp.preset=v3.18"]),
        Arm::new("v3.19 (/8)", &["tcp.preset=v3.19"]),
        Arm::new("linux-current", &["tcp.preset=linux-current"]),
        // Diagnostic arms: delay detection only (hystart_detect = 2), which
        // isolates the patch's threshold from the ACK-train test.
        Arm::new("v3.18 delay-only", &["tcp.preset=v3.18", "tcp.cubic.hystart_detect=2"]),
        Arm::new("v3.19 delay-only", &["tcp.preset=v3.19", "tcp.cubic.hystart_detect=2"]),
        // The kernel backend's set-up in the model: 6.x core, fq with EDT
        // pacing, the divisor as tcp_cubic's hystart_delay_thresh_shift.
        Arm::new(
            "current /16 (fq EDT)",
            &["tcp.preset=linux-current", "node.sender.qdisc=fq", "tcp.cubic.hystart_delay_thresh_shift=4"],
        ),
        Arm::new(
            "current /8 (fq EDT)",
            &["tcp.preset=linux-current", "node.sender.qdisc=fq", "tcp.cubic.hystart_delay_thresh_shift=3"],
        ),
    ],
    metrics: &[
        "goodput",
        "TcpExtTCPHystartTrainDetect",
        "TcpExtTCPHystartTrainCwnd",
        "TcpExtTCPHystartDelayDetect",
        "TcpExtTCPHystartDelayCwnd",
    ],
    runs: 10,
    kernel: Some(KernelVariant {
        note: "Linux 6.12 with HyStart's delay threshold at delay_min/16 (tcp_cubic.hystart_delay_thresh_shift=4) \
               and at delay_min/8 (mainline), fq with EDT pacing on the sender, and both with delay detection \
               only; and both divisors with the era presets' three 3.x mechanisms: fq's credit pacing \
               (tcp_output.edt=0), the delay_min/2 ACK-train threshold (tcp_cubic.hystart_train_half_rtt=1) and \
               a 2.5 ms ACK spacing for 3.x's millisecond clock (hystart_ack_delta_us=2500); 5 seeds per arm.",
        set: &["tcp.preset=linux-current", "node.sender.qdisc=fq"],
        arms: &[
            Arm {
                name: "6.12 /16",
                settings: &["tcp.cubic.hystart_delay_thresh_shift=4"],
                reference: Some("v3.18 (/16)"),
            },
            Arm { name: "6.12 /8", settings: &[], reference: Some("v3.19 (/8)") },
            Arm {
                name: "6.12 /16 delay-only",
                settings: &["tcp.cubic.hystart_delay_thresh_shift=4", "tcp.cubic.hystart_detect=2"],
                reference: None,
            },
            Arm { name: "6.12 /8 delay-only", settings: &["tcp.cubic.hystart_detect=2"], reference: None },
            // The era presets' 3.x mechanisms that 6.12 can be given
            // (docs/reproductions/hystart.md): what their checks compare with.
            Arm {
                name: "6.12 /16, 3.x pacing and train",
                settings: &[
                    FQ_CREDIT_3X,
                    "tcp.cubic.hystart_train_half_rtt=true",
                    "tcp.cubic.hystart_ack_delta_us=2500",
                    "tcp.cubic.hystart_delay_thresh_shift=4",
                ],
                reference: None,
            },
            Arm {
                name: "6.12 /8, 3.x pacing and train",
                settings: &[
                    FQ_CREDIT_3X,
                    "tcp.cubic.hystart_train_half_rtt=true",
                    "tcp.cubic.hystart_ack_delta_us=2500",
                ],
                reference: None,
            },
        ],
        runs: 5,
    }),
    reference: Reference {
        quote: "With the 6.25 % threshold :\n\
                THROUGHPUT=20.66 249.38 254.10 14.94 251.92 237.73 19.18 252.89 21.32 15.58\n\
                TcpExtTCPHystartTrainDetect 2  TcpExtTCPHystartTrainCwnd 4756\n\
                TcpExtTCPHystartDelayDetect 5  TcpExtTCPHystartDelayCwnd 180\n\
                With the 12.5 % threshold\n\
                THROUGHPUT=251.09 247.46 250.92 248.91 250.88 249.84 250.51 254.15 250.62 250.89\n\
                TcpExtTCPHystartTrainDetect 1  TcpExtTCPHystartTrainCwnd 3175",
        values: &[
            RefValue {
                arm: "v3.18 (/16)",
                metric: "goodput",
                stat: RefStat::Runs(&[20.66, 249.38, 254.10, 14.94, 251.92, 237.73, 19.18, 252.89, 21.32, 15.58]),
            },
            RefValue {
                arm: "v3.19 (/8)",
                metric: "goodput",
                stat: RefStat::Runs(&[251.09, 247.46, 250.92, 248.91, 250.88, 249.84, 250.51, 254.15, 250.62, 250.89]),
            },
            RefValue { arm: "v3.18 (/16)", metric: "TcpExtTCPHystartTrainDetect", stat: RefStat::Total(2.0) },
            RefValue { arm: "v3.18 (/16)", metric: "TcpExtTCPHystartTrainCwnd", stat: RefStat::Total(4756.0) },
            RefValue { arm: "v3.18 (/16)", metric: "TcpExtTCPHystartDelayDetect", stat: RefStat::Total(5.0) },
            RefValue { arm: "v3.18 (/16)", metric: "TcpExtTCPHystartDelayCwnd", stat: RefStat::Total(180.0) },
            RefValue { arm: "v3.19 (/8)", metric: "TcpExtTCPHystartTrainDetect", stat: RefStat::Total(1.0) },
            RefValue { arm: "v3.19 (/8)", metric: "TcpExtTCPHystartTrainCwnd", stat: RefStat::Total(3175.0) },
            RefValue { arm: "v3.19 (/8)", metric: "TcpExtTCPHystartDelayDetect", stat: RefStat::Total(0.0) },
        ],
    },
    // "Bimodal 15-250 Mbit/s becomes a steady ~250": /16's worst run at
    // most two thirds of /8's (the patch: 14.94 against 247.46), and /8's
    // worst run within 5 % of its median (the patch: 247.46 / 250.75);
    // for the patch's era presets, against 6.12 given their 3.x pacing,
    // train threshold and clock, and for the divisor alone in the current
    // core, against 6.12's /16 and /8 as shipped (EDT).
    checks: &[
        Check::Ratio {
            metric: "goodput",
            num: ArmStat::min("v3.19 (/8)", "6.12 /8, 3.x pacing and train"),
            den: ArmStat::min("v3.18 (/16)", "6.12 /16, 3.x pacing and train"),
            min: 1.5,
            max: f64::INFINITY,
        },
        Check::Ratio {
            metric: "goodput",
            num: ArmStat::min("v3.19 (/8)", "6.12 /8, 3.x pacing and train"),
            den: ArmStat::median("v3.19 (/8)", "6.12 /8, 3.x pacing and train"),
            min: 0.95,
            max: 1.0,
        },
        Check::Ratio {
            metric: "goodput",
            num: ArmStat::min("current /8 (fq EDT)", "6.12 /8"),
            den: ArmStat::min("current /16 (fq EDT)", "6.12 /16"),
            min: 1.5,
            max: f64::INFINITY,
        },
        Check::Ratio {
            metric: "goodput",
            num: ArmStat::min("current /8 (fq EDT)", "6.12 /8"),
            den: ArmStat::median("current /8 (fq EDT)", "6.12 /8"),
            min: 0.95,
            max: 1.0,
        },
    ],
};
