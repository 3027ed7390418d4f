//! What each kernel series can do: one table that the build, the
//! translation and the guest agent read, instead of version conditions
//! scattered through them.
//!
//! The lab builds two kinds of kernels. **Mainline** (Debian's 6.12, or a
//! user's tree from 5.4 on, when UML gained `time-travel=inf-cpu` in
//! `arch/um/kernel/time.c`) builds as it is, with tcplab's switches from
//! `kernel/patches`. The **era** kernels of the seeds (3.12, 3.18, 4.17,
//! `../shared/kernels`) need fixes to build with today's compiler and C
//! library, and lack UML's virtual time: their `kernel/era/<series>/base`
//! patches (GPL-2.0) carry both, and `kernel/era/<series>/switches` the
//! seed switches written against that tree. A tree of any other version
//! is refused by name: nobody has checked that it builds or keeps time.

use crate::error::{KernelError, Result};

/// How an image's clock is made virtual (`time-travel=inf-cpu` on the
/// guest's command line in both cases).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VirtualTime {
    /// The tree's own `CONFIG_UML_TIME_TRAVEL_SUPPORT` (5.4 and later).
    Native,
    /// tcplab's backport in `kernel/era/<series>/base` (the clocksource
    /// returns a virtual clock, the clockevent records its deadline, the
    /// idle loop jumps to it: see kernel/era/README.md).
    Backport,
}

/// One kernel series and what it can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Series {
    /// `3.18`, or `mainline` for every tree from 5.4 on.
    pub name: &'static str,
    /// The `(VERSION, PATCHLEVEL)` range of the top-level Makefile.
    pub from: (u32, u32),
    pub to: (u32, u32),
    /// Patches under `kernel/` applied to every build of the series
    /// (build fixes, virtual time), before the switches; `None` for none.
    pub base_patches: Option<&'static str>,
    /// The series' own switch patches under `kernel/` (`--patches`
    /// replaces them).
    pub switch_patches: &'static str,
    /// Where UML's `config HZ` (`default 100`) is.
    pub hz_file: &'static str,
    /// Extra `make` arguments: 3.x's `defconfig` picks i386 on an x86-64
    /// host unless told `SUBARCH=x86_64`.
    pub make_args: &'static [&'static str],
    pub virtual_time: VirtualTime,
    /// Options of [`crate::build::CONFIG_OPTIONS`] the series does not
    /// have (merged later: `NET_CLS_MATCHALL` 4.8, `TCP_CONG_BBR` 4.9,
    /// `TCP_CONG_DCTCP` 3.18, `NET_SCH_FQ` 3.12, time travel 5.4).
    pub lacks_config: &'static [&'static str],
    /// Options `defconfig` turns on that the build turns off: UML's
    /// sound drivers, whose sources the trimmed era tarballs of
    /// ../shared/kernels leave out (with `CONFIG_MODULES` off they would
    /// be built in).
    pub disable_config: &'static [&'static str],
    /// Whether the switch patches' defaults are the era's own behaviour,
    /// so that the translation must set every switch it knows explicitly
    /// (mainline's switches default to mainline, where leaving a switch
    /// out means the knob's `linux-current` value).
    pub switch_defaults_are_era: bool,
    /// `sizeof(struct tcp_info)` in the series' `include/uapi/linux/tcp.h`
    /// (3.12: 104, up to `tcpi_total_retrans`; 3.18: 120, with the
    /// pacing rates of 3.15; 4.17: 192, up to `tcpi_sndbuf_limited`;
    /// mainline: larger), the bytes
    /// `getsockopt(TCP_INFO)` returns; the agent reads no field past it.
    pub tcp_info_len: usize,
    /// Congestion controls built in (`tcp_allowed_congestion_control`).
    pub congestion_controls: &'static [&'static str],
    /// `tc filter ... matchall` (4.8): without it the translation uses
    /// `u32 match u32 0 0`, which matches every packet too.
    pub matchall: bool,
    /// The model's preset of the era: what the kernel does where it has
    /// no switch. A scenario knob that differs from it (a model-only
    /// mechanism, or a switch the image lacks) is refused on this series.
    pub preset: &'static str,
    /// Which `net.ipv4` sysctls are per network namespace: `None` all of
    /// them (4.15 moved TCP's into `struct netns_ipv4`), `Some(list)`
    /// only those (3.x: `tcp_ecn`; the others are global variables, one
    /// value for the whole guest).
    pub netns_sysctls: Option<&'static [&'static str]>,
    /// Sysctls the series does not have (`net/ipv4/sysctl_net_ipv4.c`):
    /// a scenario that sets one to anything but the era's value is
    /// refused.
    pub lacks_sysctls: &'static [&'static str],
    /// Module parameters the series does not have (3.x and 4.17 name
    /// HyStart's ACK spacing `hystart_ack_delta`, in ms; 3.12 has no DCTCP).
    pub lacks_params: &'static [&'static str],
    /// sch_fq's pacing when TCP has no switch for it: `Some("credit")` for
    /// 3.12-4.19 (from `sk_pacing_rate` at dequeue; EDT came in 4.20).
    pub fq_pacing: Option<&'static str>,
    /// sch_fq options the series' fq lacks (`low_rate_threshold` 4.9,
    /// `ce_threshold` 5.x): left out when the scenario keeps the model's
    /// default, refused otherwise.
    pub fq_lacks: &'static [&'static str],
    /// Named knob values whose switch means something else in this
    /// series' tree, replacing the registry's list for that knob: 3.12's
    /// `forward_progress_growth=0` is v3.11 in both of seed 000's hunks,
    /// so it is `cwnd_growth = "v3.11"` there, not 6.12's `"data-acked"`.
    pub switch_names: &'static [(&'static str, &'static [(&'static str, &'static str)])],
    /// Environment for the guest's init (and so every program in it).
    /// 3.x UML saves a process's FP state with `PTRACE_GETFPREGS`
    /// (arch/x86/um/os-Linux/registers.c: the FXSAVE area, x87 and XMM
    /// only) and switches the threads of one guest process inside one host
    /// process by rewriting their registers, so AVX and AVX-512 state
    /// (YMM/ZMM upper halves, opmask registers) leaks between threads:
    /// glibc's AVX2/EVEX string functions then fault (the agent died with
    /// "segfault at 0 ... in libc.so.6" on 3.12 and 3.18). glibc is told
    /// not to use them. 4.17 saves XSTATE (`PTRACE_GETREGSET`).
    pub guest_env: &'static [(&'static str, &'static str)],
    /// Where the guest's wall clock starts, ns since the epoch, before the
    /// scenario's seed is added (in seconds): `time-travel-start=` of
    /// tcplab's backport (as in 5.4). The host's time at boot was the only
    /// input from outside an era guest, so with it fixed a run repeats, and
    /// the seed still gives each run its own kernel randomness (netem's
    /// jitter, ISNs). `None`: the host's time (mainline).
    pub clock_start: Option<u64>,
}

