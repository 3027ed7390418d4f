//! Packets in flight and their arena.
//!
//! A packet is a `Copy` struct (the TCP segment with its virtual payload
//! length plus routing metadata) living in a slab; queues and pipes move
//! 4-byte [`PacketId`]s. Freed slots are reused, so once the arena has grown
//! to the run's peak number of packets in flight, sending a packet allocates
//! nothing. There is no `Rc<RefCell<_>>`: whoever holds the id owns the
//! packet, and exactly one place (a queue, a serializer, a pipe or a pending
//! event) holds it at any time.

use crate::config::NodeId;
use tcplab_wire::SegmentRepr;

/// Index of a packet in the [`PacketArena`].
pub type PacketId = u32;

/// A packet in flight.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packet {
    pub seg: SegmentRepr,
    /// IP packet bytes (`seg.wire_len()`, computed once).
    pub wire_len: u32,
    /// The connection that sent it (`Sim::conns` index; for a raw packet,
    /// the connection it stands in for). Connections come in pairs, client
    /// at an even index, its server next, so the receiving socket is
    /// `conn ^ 1`: the 4-tuple lookup that Linux does on arrival
    /// (`__inet_lookup_established`) always finds that one, since every
    /// connection of a run has a distinct 4-tuple (`host.rs`).
    pub conn: u32,
    /// Injected by a test driver: delivered to the tap, not to TCP.
    pub raw: bool,
    /// Where the next link direction of the packet's route is in
    /// `Sim::routes` (its route continues there until it reaches a host).
    pub next: u32,
}

/// A slab of packets with a free list.
#[derive(Debug, Default)]
pub(crate) struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
}

impl PacketArena {
    pub fn with_capacity(n: usize) -> Self {
        PacketArena { slots: Vec::with_capacity(n), free: Vec::with_capacity(n) }
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = p;
                id
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets currently allocated.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// What happened to a packet, as reported to a packet tap
/// ([`Sim::set_packet_tap`](crate::Sim::set_packet_tap)).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PacketEventKind {
    /// A host's TCP stack handed the segment to its NIC (`node` = host).
    Send,
    /// Accepted into the output queue of `dir` (`node` = the queue's node);
    /// `seg.ecn` already shows a CE mark the queue applied.
    Enqueue,
    /// Dropped by the queue, policer or loss model of `dir`.
    Drop,
    /// Finished serialization on `dir` and entered the propagation delay.
    Depart,
    /// Reached the far end of `dir` (`node` = that node).
    Arrive,
    /// Handed to the destination host's TCP stack (`node` = host). With
    /// GRO, once per merged skb, with its merged payload (`gro.rs`); the
    /// segments merged into it were seen at `Arrive`.
    Deliver,
}

/// One observation of a packet, for optional observers such as a pcap
/// writer. Built only when a tap is installed.
#[derive(Clone, Copy, Debug)]
pub struct PacketEvent {
    pub kind: PacketEventKind,
    /// Where it happened.
    pub node: NodeId,
    /// Link direction index (`2·link` for a → b, `2·link + 1` for b → a).
    pub dir: Option<usize>,
    /// Index of the flow in [`SimConfig::flows`](crate::config::SimConfig::flows).
    pub flow: usize,
    /// Sent by the flow's client (the sender) rather than its server.
    pub from_client: bool,
    /// Source and destination hosts (the IP addresses, in effect).
    pub src: NodeId,
    pub dst: NodeId,
    pub seg: SegmentRepr,
    /// IP packet bytes.
    pub wire_len: u32,
}
