/// Asks Linux to back the 2 MiB-aligned part of `values`' allocation (not yet written)
/// with huge pages: split search reads the rows of a node's samples in no order, one
/// page each, and with 4 KiB pages most of those reads also miss the address
/// translation cache. Only advice: where refused, or elsewhere, nothing changes.
pub(super) fn advise_huge_pages<S>(values: &Vec<S>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        const MADV_HUGEPAGE: std::ffi::c_int = 14;
        extern "C" {
            fn madvise(
                address: *mut std::ffi::c_void,
                length: usize,
                advice: std::ffi::c_int,
            ) -> std::ffi::c_int;
        }
        let start = values.as_ptr() as usize;
        let end = start + values.capacity() * std::mem::size_of::<S>();
        let (first, last) = (
            start.next_multiple_of(HUGE_PAGE),
            end / HUGE_PAGE * HUGE_PAGE,
        );
        if last > first {
            // SAFETY: advice on whole pages inside the allocation, which it does not
            // change; an error leaves the pages as they are.
            unsafe {
                madvise(first as *mut std::ffi::c_void, last - first, MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = values;
}