const ERA_MAKE: &[&str] = &["SUBARCH=x86_64"];
const ERA_DISABLE: &[&str] = &["UML_SOUND", "SOUND", "HOSTAUDIO"];
/// 2023-11-14 22:13:20 UTC.
const ERA_CLOCK_START: Option<u64> = Some(1_700_000_000_000_000_000);
const NO_AVX: &[(&str, &str)] = &[(
    "GLIBC_TUNABLES",
    "glibc.cpu.hwcaps=-AVX,-AVX2,-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-AVX_Fast_Unaligned_Load",
)];
const SWITCH_NAMES_3X: &[(&str, &[(&str, &str)])] = &[("cwnd_growth", &[("v3.12", "1"), ("v3.11", "0")])];

/// Every series the lab builds. Mainline last: it matches from 5.4 on.
pub const SERIES: &[Series] = &[
    Series {
        name: "3.12",
        from: (3, 12),
        to: (3, 12),
        base_patches: Some("era/3.12/base"),
        switch_patches: "era/3.12/switches",
        hz_file: "arch/um/Kconfig.common",
        make_args: ERA_MAKE,
        virtual_time: VirtualTime::Backport,
        lacks_config: &["UML_TIME_TRAVEL_SUPPORT", "NET_CLS_MATCHALL", "TCP_CONG_DCTCP", "TCP_CONG_BBR"],
        disable_config: ERA_DISABLE,
        switch_defaults_are_era: true,
        tcp_info_len: 104,
        congestion_controls: &["reno", "cubic"],
        matchall: false,
        preset: "v3.12",
        netns_sysctls: Some(&["net.ipv4.tcp_ecn"]),
        lacks_sysctls: &[
            "net.ipv4.tcp_max_reordering",
            "net.ipv4.tcp_min_rtt_wlen",
            "net.ipv4.tcp_no_ssthresh_metrics_save",
            "net.ipv4.tcp_pacing_ca_ratio",
            "net.ipv4.tcp_pacing_ss_ratio",
            "net.ipv4.tcp_recovery",
            "net.ipv4.tcp_rto_min_us",
            "net.ipv4.tcp_tso_rtt_log",
        ],
        lacks_params: &[
            "tcp_cubic.hystart_ack_delta_us",
            "tcp_dctcp.dctcp_shift_g",
            "tcp_dctcp.dctcp_alpha_on_init",
            "tcp_dctcp.dctcp_clamp_alpha_on_loss",
        ],
        fq_pacing: Some("credit"),
        fq_lacks: &["low_rate_threshold", "ce_threshold"],
        switch_names: SWITCH_NAMES_3X,
        guest_env: NO_AVX,
        clock_start: ERA_CLOCK_START,
    },
    Series {
        name: "3.18",
        from: (3, 18),
        to: (3, 18),
        base_patches: Some("era/3.18/base"),
        switch_patches: "era/3.18/switches",
        hz_file: "arch/um/Kconfig.common",
        make_args: ERA_MAKE,
        virtual_time: VirtualTime::Backport,
        lacks_config: &["UML_TIME_TRAVEL_SUPPORT", "NET_CLS_MATCHALL", "TCP_CONG_BBR"],
        disable_config: ERA_DISABLE,
        switch_defaults_are_era: true,
        tcp_info_len: 120,
        congestion_controls: &["reno", "cubic", "dctcp"],
        matchall: false,
        preset: "v3.18",
        netns_sysctls: Some(&["net.ipv4.tcp_ecn"]),
        lacks_sysctls: &[
            "net.ipv4.tcp_max_reordering",
            "net.ipv4.tcp_min_rtt_wlen",
            "net.ipv4.tcp_no_ssthresh_metrics_save",
            "net.ipv4.tcp_pacing_ca_ratio",
            "net.ipv4.tcp_pacing_ss_ratio",
            "net.ipv4.tcp_recovery",
            "net.ipv4.tcp_rto_min_us",
            "net.ipv4.tcp_tso_rtt_log",
        ],
        lacks_params: &["tcp_cubic.hystart_ack_delta_us"],
        fq_pacing: Some("credit"),
        fq_lacks: &["low_rate_threshold", "ce_threshold"],
        switch_names: SWITCH_NAMES_3X,
        guest_env: NO_AVX,
        clock_start: ERA_CLOCK_START,
    },
    Series {
        name: "4.17",
        from: (4, 17),
        to: (4, 17),
        base_patches: Some("era/4.17/base"),
        switch_patches: "era/4.17/switches",
        hz_file: "arch/um/Kconfig.common",
        make_args: ERA_MAKE,
        virtual_time: VirtualTime::Backport,
        lacks_config: &["UML_TIME_TRAVEL_SUPPORT"],
        disable_config: ERA_DISABLE,
        switch_defaults_are_era: true,
        tcp_info_len: 192,
        congestion_controls: &["reno", "cubic", "dctcp", "bbr"],
        matchall: true,
        preset: "v4.17",
        netns_sysctls: None,
        lacks_sysctls: &[
            "net.ipv4.tcp_no_ssthresh_metrics_save",
            "net.ipv4.tcp_rto_min_us",
            "net.ipv4.tcp_tso_rtt_log",
        ],
        lacks_params: &["tcp_cubic.hystart_ack_delta_us"],
        fq_pacing: Some("credit"),
        fq_lacks: &["ce_threshold"],
        switch_names: &[],
        guest_env: &[],
        clock_start: ERA_CLOCK_START,
    },
    Series {
        name: "mainline",
        from: (5, 4),
        to: (u32::MAX, u32::MAX),
        base_patches: None,
        switch_patches: "patches",
        hz_file: "arch/um/Kconfig",
        make_args: &[],
        virtual_time: VirtualTime::Native,
        lacks_config: &[],
        disable_config: &[],
        switch_defaults_are_era: false,
        tcp_info_len: usize::MAX,
        congestion_controls: &["reno", "cubic", "dctcp", "bbr"],
        matchall: true,
        preset: "linux-current",
        netns_sysctls: None,
        lacks_sysctls: &[],
        lacks_params: &[],
        fq_pacing: None,
        fq_lacks: &[],
        switch_names: &[],
        guest_env: &[],
        clock_start: None,
    },
];

