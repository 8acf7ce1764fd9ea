// SPDX-License-Identifier: GPL-2.0
/*
 * clear.c - the batched ptep_get_and_clear() installed in
 * pv_ops.mmu.ptep_get_and_clear.
 *
 * On Xen PV a pinned page table is read-only to the guest: the native
 * xchg of ptep_get_and_clear() traps and Xen emulates it, once per PTE
 * that zap_pte_range() clears.  This version avoids that trap on a
 * pinned page table: it either queues the clear into the lazy MMU
 * multicall (when defer.h allows it, with the kernel's
 * xen_queue_pte_clear(), after which the kernel panics should Xen refuse
 * its multicall) or asks Xen to exchange the entry with one
 * MMU_PT_UPDATE_SWAP.  Two paths still trap: the native xchg
 * after a swap that failed having changed nothing, and mode "noswap",
 * for a Xen without that sub-op, which queues the same clears and leaves
 * the rest to the trapped native xchg.
 *
 * Entries in Xen PV page tables hold machine frame numbers (MFNs), and
 * the native xchg returns that raw value.  So does this code: it builds
 * return values with native_make_pte(), never __pte(), which is a pv-op
 * that would translate a PFN into an MFN a second time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/page-flags.h>
#include <linux/percpu.h>
#include <linux/pgtable.h>
#include <linux/printk.h>
#include <asm/paravirt.h>

#include "defer.h"
#include "stats.h"
#include "xen_ptswap.h"

#define CREATE_TRACE_POINTS
#include "xps_trace.h"

/*
 * The entry this CPU last queued a clear of, NULL after the module issued
 * the queue.  A second call for that entry while its clear is still
 * queued would read the value the clear replaces and return it twice
 * (the caller would free its page twice).  No lazy MMU section of 6.1,
 * 6.12, 6.18 or 7.3 clears an entry twice: this is a tripwire for a future
 * caller that does, and remembers one entry only.  Per CPU because the
 * queue is: a task that moves to another CPU leaves lazy MMU mode on the
 * way, which issues the queue.
 */
static DEFINE_PER_CPU(pte_t *, xps_last_queued);

/*
 * Issue this CPU's queued updates (arch_flush_lazy_mmu_mode() disables
 * preemption around it) and forget the last queued entry.
 */
static void xps_issue_queue(void)
{
	arch_flush_lazy_mmu_mode();
	this_cpu_write(xps_last_queued, NULL);
}

/*
 * Read @ptep, the entry this CPU last queued a clear of: read it, issue
 * the queue and read it again.  A value that changed was stale: count it
 * and warn once.  Return: the entry as it is now.
 */
static pte_t xps_reread(pte_t *ptep)
{
	pte_t before = ptep_get(ptep), now;

	xps_issue_queue();
	now = ptep_get(ptep);
	if (unlikely(native_pte_val(now) != native_pte_val(before))) {
		xps_count(XPS_STAT_READBACK);
		pr_warn_once("clear of an entry whose own queued clear had not landed: issued the queue first\n");
	}
	return now;
}

static pte_t xps_fallback(pte_t *ptep, int err)
{
	xps_count(XPS_STAT_HCALL_ERRORS);
	xps_count(XPS_STAT_FALLBACKS);
	pr_warn_once("MMU_PT_UPDATE_SWAP failed (error %d): clearing with a native xchg that Xen traps and emulates\n",
		     err);
	return native_ptep_get_and_clear(ptep);
}

/*
 * Whether a present entry, read as @pte, can have gained D before the
 * swap cleared it.  A writable one can.  A read-only one only through a
 * stale writable TLB entry (defer.h): report it dirty over an anonymous
 * or shmem page, where that costs at most a write to swap.  Not over a
 * page of a file that writes back: its mapping is write-notify, so its
 * clean entries are read-only and such a page is not expected to be
 * dirtied without a write fault (ext4 WARNs; 9p BUG()s in writeback of a
 * file nobody opened for writing, every exiting process's text).  Left
 * open: a writable clean entry of a shared file mapping (fork copies them
 * clean when it copies page tables; migration without A/D bits) that a
 * write-protect turned read-only, whose stale TLB entry sets D after
 * writeback cleaned the page, cleared by rmap on this path loses that
 * write.  This path runs only when Xen cannot write the old value back
 * into the module's request, which is on the kernel stack: never, short
 * of fault injection.  A special entry, or one Xen PV cannot translate
 * (a foreign frame: pte_val() clears _PAGE_PRESENT), has no page.  The
 * page stays mapped until the caller drops it, so its folio is stable.
 */
