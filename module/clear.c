// SPDX-License-Identifier: GPL-2.0
/*
 * clear.c - the batched ptep_get_and_clear() installed in
 * pv_ops.mmu.ptep_get_and_clear.
 *
 * On Xen PV a pinned page table is read-only to the guest: the native
 * xchg of ptep_get_and_clear() traps and Xen emulates it, once per PTE
 * that zap_pte_range() clears.  This version never traps on a pinned
 * page table: it either queues the clear into the lazy MMU multicall
 * (when defer.h allows it) or asks Xen to exchange the entry with one
 * MMU_PT_UPDATE_SWAP.
 *
 * Entries in Xen PV page tables hold machine frame numbers (MFNs), and
 * the native xchg returns that raw value.  So does this code: it builds
 * return values with native_make_pte(), never __pte(), which is a pv-op
 * that would translate a PFN into an MFN a second time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/page-flags.h>
#include <linux/pgtable.h>
#include <linux/printk.h>
#include <asm/paravirt.h>

#include "defer.h"
#include "stats.h"
#include "xen_ptswap.h"

static pte_t xps_fallback(pte_t *ptep, int err)
{
	xps_count(XPS_STAT_HCALL_ERRORS);
	xps_count(XPS_STAT_FALLBACKS);
	pr_warn_once("MMU_PT_UPDATE_SWAP failed (error %d): clearing with a native xchg that Xen traps and emulates\n",
		     err);
	return native_ptep_get_and_clear(ptep);
}

/**
 * xps_ptep_get_and_clear() - clear a PTE on Xen PV without a trap
 * @mm: the address space (unused: the page table page says all)
 * @addr: the virtual address the entry maps (unused)
 * @ptep: the entry; the caller holds its page table lock, or owns the
 *	kernel mapping (vunmap), as for any ptep_get_and_clear()
 *
 * Called through pv_ops.mmu.ptep_get_and_clear by ptep_get_and_clear()
 * (test/linux-patch/), on Xen PV only.
 *
 * 1. A page table that is not pinned is ordinary writable memory: the
 *    native xchg is exact and does not trap.
 * 2. Read the entry (reads never trap).  A none entry is returned as is.
 * 3. In mode "batched", if xps_can_defer() allows it, set_pte(ptep, 0):
 *    xen_set_pte() queues it into the lazy MMU multicall (issued in
 *    order, before the TLB flush and before pages are freed), or issues
 *    one mmu_update at once outside lazy MMU mode.  Return the value
 *    read; only its A bit may differ from what a native xchg returns.
 * 4. Otherwise flush the queued updates so that they land before this
 *    one, and exchange the entry with one MMU_PT_UPDATE_SWAP, which
 *    returns the exact old value.  If the hypercall fails, fall back to
 *    the native xchg (trapped, but exact and still a clear), count the
 *    error and warn once.
 *
 * Return: the entry that was replaced, as a raw machine (MFN) value.
 */
pte_t xps_ptep_get_and_clear(struct mm_struct *mm, unsigned long addr,
			     pte_t *ptep)
{
	pteval_t old;
	pte_t pte;
	int err;

	xps_count(XPS_STAT_CALLS);

	if (!PagePinned(virt_to_page(ptep))) {
		xps_count(XPS_STAT_UNPINNED);
		return native_ptep_get_and_clear(ptep);
	}

	pte = ptep_get(ptep);
	switch (xps_classify(pte, xps_mode == XPS_MODE_SYNC)) {
	case XPS_CLEAR_NONE:
		xps_count(XPS_STAT_NONE);
		return pte;
	case XPS_CLEAR_DEFER:
		set_pte(ptep, native_make_pte(0));
		xps_count(XPS_STAT_DEFERRED);
		return pte;
	case XPS_CLEAR_SWAP:
		break;
	}

	arch_flush_lazy_mmu_mode();
	err = xps_hypercall_swap(ptep, &old);
	if (unlikely(err))
		return xps_fallback(ptep, err);
	xps_count(XPS_STAT_SWAPPED);
	return native_make_pte(old);
}