impl Series {
    /// The series of Linux `version.patchlevel`.
    pub fn for_version(version: u32, patchlevel: u32) -> Result<&'static Series> {
        let v = (version, patchlevel);
        SERIES.iter().find(|s| s.from <= v && v <= s.to).ok_or_else(|| {
            let known: Vec<&str> = SERIES.iter().filter(|s| s.from == s.to).map(|s| s.name).collect();
            KernelError::new(format!(
                "Linux {version}.{patchlevel} is not a series the lab builds: {} (the seeds' eras, ../shared/kernels) \
                 or 5.4 and later (UML's own time travel)",
                known.join(", ")
            ))
        })
    }

    /// The series of a release string (`3.18.140`, `6.12.117`).
    pub fn for_release(release: &str) -> Result<&'static Series> {
        let mut it = release.split(|c: char| !c.is_ascii_digit());
        let num = |s: Option<&str>| s.and_then(|s| s.parse::<u32>().ok());
        match (num(it.next()), num(it.next())) {
            (Some(v), Some(p)) => Series::for_version(v, p),
            _ => Err(KernelError::new(format!("kernel release {release:?}: no VERSION.PATCHLEVEL in it"))),
        }
    }

    /// An era kernel (its own patches, backported virtual time).
    pub fn is_era(&self) -> bool {
        self.base_patches.is_some()
    }

    /// Whether the series builds `CONFIG_<option>`.
    pub fn has_config(&self, option: &str) -> bool {
        !self.lacks_config.contains(&option)
    }

    /// `Linux 3.18`, for messages (mainline: `this kernel`).
    pub fn title(&self) -> String {
        if self.is_era() {
            format!("Linux {}", self.name)
        } else {
            "Linux 6.12".to_string()
        }
    }

    /// Whether sysctl `key` is per network namespace in this series.
    pub fn sysctl_per_netns(&self, key: &str) -> bool {
        self.netns_sysctls.map_or(true, |l| l.contains(&key))
    }

    /// The series' own names for knob `name`'s switch values, if any.
    pub fn switch_names(&self, name: &str) -> Option<&'static [(&'static str, &'static str)]> {
        self.switch_names.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    /// The mainline entry.
    pub fn mainline() -> &'static Series {
        SERIES.last().expect("the table ends with mainline")
    }

    /// Whether the series has congestion control `cc`.
    pub fn has_cc(&self, cc: &str) -> bool {
        self.congestion_controls.contains(&cc)
    }
}