static bool xps_may_have_gained_d(pte_t pte)
{
	struct folio *folio;
	unsigned long pfn;
	pteval_t val;

	if (pte_flags(pte) & _PAGE_RW)
		return true;
	if (pte_flags(pte) & _PAGE_SPECIAL)
		return false;
	val = pte_val(pte);	/* the MFN translated to a PFN (the M2P) */
	if (!(val & _PAGE_PRESENT))
		return false;
	pfn = (val & PTE_PFN_MASK) >> PAGE_SHIFT;
	if (!pfn_valid(pfn))
		return false;
	folio = page_folio(pfn_to_page(pfn));
	return folio_test_anon(folio) || folio_test_swapbacked(folio);
}

/*
 * The swap exchanged the entry but Xen could not hand back what it
 * replaced (test/xen-patch/ 0004's write-back edge).  The entry is none
 * already: a native xchg would return that none and leak the page.
 * Return @pte, read before the swap, which can lack only A/D bits the
 * hardware set since: report a present entry accessed, and dirty if it
 * can have gained D (xps_may_have_gained_d()), so that at worst a clean
 * page is written back once more.  pte_mkdirty() works on the raw value
 * and, where the kernel has shadow stacks, keeps a read-only entry's D in
 * the SavedDirty bit, as the kernel's own entries do.
 */
static pte_t xps_lost_old(pte_t pte, int err)
{
	xps_count(XPS_STAT_HCALL_ERRORS);
	xps_count(XPS_STAT_LOST_OLD);
	xps_count(XPS_STAT_SWAPPED);
	pr_warn_once("MMU_PT_UPDATE_SWAP cleared an entry but failed to return it (error %d): using the value read before, as accessed, and dirty where it may have been written\n",
		     err);
	if (!(pte_flags(pte) & _PAGE_PRESENT))
		return pte;
	if (xps_may_have_gained_d(pte))
		pte = pte_mkdirty(pte);
	return pte_mkyoung(pte);
}

/*
 * Whether Xen has refused a page table update since boot
 * (xen_mmu_failures(), test/linux-patch/ 0003): a failed multicall batch,
 * whose mmu_update Xen stopped at the failed request, or a failed
 * immediate set_pte().  A refused multicall that carried a queued clear
 * panics the kernel (xps_queue_clear()), so this is a refusal of other
 * updates; but a Xen that refuses updates is not one to keep batching
 * on: from then on queue nothing.  The kernel's
 * warning has tainted it already; say once per load what it means for
 * this module.
 */
static bool xps_mmu_failed(void)
{
	if (!xps_mmu_failures())
		return false;
	xps_count(XPS_STAT_SYNC_AFTER_FAILURE);
	pr_crit_once("Xen refused a page table update (the kernel warned in xen_mc_flush() or __xen_set_pte()): clearing synchronously from now on\n");
	return true;
}

