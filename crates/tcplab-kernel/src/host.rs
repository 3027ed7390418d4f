//! Facts about the machine the guest runs on that the kernel image must
//! be built for.
//!
//! User-Mode Linux saves a guest process's FP state with
//! `PTRACE_GETREGSET/SETREGSET(NT_X86_XSTATE)`, and the host kernel accepts
//! a SETREGSET only with a buffer of exactly its own XSAVE size
//! (`arch/x86/kernel/fpu/regset.c`, `xstateregs_set`). UML 6.12 fixes that
//! size at 2,696 bytes (`arch/x86/um/user-offsets.c`, `HOST_FP_SIZE`), so on
//! other hosts the first user process dies with "ptrace set fp regs
//! failed". The size is a property of the CPU and the host kernel, read
//! here with CPUID, and part of every image's cache key.

/// The host's XSAVE area size in bytes for the features the OS enabled
/// (CPUID leaf 0xD, sub-leaf 0, EBX), or `None` off x86-64.
pub fn xsave_size() -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        // Leaf 0xD is valid whenever XSAVE is (leaf 1, ECX bit 26).
        let has_xsave = std::arch::x86_64::__cpuid(1).ecx & (1 << 26) != 0;
        if !has_xsave {
            return None;
        }
        let leaf = std::arch::x86_64::__cpuid_count(0xd, 0);
        Some(leaf.ebx)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Cores to build with and to run guests on.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn xsave_size_is_at_least_the_legacy_area() {
        // The legacy FXSAVE region plus the XSAVE header is 576 bytes;
        // any CPU with AVX has at least 832.
        let n = super::xsave_size().expect("x86-64 CI machines have XSAVE");
        assert!(n >= 576, "{n}");
    }
}