/// `VERSION`, `PATCHLEVEL` and `SUBLEVEL` from a kernel tree's top-level
/// Makefile text.
pub fn makefile_version(text: &str) -> Option<(u32, u32, u32)> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == name).then(|| v.trim().parse::<u32>().ok()).flatten()
        })
    };
    Some((field("VERSION")?, field("PATCHLEVEL")?, field("SUBLEVEL").unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_find_their_series() {
        assert_eq!(Series::for_version(3, 12).unwrap().name, "3.12");
        assert_eq!(Series::for_version(3, 18).unwrap().name, "3.18");
        assert_eq!(Series::for_version(4, 17).unwrap().name, "4.17");
        assert_eq!(Series::for_version(6, 12).unwrap().name, "mainline");
        assert_eq!(Series::for_version(5, 4).unwrap().name, "mainline");
        let e = Series::for_version(4, 9).unwrap_err();
        assert!(e.message.contains("4.9") && e.message.contains("3.12, 3.18, 4.17"), "{e}");
        assert_eq!(Series::for_release("3.18.140").unwrap().name, "3.18");
        assert_eq!(Series::for_release("6.12.117").unwrap().name, "mainline");
        assert!(Series::for_release("x").is_err());
    }

    #[test]
    fn makefile_versions_parse() {
        let mk = "VERSION = 3\nPATCHLEVEL = 18\nSUBLEVEL = 140\nEXTRAVERSION =\nNAME = Diseased Newt\n";
        assert_eq!(makefile_version(mk), Some((3, 18, 140)));
        assert_eq!(makefile_version("NAME = x\n"), None);
    }

    #[test]
    fn eras_lack_what_came_later() {
        let s = |n| SERIES.iter().find(|s| s.name == n).unwrap();
        assert!(!s("3.12").has_config("TCP_CONG_DCTCP") && s("3.18").has_config("TCP_CONG_DCTCP"));
        assert!(!s("3.18").has_config("TCP_CONG_BBR") && s("4.17").has_config("TCP_CONG_BBR"));
        for n in ["3.12", "3.18", "4.17"] {
            assert!(!s(n).has_config("UML_TIME_TRAVEL_SUPPORT"), "{n}");
            assert!(s(n).has_config("TUN") && s(n).has_config("NET_SCH_FQ"), "{n}");
        }
        // Every lacking option is one the build asks for.
        for ser in SERIES {
            for o in ser.lacks_config {
                assert!(crate::build::CONFIG_OPTIONS.contains(o), "{}: {o}", ser.name);
            }
        }
    }
}
