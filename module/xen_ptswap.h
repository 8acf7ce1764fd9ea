/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xen_ptswap.h - what the parts of the xen_ptswap module share.
 *
 * main.c: load-time checks, the "mode" parameter, init and exit.
 * hook.c: install and restore the pv_ops.mmu.ptep_get_and_clear slot.
 * hypercall.c: the MMU_PT_UPDATE_SWAP shim and the feature query.
 * clear.c: the batched ptep_get_and_clear() itself (the hot path).
 * stats.c: per-CPU counters and their debugfs file.
 * defer.h: the deferral rule, header-only so that KUnit can test it.
 */
#ifndef XEN_PTSWAP_H
#define XEN_PTSWAP_H

#include <linux/types.h>
#include <asm/pgtable_types.h>

struct dentry;
struct mm_struct;

/*
 * Set by Kbuild when the kernel tree has pv_ops.mmu.ptep_get_and_clear,
 * the interface of test/linux-patch/VERSION/0003 and the checked queue of
 * the series' "panic when Xen refuses a multicall" patch
 * (<asm/xen/ptep.h>).
 */
#ifdef XEN_PTSWAP_HAVE_HOOK
#include <asm/xen/ptep.h>
#define XPS_HAVE_HOOK	true

/**
 * xps_mmu_failures() - page table updates Xen refused since boot
 *
 * Return: xen_mmu_failures(), the kernel's count (arch/x86/xen/multicalls.c
 * with test/linux-patch/ 0003); 0 without the hook, where the module
 * refuses to load.
 */
static inline unsigned long xps_mmu_failures(void)
{
	return xen_mmu_failures();
}

/**
 * xps_queue_clear() - queue a PTE clear that Xen must not refuse
 * @ptep: the entry, in a pinned page table (page table lock held)
 *
 * xen_queue_pte_clear() (the series' patch "x86/xen: panic when Xen
 * refuses a multicall that carries a deferred PTE clear"): in lazy MMU
 * mode, queues the clear in the multicall and marks that multicall; if Xen
 * refuses it, xen_mc_flush() panics before anybody can free the page
 * (Xen leaves undone the rest of a call it refused, and does not say
 * which requests those were).
 *
 * Return: true if queued; false outside lazy MMU mode, nothing done.
 */
static inline bool xps_queue_clear(pte_t *ptep)
{
	return xen_queue_pte_clear(ptep);
}
#else
#define XPS_HAVE_HOOK	false

static inline unsigned long xps_mmu_failures(void)
{
	return 0;
}

static inline bool xps_queue_clear(pte_t *ptep)
{
	return false;
}
#endif

#if defined(XEN_PTSWAP_HAVE_HOOK) && defined(XEN_PTSWAP_HAVE_CLEAR_RUN)
#define XPS_HAVE_CLEAR_RUN	true

/**
 * xps_queue_clear_run() - queue a PTE clear that Xen must not refuse, in a run
 * @ptep: the entry, in a pinned page table (page table lock held)
 *
 * xen_queue_pte_clear_run() (the series' patch "x86/xen: coalesce queued
 * PTE clears into MMU_PT_CLEAR_RUN requests"): as xps_queue_clear(), but
 * the clear of the entry right after the last one queued, in the same page
 * table page, extends that one's MMU_PT_CLEAR_RUN request (Xen's
 * test/xen-patch/ 0007) instead of adding a request.
 *
 * Return: true if queued; false outside lazy MMU mode or where Xen, as the
 * kernel last asked it (at boot or on resume), does not offer
 * MMU_PT_CLEAR_RUN, nothing done.
 */
static inline bool xps_queue_clear_run(pte_t *ptep)
{
	return xen_queue_pte_clear_run(ptep);
}
#else
#define XPS_HAVE_CLEAR_RUN	false

static inline bool xps_queue_clear_run(pte_t *ptep)
{
	return false;
}
#endif

/**
 * enum xps_mode - how xps_ptep_get_and_clear() clears a pinned PTE
 * @XPS_MODE_BATCHED: queue the clear in the lazy MMU multicall when the
 *	deferral rule (defer.h) allows it, else one MMU_PT_UPDATE_SWAP
 * @XPS_MODE_SYNC: always one synchronous MMU_PT_UPDATE_SWAP per PTE
 * @XPS_MODE_NOSWAP: for a Xen without MMU_PT_UPDATE_SWAP: queue what the
 *	deferral rule allows, as in batched mode; clear every other entry
 *	with the native xchg (trapped and emulated by Xen, exact)
 * @XPS_MODE_AUTO: only before the load has chosen: batched where Xen offers
 *	MMU_PT_UPDATE_SWAP and the probe swap passes, noswap otherwise
 *	(xps_check() in main.c replaces it before the op is installed)
 */
enum xps_mode {
	XPS_MODE_BATCHED,
	XPS_MODE_SYNC,
	XPS_MODE_NOSWAP,
	XPS_MODE_AUTO,
};

/*
 * Set by the "mode" parameter at load time, resolved from XPS_MODE_AUTO by
 * xps_check() before the op is installed, read-only afterwards.
 */
extern enum xps_mode xps_mode;

/*
 * Whether queued clears go into MMU_PT_CLEAR_RUN runs (the "runs"
 * parameter as resolved at load time, read-only afterwards; main.c).
 */
extern bool xps_runs;

const char *xps_mode_name(void);

pte_t xps_ptep_get_and_clear(struct mm_struct *mm, unsigned long addr,
			     pte_t *ptep);

int xps_hook_install(void);
void xps_hook_restore(void);

bool xps_xen_has_swap(void);
bool xps_xen_has_clear_run(void);
int xps_probe_swap(const char **why);
int xps_hypercall_swap(pte_t *ptep, pteval_t *old, bool *changed);
void xps_fail_init(struct dentry *dir);

#endif /* XEN_PTSWAP_H */
