/* SPDX-License-Identifier: GPL-2.0 */
/*
 * defer.h - when may a PTE clear be queued instead of done at once?
 *
 * Header-only so that the KUnit suite (module/tests/) tests the very code
 * the module runs.  Xen PV queues set_pte() updates in lazy MMU mode into
 * one multicall, issued in order when the mode ends, before the TLB flush
 * and before any page is freed.  A queued clear lands later than a native
 * xchg would, and until then the CPU may still set the Accessed and Dirty
 * bits in the live entry: a lost A bit only ages a page, a lost D bit
 * loses data.  So a clear may be queued only when the hardware cannot set
 * a D bit that anybody needs:
 *  - the entry is not present (swap, migration or marker entry): the CPU
 *    does not walk it, and it replaced a present entry with a TLB flush;
 *  - it is not writable and no TLB flush is pending for its mm
 *    (mm_tlb_flush_pending()): a CPU sets D only through a writable
 *    translation, and a read-only entry has none left in any TLB once the
 *    write-protect that made it read-only has flushed.  While that flush
 *    is pending, a write through a stale writable TLB entry can still set
 *    D in the live entry (some CPUs do, without re-checking R/W), after
 *    our read and before the queued clear lands;
 *  - it is already dirty: D is in the value we return;
 *  - it is pte_special(): no struct page whose dirtiness the caller uses
 *    (mremap's move_ptes() re-installs the value we return, so a special
 *    entry can arrive at its new address without a D bit the CPU set in
 *    the window: harmless, nothing reads it).
 * A writable, clean entry is never deferred.
 *
 * mm_tlb_flush_pending() counts every mmu_gather of the mm, the caller's
 * own too (tlb_gather_mmu() raises it for every zap), so a read-only
 * clean entry is queued only outside an mmu_gather with nothing pending:
 * mremap, vunmap, rmap's ptep_clear_flush().  mm_tlb_flush_nested(),
 * which discounts one gather, would queue them in zaps too, but would
 * also discount another thread's pending write-protect when the caller
 * holds no gather (ptep_clear_flush() under a uffd write-protect).  The
 * pv-op cannot tell the two apart, so it takes the strict reading.
 *
 * The tests look at flag bits only (pte_flags() masks the raw value), so
 * they are exact on the machine (MFN) values that Xen PV page tables hold.
 */
#ifndef XEN_PTSWAP_DEFER_H
#define XEN_PTSWAP_DEFER_H

#include <linux/pgtable.h>

/**
 * enum xps_clear - what xps_ptep_get_and_clear() does with an entry
 * @XPS_CLEAR_NONE: the entry is already none: nothing to write
 * @XPS_CLEAR_DEFER: queue set_pte(ptep, 0) and return the value read
 * @XPS_CLEAR_SWAP: flush the queue, one synchronous MMU_PT_UPDATE_SWAP
 */
enum xps_clear {
	XPS_CLEAR_NONE,
	XPS_CLEAR_DEFER,
	XPS_CLEAR_SWAP,
};

/**
 * xps_can_defer() - may the clear of this entry be queued?
 * @pte: the entry as read from the page table (raw machine value)
 * @flush_pending: mm_tlb_flush_pending() of the entry's mm, read after
 *	the entry under its page table lock (that lock orders the two, as
 *	mm_tlb_flush_pending() documents)
 *
 * Return: true if the entry is not present, dirty or special, or is not
 * writable while no TLB flush is pending, so that nothing the caller
 * needs can change in it between the read and the queued clear; false
 * for a present, clean, non-special entry that is writable, or read-only
 * with a flush pending.
 */
static inline bool xps_can_defer(pte_t pte, bool flush_pending)
{
	if (!pte_present(pte) || pte_dirty(pte) || pte_special(pte))
		return true;
	return !pte_write(pte) && !flush_pending;
}

/**
 * xps_classify() - choose how to clear an entry
 * @pte: the entry as read from the page table (raw machine value)
 * @sync: true in mode "sync": never defer
 * @flush_pending: as for xps_can_defer()
 *
 * Return: %XPS_CLEAR_NONE for a none entry (in both modes),
 * %XPS_CLEAR_DEFER if !@sync and xps_can_defer(), else %XPS_CLEAR_SWAP.
 */
static inline enum xps_clear xps_classify(pte_t pte, bool sync,
					  bool flush_pending)
{
	if (pte_none(pte))
		return XPS_CLEAR_NONE;
	if (!sync && xps_can_defer(pte, flush_pending))
		return XPS_CLEAR_DEFER;
	return XPS_CLEAR_SWAP;
}

#endif /* XEN_PTSWAP_DEFER_H */