/**
 * xps_ptep_get_and_clear() - clear a PTE on Xen PV without a trap
 * @mm: the address space (only for the trace event: the page table
 *	page says all)
 * @addr: the virtual address the entry maps (only for the trace event)
 * @ptep: the entry; the caller holds its page table lock, or owns the
 *	kernel mapping (vunmap), as for any ptep_get_and_clear()
 *
 * Called through pv_ops.mmu.ptep_get_and_clear by ptep_get_and_clear()
 * (test/linux-patch/), on Xen PV only.
 *
 * 1. A page table that is not pinned is ordinary writable memory: the
 *    native xchg is exact and does not trap.
 * 2. Read the entry (reads never trap); if this CPU's last queued clear
 *    was of this entry, issue the queue around the read (a read of our
 *    own queued write would be stale).  The pointer is compared before
 *    the read: a task that migrates between the two has had its queue
 *    issued on the way.  A none entry is returned as is.
 * 3. In modes "batched" and "noswap", if xps_can_defer() allows it, Xen
 *    has refused no page table update since boot (xps_mmu_failed()) and
 *    the CPU is in lazy MMU mode, queue the clear into the lazy MMU
 *    multicall with xps_queue_clear() (issued in order, before the TLB
 *    flush and before pages are freed; if Xen refuses that multicall,
 *    the kernel panics in the flush, before any page is freed).  Return
 *    the value read; only its A bit may differ from what a native xchg
 *    returns.  Outside lazy MMU mode nothing is
 *    queued: go on to 4.
 * 4. Otherwise flush the queued updates so that they land before this
 *    one.  In mode "noswap" (a Xen without the sub-op) clear the entry
 *    with the native xchg, which Xen traps and emulates: exact, as
 *    without the module.  Else exchange it with one
 *    MMU_PT_UPDATE_SWAP, which returns the exact old value.  If the
 *    hypercall fails without changing the entry, fall back to the
 *    native xchg (trapped, but exact and still a clear), count the
 *    error and warn once.  If it changed the entry but lost the old
 *    value, see xps_lost_old(): never the native xchg then.
 *
 * Every call ends with one xen_ptswap_clear trace event (xps_trace.h)
 * that names the class it was counted in.
 *
 * Return: the entry that was replaced, as a raw machine (MFN) value.
 */
pte_t xps_ptep_get_and_clear(struct mm_struct *mm, unsigned long addr,
			     pte_t *ptep)
{
	enum xps_stat how;
	bool changed;
	int err = 0;
	pteval_t old;
	pte_t pte;

	xps_count(XPS_STAT_CALLS);

	if (!PagePinned(virt_to_page(ptep))) {
		how = XPS_STAT_UNPINNED;
		xps_count(how);
		pte = native_ptep_get_and_clear(ptep);
		goto out;
	}

	if (unlikely(this_cpu_read(xps_last_queued) == ptep))
		pte = xps_reread(ptep);
	else
		pte = ptep_get(ptep);
	switch (xps_classify(pte, xps_mode == XPS_MODE_SYNC)) {
	case XPS_CLEAR_NONE:
		how = XPS_STAT_NONE;
		xps_count(how);
		goto out;
	case XPS_CLEAR_DEFER:
		if (unlikely(xps_mmu_failed()))
			break;
		/*
		 * A run refuses where Xen, as the kernel last asked it (at
		 * boot or on resume), lacks the run sub-op (a domain migrated
		 * to an older Xen since the load): queue one request instead.
		 */
		if (!(xps_runs && xps_queue_clear_run(ptep)) && !xps_queue_clear(ptep))
			break;
		this_cpu_write(xps_last_queued, ptep);
		how = XPS_STAT_DEFERRED;
		xps_count(how);
		goto out;
	case XPS_CLEAR_SWAP:
		break;
	}

	xps_issue_queue();
	if (xps_mode == XPS_MODE_NOSWAP) {
		how = XPS_STAT_NATIVE;
		xps_count(how);
		pte = native_ptep_get_and_clear(ptep);
		goto out;
	}
	err = xps_hypercall_swap(ptep, &old, &changed);
	if (unlikely(err)) {
		/* Each counts its own class: swapped (and lost_old), fallbacks. */
		how = changed ? XPS_STAT_SWAPPED : XPS_STAT_FALLBACKS;
		pte = changed ? xps_lost_old(pte, err) : xps_fallback(ptep, err);
		goto out;
	}
	how = XPS_STAT_SWAPPED;
	xps_count(how);
	pte = native_make_pte(old);
out:
	trace_xen_ptswap_clear(mm, addr, ptep, pte, how, err);
	return pte;
}
