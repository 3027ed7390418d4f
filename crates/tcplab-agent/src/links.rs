//! Link statistics from the qdiscs named by the job's link probes:
//! transmitted bytes, packets and drops from each probe's root qdisc, drops and
//! RED marks from its queue qdisc, and the queue's peak length and its
//! time series from periodic samples.
//!
//! One `NETLINK_ROUTE` socket per namespace, opened once from a thread
//! inside it (a netlink socket stays in its creator's namespace); each
//! sample is one qdisc dump per namespace, whatever the number of probes.

use crate::job::{LinkOut, LinkProbe, QueueSampleOut};
use crate::netlink::{self, Qdisc, RouteSocket};
use crate::netns;
use crate::setup::handle_str;

/// The probes of one namespace.
struct NsProbes {
    ns: String,
    sock: RouteSocket,
    /// `(index into the job's probes, ifindex of the probe's device)`.
    probes: Vec<(usize, i32)>,
}

pub struct LinkProber {
    probes: Vec<LinkProbe>,
    namespaces: Vec<NsProbes>,
    /// Per probe, the largest queue length sampled.
    peaks: Vec<u64>,
    /// Per probe, every sample.
    samples: Vec<Vec<QueueSampleOut>>,
}

impl LinkProber {
    /// Resolves every probe's device and opens the sockets. Run after the
    /// set-up, before `t0`: a missing namespace or device is a set-up
    /// error.
    pub fn open(probes: &[LinkProbe]) -> Result<LinkProber, String> {
        let mut namespaces: Vec<NsProbes> = Vec::new();
        for (i, p) in probes.iter().enumerate() {
            let fail = |e: String| format!("link {}: {e}", p.id);
            if let Some(n) = namespaces.iter_mut().find(|n| n.ns == p.ns) {
                let ifindex = netns::run_in(Some(&p.ns), || netlink::ifindex(&p.dev)).map_err(fail)?;
                n.probes.push((i, ifindex));
            } else {
                let (ifindex, sock) =
                    netns::run_in(Some(&p.ns), || Ok((netlink::ifindex(&p.dev)?, RouteSocket::open()?)))
                        .map_err(fail)?;
                namespaces.push(NsProbes { ns: p.ns.clone(), sock, probes: vec![(i, ifindex)] });
            }
        }
        Ok(LinkProber {
            probes: probes.to_vec(),
            namespaces,
            peaks: vec![0; probes.len()],
            samples: vec![Vec::new(); probes.len()],
        })
    }

    /// Samples every queue at `t_ns` after `t0`, keeping the peaks and
    /// the series.
    pub fn sample(&mut self, t_ns: u64) -> Result<(), String> {
        let (probes, peaks, samples) = (&self.probes, &mut self.peaks, &mut self.samples);
        dump_each(&mut self.namespaces, |i, ifindex, qs| {
            if let Some(q) = find(qs, ifindex, probes[i].queue_handle) {
                peaks[i] = peaks[i].max(u64::from(q.qlen));
                samples[i].push(QueueSampleOut { t_ns, packets: q.qlen, bytes: q.backlog, drops: q.drops });
            }
        })
    }

    /// Every probe's statistics now (the peaks include this moment). A
    /// qdisc that cannot be found is an error; the other links are still
    /// returned.
    pub fn finish(&mut self) -> (Vec<LinkOut>, Vec<String>) {
        let mut out: Vec<LinkOut> =
            self.probes.iter().map(|p| LinkOut { id: p.id.clone(), ..LinkOut::default() }).collect();
        let mut errors = Vec::new();
        let (probes, peaks, samples) = (&self.probes, &self.peaks, &mut self.samples);
        let r = dump_each(&mut self.namespaces, |i, ifindex, qs| {
            let p = &probes[i];
            let o = &mut out[i];
            o.peak_queue_packets = peaks[i];
            o.queue_samples = std::mem::take(&mut samples[i]);
            match find(qs, ifindex, p.root_handle) {
                Some(q) => {
                    o.tx_bytes = q.bytes;
                    o.tx_packets = q.packets;
                    o.root_drops = u64::from(q.drops);
                }
                None => errors.push(missing(p, p.root_handle)),
            }
            match find(qs, ifindex, p.queue_handle) {
                Some(q) => {
                    o.drops = u64::from(q.drops);
                    o.ce_marks = q.red.map_or(0, |x| u64::from(x.marked));
                    o.peak_queue_packets = o.peak_queue_packets.max(u64::from(q.qlen));
                }
                None => errors.push(missing(p, p.queue_handle)),
            }
        });
        if let Err(e) = r {
            errors.push(format!("link statistics: {e}"));
        }
        (out, errors)
    }
}

/// Dumps each namespace's qdiscs and calls `f(probe index, ifindex,
/// qdiscs of the namespace)` for each probe.
fn dump_each(namespaces: &mut [NsProbes], mut f: impl FnMut(usize, i32, &[Qdisc])) -> Result<(), String> {
    for n in namespaces {
        let qs = n.sock.dump_qdiscs().map_err(|e| format!("namespace {}: {e}", n.ns))?;
        for &(i, ifindex) in &n.probes {
            f(i, ifindex, &qs);
        }
    }
    Ok(())
}

fn find(qs: &[Qdisc], ifindex: i32, handle: u32) -> Option<&Qdisc> {
    qs.iter().find(|q| q.ifindex == ifindex && q.handle == handle)
}

fn missing(p: &LinkProbe, handle: u32) -> String {
    format!("link {}: no qdisc {} on {} in namespace {}", p.id, handle_str(handle), p.dev, p.ns)
}
