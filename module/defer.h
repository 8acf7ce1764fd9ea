/* SPDX-License-Identifier: GPL-2.0 */
/*
 * defer.h - when may a PTE clear be queued instead of done at once?
 *
 * Header-only so that the KUnit suite (module/tests/) tests the very code
 * the module runs.  Xen PV queues page table updates in lazy MMU mode into
 * one multicall, issued in order when the mode ends, before the TLB flush
 * and before any page is freed.  A queued clear lands later than a native
 * xchg would, and until then the CPU may still set the Accessed and Dirty
 * bits in the live entry: a lost A bit only ages a page, a lost D bit
 * loses data.  So a clear may be queued only when the hardware cannot set
 * a D bit that anybody needs:
 *  - the entry is not present (swap, migration or marker entry): a CPU
 *    sets D only in an entry whose P bit it sees;
 *  - it is already dirty: D is in the value we return;
 *  - it is pte_special(): no struct page whose dirtiness the caller uses
 *    (mremap's move_ptes() re-installs the value we return, so a special
 *    entry can arrive at its new address without a D bit the CPU set in
 *    the window: harmless, nothing reads it).
 * A present, clean entry that is not special is never deferred, writable
 * or not.  A writable one can gain D at any moment.  A read-only one can
 * too, through a writable TLB entry that a write-protect left stale until
 * its flush: some CPUs then set D without re-checking R/W.  No count says
 * when that window is open: mprotect, uffd-wp and NUMA hinting raise
 * mm_tlb_flush_pending() until their flush, but fork's
 * ptep_set_wrprotect() does not (it flushes once, after the whole copy),
 * while rmap's try_to_unmap_one() may clear the parent's entry and
 * discard a page it sees clean (a lazily freed one).  Zaps meet few such
 * entries: vmalloc's carry D, the workloads measured have none.
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
 * @XPS_CLEAR_DEFER: queue the clear (xps_queue_clear()) and return the
 *	value read
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
 *
 * Return: true if the entry is not present, dirty or special, so that
 * nothing the caller needs can change in it between the read and the
 * queued clear; false for a present, clean, non-special entry.
 */
static inline bool xps_can_defer(pte_t pte)
{
	return !pte_present(pte) || pte_dirty(pte) || pte_special(pte);
}

/**
 * xps_classify() - choose how to clear an entry
 * @pte: the entry as read from the page table (raw machine value)
 * @sync: true in mode "sync": never defer
 *
 * Return: %XPS_CLEAR_NONE for a none entry (in both modes),
 * %XPS_CLEAR_DEFER if !@sync and xps_can_defer(), else %XPS_CLEAR_SWAP.
 */
static inline enum xps_clear xps_classify(pte_t pte, bool sync)
{
	if (pte_none(pte))
		return XPS_CLEAR_NONE;
	if (!sync && xps_can_defer(pte))
		return XPS_CLEAR_DEFER;
	return XPS_CLEAR_SWAP;
}

#endif /* XEN_PTSWAP_DEFER_H */
