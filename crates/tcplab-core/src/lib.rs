//! tcplab-core: a sans-IO model of the Linux TCP sender and receiver.
//!
//! No clock, no sockets, no threads, no randomness: every entry point takes
//! `now`, and the same inputs always give the same outputs. The simulator,
//! the packetdrill driver and unit tests drive the same [`Connection`].
//!
//! Module map (each names the kernel code it follows):
//! - [`connection`]: the per-socket state machine (tcp_input.c, tcp_output.c,
//!   tcp_timer.c, tcp_recovery.c): ACK processing, the ca_state machine,
//!   RACK-TLP, the skb send path, the receive half.
//! - [`cc`]: congestion control behind a `tcp_congestion_ops`-shaped trait
//!   (tcp_cong.c, tcp_cubic.c with HyStart, tcp_dctcp.c; RFC 9406 HyStart++).
//! - [`rtt`]: `tcp_rtt_estimator` and the RTO; [`minmax`]: win_minmax.c.
//! - [`prr`]: `tcp_cwnd_reduction` (RFC 6937).
//! - [`config`]: sysctls, module parameters and kernel-era presets;
//!   [`names`]: the names of their era and rule enums (`as_str`, `FromStr`);
//!   [`knobs`]: the registry of every knob (name, values, the Linux
//!   setting it models, where it applies) that scenarios, packetdrill and
//!   the kernel backend read.
//! - [`counters`]: MIB counters under their nstat names.
//! - [`flag`]: tcp_input.c's `FLAG_*` bits; [`metrics`]: tcp_metrics.c's
//!   per-destination cache; [`time`]: virtual time, jiffies;
//!   [`timer_wheel`]: on which tick a `timer_list` runs (kernel/time/timer.c).

pub mod cc;
pub mod config;
pub mod connection;
pub mod counters;
pub mod flag;
pub mod knobs;
pub mod metrics;
pub mod minmax;
pub mod names;
pub mod prr;
pub mod rate;
pub mod rtt;
pub mod time;
pub mod timer_wheel;

pub use cc::{CaState, CongestionOps};
pub use config::TcpConfig;
pub use connection::{Connection, TcpError, TcpInfo, TcpState};
pub use counters::{Counters, Mib};
pub use metrics::TcpMetrics;
pub use tcplab_wire as wire;
pub use time::{Duration, Instant};
