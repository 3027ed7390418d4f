//! The receiver's half of ECN (RFC 3168 §6.1.3): having seen a CE mark,
//! echo ECE on every ACK until the sender answers with CWR
//! (tcp_input.c `__tcp_ecn_check_ce`, `tcp_ecn_accept_cwr`; the flags
//! `TCP_ECN_OK`, `TCP_ECN_DEMAND_CWR`, `TCP_ECN_SEEN` of `tp->ecn_flags`).
//! DCTCP replaces the echo rule with its own (it sets `demand_cwr` per
//! segment through the congestion control).

use tcplab_wire::Ecn;

/// The receive-side bits of `tp->ecn_flags` (`TCP_ECN_OK` is the
/// connection's `Negotiated::ecn_ok`, passed in where it is tested).
#[derive(Clone, Debug, Default)]
pub(super) struct EcnEcho {
    /// `TCP_ECN_DEMAND_CWR`: echo ECE until the peer's CWR.
    pub(super) demand_cwr: bool,
    /// `TCP_ECN_SEEN`: an ECT or CE segment arrived.
    seen: bool,
}

impl EcnEcho {
    /// `tcp_ecn_accept_cwr`: the sender reduced its window, stop echoing
    /// ECE. Returns whether the segment carried CWR.
    pub(super) fn accept_cwr(&mut self, cwr: bool) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_ecn_accept_cwr
        if cwr {
            self.demand_cwr = false;
        }
        cwr
    }

    /// `__tcp_ecn_check_ce` for a data segment's codepoint: a CE mark asks
    /// for ECE until CWR — unless the congestion control owns the echo
    /// (`ca_needs_ecn`, DCTCP) — and a not-ECT segment after ECT ones "is
    /// probably a retransmit". `ce` collects the congestion-control event
    /// (`Some(true)` = `CA_EVENT_ECN_IS_CE`, `Some(false)` =
    /// `CA_EVENT_ECN_NO_CE`). Returns whether to enter quick-ACK mode
    /// ("Better not delay acks, sender can have a very low cwnd").
    pub(super) fn check_ce(&mut self, ecn: Ecn, ca_needs_ecn: bool, ce: &mut Option<bool>) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#__tcp_ecn_check_ce
        match ecn {
            Ecn::NotEct => self.seen,
            Ecn::Ce => {
                *ce = Some(true);
                let quickack = !ca_needs_ecn && !self.demand_cwr;
                if quickack {
                    self.demand_cwr = true;
                }
                self.seen = true;
                quickack
            }
            Ecn::Ect0 | Ecn::Ect1 => {
                if ce.is_none() {
                    *ce = Some(false);
                }
                self.seen = true;
                false
            }
        }
    }

    /// Our ACKs carry ECE (`tcp_ecn_send`'s `TCP_ECN_DEMAND_CWR` test),
    /// when ECN was negotiated (`ecn_ok`).
    pub(super) fn ece(&self, ecn_ok: bool) -> bool {
        ecn_ok && self.demand_cwr
    }
}
