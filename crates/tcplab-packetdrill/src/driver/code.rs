//! The `%{ }%` blocks: `tcp_info` snapshots taken when each block's time
//! comes, and the blocks run on them after the last event, as packetdrill
//! runs its one Python file.

use super::{fail, Driver, Stop};
use crate::python::{Interpreter, PyError, Value};
use tcplab_core::{CaState, TcpInfo, TcpState};

pub(super) struct Snapshot {
    pub(super) event: usize,
    pub(super) line: u32,
    pub(super) info: TcpInfo,
    pub(super) state: TcpState,
    /// `tcpi_advmss` and `tcpi_notsent_bytes` (not in the core's `TcpInfo`).
    pub(super) advmss: u32,
    pub(super) notsent_bytes: u64,
}

impl Driver<'_> {
    pub(super) fn run_code(&mut self) -> Result<(), Stop> {
        if self.snapshots.is_empty() {
            return Ok(());
        }
        let mut py = Interpreter::new();
        for (name, v) in [
            ("TCP_ESTABLISHED", 1),
            ("TCP_SYN_SENT", 2),
            ("TCP_SYN_RECV", 3),
            ("TCP_FIN_WAIT1", 4),
            ("TCP_FIN_WAIT2", 5),
            ("TCP_TIME_WAIT", 6),
            ("TCP_CLOSE", 7),
            ("TCP_CLOSE_WAIT", 8),
            ("TCP_LAST_ACK", 9),
            ("TCP_LISTEN", 10),
            ("TCP_CLOSING", 11),
            ("TCP_CA_Open", CaState::Open as i128),
            ("TCP_CA_Disorder", CaState::Disorder as i128),
            ("TCP_CA_CWR", CaState::Cwr as i128),
            ("TCP_CA_Recovery", CaState::Recovery as i128),
            ("TCP_CA_Loss", CaState::Loss as i128),
            ("TCPI_OPT_TIMESTAMPS", 1),
            ("TCPI_OPT_SACK", 2),
            ("TCPI_OPT_WSCALE", 4),
            ("TCPI_OPT_ECN", 8),
            ("TCPI_OPT_ECN_SEEN", 16),
            ("TCPI_OPT_SYN_DATA", 32),
        ] {
            py.set(name, Value::Int(v));
        }
        let snaps = std::mem::take(&mut self.snapshots);
        for snap in &snaps {
            for (name, v) in tcpi_values(&snap.info, snap.state) {
                py.set(name, Value::Int(v));
            }
            py.set("tcpi_advmss", Value::Int(snap.advmss as i128));
            py.set("tcpi_notsent_bytes", Value::Int(snap.notsent_bytes as i128));
            let program = match self.plan.programs.get(snap.event).and_then(|p| p.as_ref()) {
                Some(Ok(p)) => p,
                Some(Err(e)) => return fail(snap.line, format!("error in Python code\n{e}")),
                None => continue,
            };
            let r = py.run(program);
            self.output.append(&mut py.output);
            match r {
                Ok(()) => {}
                Err(e @ PyError::Exception { .. }) => return fail(snap.line, format!("error in Python code\n{e}")),
                Err(PyError::Unsupported(m)) => {
                    return Err(Stop::Skip(format!("line {}: unsupported Python construct: {m}", snap.line)))
                }
            }
        }
        Ok(())
    }
}

/// The `tcpi_*` assignments packetdrill writes for a snapshot.
fn tcpi_values(i: &TcpInfo, state: TcpState) -> Vec<(&'static str, i128)> {
    let st = match state {
        TcpState::Established => 1,
        TcpState::SynSent => 2,
        TcpState::SynReceived => 3,
        TcpState::FinWait1 => 4,
        TcpState::FinWait2 => 5,
        TcpState::TimeWait => 6,
        TcpState::Closed => 7,
        TcpState::CloseWait => 8,
        TcpState::LastAck => 9,
        TcpState::Listen => 10,
        TcpState::Closing => 11,
    };
    vec![
        ("tcpi_state", st),
        ("tcpi_ca_state", i.ca_state as i128),
        ("tcpi_backoff", i.backoff as i128),
        ("tcpi_rto", i.rto_us as i128),
        ("tcpi_snd_mss", i.snd_mss as i128),
        ("tcpi_rcv_mss", i.rcv_mss as i128),
        ("tcpi_unacked", i.unacked as i128),
        ("tcpi_sacked", i.sacked as i128),
        ("tcpi_lost", i.lost as i128),
        ("tcpi_retrans", i.retrans as i128),
        ("tcpi_rtt", i.rtt_us as i128),
        ("tcpi_rttvar", i.rttvar_us as i128),
        ("tcpi_snd_ssthresh", i.snd_ssthresh as i128),
        ("tcpi_snd_cwnd", i.snd_cwnd as i128),
        ("tcpi_reordering", i.reordering as i128),
        ("tcpi_total_retrans", i.total_retrans as i128),
        ("tcpi_pacing_rate", i.pacing_rate as i128),
        ("tcpi_min_rtt", i.min_rtt_us as i128),
        ("tcpi_data_segs_out", i.data_segs_out as i128),
        ("tcpi_delivered", i.delivered as i128),
        ("tcpi_delivered_ce", i.delivered_ce as i128),
        ("tcpi_bytes_acked", i.bytes_acked as i128),
        ("tcpi_bytes_received", i.bytes_received as i128),
        ("tcpi_reord_seen", i.reord_seen as i128),
        ("tcpi_snd_wnd", i.snd_wnd as i128),
        ("tcpi_rcv_wnd", i.rcv_wnd as i128),
        ("tcpi_busy_time", i.busy_time_us as i128),
        ("tcpi_rwnd_limited", i.rwnd_limited_us as i128),
        ("tcpi_sndbuf_limited", i.sndbuf_limited_us as i128),
        ("tcpi_last_data_recv", i.last_data_recv_ms as i128),
        ("tcpi_probes", i.probes as i128),
    ]
}
