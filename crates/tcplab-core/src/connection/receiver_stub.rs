//! Temporary stand-in for receiver.rs while it is being written.
#![allow(dead_code)]
use crate::config::TcpConfig;
use crate::counters::Counters;
use crate::time::{Duration, Instant};
use tcplab_wire::{SegmentRepr, SeqNum, TcpOptions};

pub(crate) struct RcvEnv {
    pub srtt_us: u32,
    pub rto: Duration,
    pub ecn_ok: bool,
}
#[derive(Default)]
pub(crate) struct RcvOutcome {
    pub ack_now: bool,
    pub fin: bool,
    pub ce: Option<bool>,
}
pub(crate) struct Receiver {
    rcv_nxt: SeqNum,
    readable: u64,
    ts_recent: u32,
    fin: bool,
}
impl Receiver {
    pub fn new(_cfg: &TcpConfig) -> Self {
        Receiver { rcv_nxt: SeqNum(0), readable: 0, ts_recent: 0, fin: false }
    }
    pub fn on_syn(&mut self, irs: SeqNum, o: &TcpOptions, _ts: bool) {
        self.rcv_nxt = irs + 1;
        self.ts_recent = o.timestamp.map(|t| t.0).unwrap_or(0);
    }
    pub fn syn_window(&self) -> u16 {
        65535
    }
    pub fn offered_wscale(&self) -> Option<u8> {
        Some(7)
    }
    pub fn acceptable(&self, _seg: &SegmentRepr) -> bool {
        true
    }
    pub fn on_segment(&mut self, _now: Instant, seg: &SegmentRepr, _env: &RcvEnv, _mib: &mut Counters) -> RcvOutcome {
        let mut out = RcvOutcome::default();
        if seg.seq == self.rcv_nxt && seg.seq_len() > 0 {
            self.rcv_nxt += seg.seq_len();
            self.readable += seg.payload_len as u64;
            out.ack_now = true;
            out.fin = seg.flags.fin();
            self.fin |= out.fin;
        } else if seg.seq_len() > 0 {
            out.ack_now = true;
        }
        if let Some((v, _)) = seg.options.timestamp {
            self.ts_recent = v;
        }
        out
    }
    pub fn delack_deadline(&self) -> Option<Instant> {
        None
    }
    pub fn on_delack_timer(&mut self, _now: Instant, _mib: &mut Counters) -> bool {
        false
    }
    pub fn fill_ack(&mut self, seg: &mut SegmentRepr, ts_val: Option<u32>) {
        seg.ack = self.rcv_nxt;
        seg.window = 65535;
        if let Some(v) = ts_val {
            seg.options.timestamp = Some((v, self.ts_recent));
        }
    }
    pub fn on_ack_sent(&mut self, _now: Instant, _pcount: u32) {}
    pub fn on_data_sent(&mut self, _now: Instant) {}
    pub fn readable(&self) -> u64 {
        self.readable
    }
    pub fn read(&mut self, max: u64) -> u64 {
        let n = max.min(self.readable);
        self.readable -= n;
        n
    }
    pub fn window_update_due(&self) -> bool {
        false
    }
    pub fn rcv_nxt(&self) -> SeqNum {
        self.rcv_nxt
    }
    pub fn fin_received(&self) -> bool {
        self.fin
    }
    pub fn bytes_received(&self) -> u64 {
        0
    }
    pub fn ts_recent(&self) -> u32 {
        self.ts_recent
    }
    pub fn rcv_mss(&self) -> u32 {
        536
    }
    pub fn rcv_wnd(&self) -> u32 {
        65535
    }
}
