//! The run-time switches that tcplab's kernel patches (`kernel/patches/`,
//! GPL-2.0) add, as `<file>.<module parameter>`. Each defaults to mainline.

/// 0: `tcp_may_raise_cwnd` grows cwnd only on `FLAG_DATA_ACKED` (before
/// "tcp: increase throughput when reordering is high", seed 000).
pub const FORWARD_PROGRESS_GROWTH: &str = "tcp_input.forward_progress_growth";
/// 2: "tcp: force cwnd at least 2 in tcp_cwnd_reduction" (seed 001).
pub const CWND_REDUCTION_FLOOR: &str = "tcp_input.cwnd_reduction_floor";
/// 0: no immediate ACK of a data segment carrying CWR (before v4.18).
pub const ACK_ON_CWR: &str = "tcp_input.ack_on_cwr";
/// 0: no immediate ACK on a DCTCP CE-state change (before v4.18).
pub const DCTCP_ACK_ON_CE_CHANGE: &str = "tcp_dctcp.dctcp_ack_on_ce_change";
/// 4: HyStart's delay threshold `delay_min/16` (before "tcp_cubic: refine
/// Hystart delay threshold", seed 003).
pub const HYSTART_DELAY_THRESH_SHIFT: &str = "tcp_cubic.hystart_delay_thresh_shift";
/// 1: HyStart's ACK train needs `delay_min/2` even when the socket is paced,
/// as before "tcp_cubic: make Hystart aware of pacing" (v5.7).
pub const HYSTART_TRAIN_HALF_RTT: &str = "tcp_cubic.hystart_train_half_rtt";
/// 0: TCP leaves data skbs without an earliest departure time, so sch_fq
/// paces them from `sk_pacing_rate` at dequeue, as before v4.20. Not a TCP
/// knob: set when a host's fq has `pacing = "credit"`.
pub const EDT: &str = "tcp_output.edt";
/// 1: the TSval clock counts jiffies, as before "tcp: switch TCP TS option
/// (RFC 7323) to 1ms clock" (v4.13).
pub const TS_JIFFIES: &str = "tcp_output.ts_jiffies";
/// 0: DCTCP's ACK for the prior CE state cancels the segment's own ACK and
/// is owed by `delayed_ack_reserved`, as before v4.18 (seed 001's stall).
pub const SPECIAL_ACK_KEEPS_DELACK: &str = "tcp_output.special_ack_keeps_delack";
/// 1: `tcp_cwnd_reduction`'s bound of v4.x–v5.11 (PRR-SSRB only when
/// retransmitted data was ACKed), which leaves cwnd 1 after seed 001's CWR.
pub const PRR_RULE_V417: &str = "tcp_input.prr_rule_v417";

pub const ALL: &[&str] = &[
    FORWARD_PROGRESS_GROWTH,
    CWND_REDUCTION_FLOOR,
    ACK_ON_CWR,
    DCTCP_ACK_ON_CE_CHANGE,
    HYSTART_DELAY_THRESH_SHIFT,
    HYSTART_TRAIN_HALF_RTT,
    EDT,
    TS_JIFFIES,
    SPECIAL_ACK_KEEPS_DELACK,
    PRR_RULE_V417,
];
