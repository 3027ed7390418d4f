//! Wire-level types of TCP: sequence numbers and segment representations.
//!
//! Kept apart from the protocol logic (as smoltcp keeps `wire::tcp` apart
//! from `socket::tcp`), so that the TCP core, the simulator, the packetdrill
//! driver and the pcap writer share one segment type. Payload bytes are
//! virtual: a segment carries only its payload length.
//!
//! Nothing in this crate panics on any input.

pub mod packet;
mod segment;
mod seq;

pub use packet::{EmitError, PacketRepr, ParseError, Parsed};
pub use segment::{Ecn, SackBlock, SegmentRepr, TcpFlags, TcpOptions, MAX_SACK_BLOCKS};
pub use seq::SeqNum;
