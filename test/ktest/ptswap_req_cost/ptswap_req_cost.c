// SPDX-License-Identifier: GPL-2.0
/*
 * ptswap_req_cost - what clearing one L1 entry costs a Xen PV Dom0, each
 * way it can be done, measured in one boot.  A benchmark: tools/req-cost
 * loads it and prints the table; nothing here passes or fails on time.
 *
 * At load time the module maps one page of its own @entries times into a
 * vmap area (kernel L1 entries, in page tables Xen has pinned: read-only
 * to Dom0) and, for @rounds rounds, clears all of them each way below,
 * putting them back with MMU_NORMAL_PT_UPDATE (not timed) before each.
 * Each round runs every way once, starting at a different one, so drift
 * is shared.  Ways:
 *   memory:     the same xchg on ordinary memory (no trap), the floor;
 *   ptwr:       native xchg(pte, 0), what stock ptep_get_and_clear() does:
 *               a write fault Xen emulates (ptwr), one per entry;
 *   lazy-set_pte: set_pte(pte, 0) in lazy MMU mode: Linux's Xen PV code
 *               queues MMU_NORMAL_PT_UPDATE in its multicall buffer and
 *               issues it when full and when lazy mode ends;
 *   lazy-queue-clear: xen_queue_pte_clear() in lazy MMU mode, the queued
 *               clear of the module's modes batched and noswap: the same
 *               request as lazy-set_pte's, with the mark that makes
 *               Xen's refusal of its multicall fatal.  Measured only
 *               where the kernel has xen_queue_pte_clear()
 *               (test/linux-patch/);
 *   lazy-queue-run: xen_queue_pte_clear_run() in lazy MMU mode, the
 *               module's queued clear with runs=Y: consecutive clears of
 *               one page table page extend one MMU_PT_CLEAR_RUN request.
 *               Measured only where the kernel has it and Xen advertises
 *               XENFEAT_mmu_pt_clear_run;
 *   normal-N:   MMU_NORMAL_PT_UPDATE to 0, N requests per mmu_update;
 *   normal-none-32: the same, 32 per call, of entries already none (made
 *               so before the pass, untimed): Xen's cost of a request
 *               without the old entry's put_page_from_l1e();
 *   swap-N:     MMU_PT_UPDATE_SWAP to 0, N per mmu_update (needs a Xen
 *               that advertises XENFEAT_mmu_pt_update_swap);
 *   run-N:      MMU_PT_CLEAR_RUN requests of N entries each (fewer where
 *               an L1 frame ends), all in one mmu_update (needs
 *               XENFEAT_mmu_pt_clear_run, test/xen-patch/ 0007);
 *   run-all:    the same with one request per L1 frame the entries lie
 *               in: what a zap that coalesced every clear of a page table
 *               into one request would ask of Xen;
 *   run-none-all: run-all over entries already none (made so before the
 *               pass, untimed): Xen's cost per entry of a run without the
 *               old entry's put_page_from_l1e();
 *   empty-call: mmu_update with no request, per call (entries: calls);
 *   pte_val-own: not a clear: pte_val() of an entry that maps one of
 *               Dom0's own frames (each entry another frame), the M2P
 *               translation that the zap's vm_normal_page() and the other
 *               pte_pfn()/pte_val() readers of an entry pay on Xen PV
 *               (tools/zap_translations.bt counts them);
 *   pte_val-notown: the same for frames that are not Dom0's (the lowest
 *               machine frames whose M2P entry does not map back to
 *               them: Xen's own, or another domain's), whose translation
 *               fails: the path of a foreign mapping's entry;
 *   p2m-lookup: not a clear: virt_to_machine() of each entry's address
 *               (a P2M lookup of its page table page), which every
 *               queued request computes: what computing it once per page
 *               table page instead could save per entry.
 * After each timed pass every entry must be none and every swap must have
 * returned its entry (A/D aside), every translation must have given
 * the frame's PFN (pte_val-own) or an entry without _PAGE_PRESENT
 * (pte_val-notown), and every lookup the machine address found at setup
 * (p2m-lookup), or the load fails with -EIO: a wrong clear gives no
 * figure.  So does a pass over which the TSC did not
 * advance, a kernel that does not know the TSC's rate (tsc_khz 0), and a
 * run whose passes, summed, took more than 1.25 times as long by the TSC
 * as by the timekeeping clock or the reverse (tsc_khz is not the rate the
 * TSC ran at).
 *
 * Results: /sys/kernel/debug/ptswap_req_cost/results, one line per way:
 * "<way> <requests per call> <median ns per entry> <min> <max> <rounds>",
 * nanoseconds per entry cleared, from the TSC read in order
 * (rdtsc_ordered()) before and after each timed pass, with preemption off
 * (one vCPU; Xen may move it between physical CPUs, so this assumes the
 * host's TSCs are synchronised and run at one constant rate, as Xen's own
 * pvclock does), converted with the kernel's tsc_khz (on Xen PV, Xen's
 * figure).
 * Not local_clock(): with the sched clock unstable, as on Xen PV here, it
 * clamps the PV clock to a window around the last tick, and whole passes
 * measured 0 ns in two lab boots (20261204-194852-9885,
 * 20261204-225833-24720).  Requests per call is 1 for memory, ptwr,
 * lazy-set_pte, lazy-queue-clear and lazy-queue-run (one xchg, set_pte() or
 * queued clear per entry; Linux merges the lazy ways' updates into its multicalls) and
 * 0 for empty-call; for the run ways it is the number of run requests the
 * call carried.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pgtable.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <asm/tsc.h>
#include <asm/xen/hypercall.h>
#include <asm/xen/page.h>
#include <xen/features.h>
#include <xen/interface/version.h>
#include <xen/xen.h>

#include "xen_ptswap_abi.h"
#include "xps_ktest_lazy.h"

static unsigned int entries = 512;
module_param(entries, uint, 0444);
MODULE_PARM_DESC(entries, "L1 entries cleared per pass, 32-4096, a multiple of 32 (default 512)");

static unsigned int rounds = 21;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "timed passes of each way, 1-1001 (default 21)");

#define PTE_AD		((u64)(_PAGE_ACCESSED | _PAGE_DIRTY))
#define RESULTS_SIZE	2048

enum way_kind {
	WAY_MEMORY, WAY_PTWR, WAY_LAZY, WAY_QCLEAR, WAY_NORMAL, WAY_SWAP, WAY_EMPTY, WAY_XLATE,
	WAY_P2M, WAY_RUN, WAY_QRUN
};

/*
 * xen_queue_pte_clear() is the series' (test/linux-patch/); Kbuild
 * tells whether this tree has it.
 */
#ifdef XPS_HAVE_QUEUE_PTE_CLEAR
#include <asm/xen/ptep.h>
#define HAVE_QCLEAR	true
#else
#define HAVE_QCLEAR	false
static inline bool xen_queue_pte_clear(pte_t *ptep)
{
	return false;
}
#endif

/* xen_queue_pte_clear_run(), the series' coalescing patch. */
#ifdef XPS_HAVE_QUEUE_PTE_CLEAR_RUN
#define HAVE_QRUN	true
#else
#define HAVE_QRUN	false
static inline bool xen_queue_pte_clear_run(pte_t *ptep)
{
	return false;
}
#endif

/**
 * struct way - one way of clearing, and its per-round results
 * @name: as printed
 * @kind: what it does
 * @per_call: requests per mmu_update; 0: all @entries (for empty-call: none);
 *	for WAY_RUN, entries per run request, 0: to the end of the L1 frame
 * @swap: needs MMU_PT_UPDATE_SWAP
 * @run: needs MMU_PT_CLEAR_RUN
 * @reqs: WAY_RUN: the run requests the last pass's call carried
 * @none: the entries are made none before the pass (untimed)
 * @notown: WAY_XLATE of frames that are not Dom0's
 * @qclear: needs xen_queue_pte_clear() in the kernel
 * @qrun: needs xen_queue_pte_clear_run() in the kernel (and the run sub-op)
 * @ns: ns per entry of each round, @rounds of them
 */
struct way {
	const char *name;
	enum way_kind kind;
	unsigned int per_call;
	bool swap;
	bool run;
	unsigned int reqs;
	bool none;
	bool notown;
	bool qclear;
	bool qrun;
	u64 *ns;
};

static struct way ways[] = {
	{ .name = "memory", .kind = WAY_MEMORY, .per_call = 1 },
	{ .name = "ptwr", .kind = WAY_PTWR, .per_call = 1 },
	{ .name = "lazy-set_pte", .kind = WAY_LAZY, .per_call = 1 },
	{ .name = "lazy-queue-clear", .kind = WAY_QCLEAR, .per_call = 1, .qclear = true },
	{ .name = "lazy-queue-run", .kind = WAY_QRUN, .per_call = 1, .qrun = true, .run = true },
	{ .name = "normal-1", .kind = WAY_NORMAL, .per_call = 1 },
	{ .name = "normal-32", .kind = WAY_NORMAL, .per_call = 32 },
	{ .name = "normal-all", .kind = WAY_NORMAL },
	{ .name = "normal-none-32", .kind = WAY_NORMAL, .per_call = 32, .none = true },
	{ .name = "swap-1", .kind = WAY_SWAP, .per_call = 1, .swap = true },
	{ .name = "swap-32", .kind = WAY_SWAP, .per_call = 32, .swap = true },
	{ .name = "swap-all", .kind = WAY_SWAP, .swap = true },
	{ .name = "run-32", .kind = WAY_RUN, .per_call = 32, .run = true },
	{ .name = "run-all", .kind = WAY_RUN, .run = true },
	{ .name = "run-none-all", .kind = WAY_RUN, .run = true, .none = true },
	{ .name = "empty-call", .kind = WAY_EMPTY },	/* per_call printed as 0 */
	{ .name = "pte_val-own", .kind = WAY_XLATE, .per_call = 1 },
	{ .name = "pte_val-notown", .kind = WAY_XLATE, .per_call = 1, .notown = true },
	{ .name = "p2m-lookup", .kind = WAY_P2M, .per_call = 1 },
};

static struct page *data_page;
static struct page **pages;
static void *area;
static pte_t **ptep;
static bool mapped;	/* setup() found every entry: ptep, maddr, orig valid */
static u64 *maddr, *orig;
static struct mmu_update *req;
static u64 *plain;	/* @entries words of ordinary memory, for "memory" */
static void *xbuf;	/* @entries pages of Dom0's own, for "pte_val-own" */
static u64 *xown, *xown_pfn;	/* their raw entries, and their PFNs */
static u64 *xnot;	/* raw entries of frames that are not Dom0's */
static u64 *xout;	/* what pte_val() gave, for the check */
static u64 pass_cycles;	/* TSC cycles of every timed pass, summed */
static u64 pass_ktime;	/* ktime_get_ns() over the same passes, summed */
/**
 * DOC: /sys/kernel/debug/ptswap_req_cost/results
 *
 * Read-only, created once every pass has run and been checked, removed at
 * unload.  One line per way measured: its name, requests per mmu_update
 * call, then the median, minimum and maximum nanoseconds per entry over
 * @rounds passes, then @rounds (see the file's header).  The swap-* lines
 * are missing when Xen does not advertise XENFEAT_mmu_pt_update_swap, the
 * lazy-queue-clear line when the kernel has no xen_queue_pte_clear().
 */
static char *results;
static size_t results_len;
static struct debugfs_blob_wrapper results_blob;
static struct dentry *debug_dir;

static int mmu_update(struct mmu_update *r, unsigned int count, unsigned int *done)
{
	return HYPERVISOR_mmu_update(r, count, done, DOMID_SELF);
}

/* Put every entry back as it was mapped, in batches; 0 or the error. */
static int restore_all(void)
{
	unsigned int i, done;

	for (i = 0; i < entries; i++) {
		req[i].ptr = maddr[i] | MMU_NORMAL_PT_UPDATE;
		req[i].val = orig[i];
		plain[i] = orig[i];
	}
	return mmu_update(req, entries, &done);
}

/*
 * WAY_RUN: one mmu_update of MMU_PT_CLEAR_RUN requests covering every
 * entry, each of @w->per_call entries or up to the end of its L1 frame
 * (the entries of the area are consecutive slots but for the frame
 * boundaries, which may be machine-adjacent).  Building the requests is
 * timed too: a guest builds them.  0, or the call's error (-EIO if it did
 * not do every request).
 */
static int run_pass(struct way *w)
{
	unsigned int i = 0, n = 0, len, done = 0;
	int rc;

	while (i < entries) {
		/*
		 * Consecutive slots of one frame: two L1 tables next to each
		 * other in machine memory continue the addresses, so the
		 * page boundary ends a run too.
		 */
		for (len = 1; i + len < entries &&
		     (!w->per_call || len < w->per_call) &&
		     maddr[i + len] == maddr[i] + len * sizeof(u64) &&
		     (maddr[i + len] & ~PAGE_MASK); len++)
			;
		req[n].ptr = maddr[i] | MMU_PT_CLEAR_RUN;
		req[n].val = len;
		n++;
		i += len;
	}
	rc = mmu_update(req, n, &done);
	w->reqs = n;
	return rc ? rc : done == n ? 0 : -EIO;
}

/* Clear every entry @w's way; 0, or the error of the failing call. */
static int clear_pass(struct way *w)
{
	unsigned int per = w->per_call ? w->per_call : entries;
	unsigned int cmd = w->swap ? MMU_PT_UPDATE_SWAP : MMU_NORMAL_PT_UPDATE;
	unsigned int i, done;
	int rc = 0;

	if (w->kind == WAY_MEMORY) {
		for (i = 0; i < entries; i++)
			xchg(&plain[i], 0);
		return 0;
	}
	if (w->kind == WAY_PTWR) {
		for (i = 0; i < entries; i++)
			xchg(&ptep[i]->pte, 0);
		return 0;
	}
	if (w->kind == WAY_LAZY) {
		xps_lazy_enter();
		for (i = 0; i < entries; i++)
			set_pte(ptep[i], native_make_pte(0));
		xps_lazy_leave();
		return 0;
	}
	if (w->kind == WAY_QCLEAR || w->kind == WAY_QRUN) {
		xps_lazy_enter();
		for (i = 0; i < entries && !rc; i++)
			if (!(w->kind == WAY_QRUN ? xen_queue_pte_clear_run(ptep[i]) :
			      xen_queue_pte_clear(ptep[i])))
				rc = -EINVAL;	/* not in lazy MMU mode, or no run sub-op */
		xps_lazy_leave();
		return rc;
	}
	if (w->kind == WAY_EMPTY) {
		for (i = 0; i < entries && !rc; i++)
			rc = mmu_update(req, 0, &done);
		return rc;
	}
	if (w->kind == WAY_P2M) {
		for (i = 0; i < entries; i++)
			xout[i] = virt_to_machine(ptep[i]).maddr;
		return 0;
	}
	if (w->kind == WAY_XLATE) {
		const u64 *raw = w->notown ? xnot : xown;

		for (i = 0; i < entries; i++)
			xout[i] = pte_val(native_make_pte(raw[i]));
		return 0;
	}
	if (w->kind == WAY_RUN)
		return run_pass(w);
	for (i = 0; i < entries; i++) {
		req[i].ptr = maddr[i] | cmd;
		req[i].val = 0;
	}
	for (i = 0; i < entries && !rc; i += per)
		rc = mmu_update(req + i, per, &done);
	return rc;
}

/*
 * After a pass: every entry none and, for a swap, each old value back;
 * for a translation, each frame's PFN, or no _PAGE_PRESENT for a frame
 * that is not Dom0's; for a lookup, the entry's machine address.
 */
static int check_pass(const struct way *w)
{
	unsigned int i;

	for (i = 0; i < entries && w->kind == WAY_XLATE; i++) {
		bool ok = w->notown ? !(xout[i] & _PAGE_PRESENT) :
			  (xout[i] & _PAGE_PRESENT) &&
			  ((xout[i] & PTE_PFN_MASK) >> PAGE_SHIFT) == xown_pfn[i];

		if (!ok) {
			pr_err("%s: entry %u translated to %#llx\n", w->name, i, xout[i]);
			return -EIO;
		}
	}
	for (i = 0; i < entries && w->kind == WAY_P2M; i++)
		if (xout[i] != maddr[i]) {
			pr_err("%s: entry %u's address looked up as %#llx, want %#llx\n",
			       w->name, i, xout[i], maddr[i]);
			return -EIO;
		}
	if (w->kind == WAY_XLATE || w->kind == WAY_P2M)
		return 0;
	for (i = 0; i < entries && w->kind == WAY_MEMORY; i++)
		if (plain[i]) {
			pr_err("%s: word %u is %#llx after the pass, want 0\n",
			       w->name, i, plain[i]);
			return -EIO;
		}
	for (i = 0; i < entries && w->kind != WAY_MEMORY; i++) {
		u64 now = READ_ONCE(ptep[i]->pte);

		if (w->kind != WAY_EMPTY && now) {
			pr_err("%s: entry %u is %#llx after the pass, want 0\n", w->name, i, now);
			return -EIO;
		}
		if (w->kind == WAY_EMPTY && now != orig[i]) {
			pr_err("%s: entry %u changed to %#llx\n", w->name, i, now);
			return -EIO;
		}
		if (w->swap && (req[i].val ^ orig[i]) & ~PTE_AD) {
			pr_err("%s: entry %u returned %#llx, was %#llx\n", w->name, i,
			       req[i].val, orig[i]);
			return -EIO;
		}
	}
	return 0;
}

static int one_pass(struct way *w, unsigned int round)
{
	u64 t0, t1, k0, k1;
	int rc;

	/* A translation or lookup does not read the entries: nothing to put back. */
	rc = w->kind == WAY_XLATE || w->kind == WAY_P2M ? 0 : restore_all();
	if (rc) {
		pr_err("restoring the entries failed: %d\n", rc);
		return rc;
	}
	if (w->none) {
		/* normal-all's clear, untimed */
		static struct way all = { .name = "pre-clear", .kind = WAY_NORMAL };

		rc = clear_pass(&all);
		if (rc) {
			pr_err("%s: clearing the entries before the pass failed: %d\n",
			       w->name, rc);
			return rc;
		}
	}
	preempt_disable();
	k0 = ktime_get_ns();
	t0 = rdtsc_ordered();
	rc = clear_pass(w);
	t1 = rdtsc_ordered();
	k1 = ktime_get_ns();
	preempt_enable();
	if (rc) {
		pr_err("%s: mmu_update failed: %d\n", w->name, rc);
		return rc;
	}
	/*
	 * Every pass does work that takes microseconds, on one vCPU: a TSC
	 * that did not advance over one is broken, or the host's TSCs are not
	 * synchronised and Xen moved the vCPU in between.
	 */
	if (t1 <= t0) {
		pr_err("%s: the TSC did not advance over a pass of %u entries (%llu to %llu; host TSCs not synchronised?): no figures\n",
		       w->name, entries, t0, t1);
		return -EIO;
	}
	pass_cycles += t1 - t0;
	pass_ktime += k1 - k0;
	/* cycles * 10^6 / kHz = ns */
	w->ns[round] = div_u64(mul_u64_u32_div(t1 - t0, 1000000, tsc_khz),
			       entries);
	return check_pass(w);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void report(const struct way *w)
{
	u64 *s = kmemdup(w->ns, rounds * sizeof(*s), GFP_KERNEL);

	if (!s)
		return;
	sort(s, rounds, sizeof(*s), cmp_u64, NULL);
	results_len += scnprintf(results + results_len, RESULTS_SIZE - results_len,
				 "%s %u %llu %llu %llu %u\n", w->name,
				 w->kind == WAY_EMPTY ? 0 : w->kind == WAY_RUN ? w->reqs :
				 w->per_call ? w->per_call : entries,
				 s[rounds / 2], s[0], s[rounds - 1], rounds);
	kfree(s);
}

/*
 * The translation ways' entries: @entries distinct frames of Dom0's own
 * (xbuf's pages), and the lowest @entries machine frames that are not
 * Dom0's: mfn_to_pfn() finds no PFN of ours that maps back to them (an
 * identity-mapped frame maps back, and is left out).  0, or -ENOENT if
 * the machine has too few of those.
 */
static int setup_xlate(void)
{
	const u64 flags = _PAGE_PRESENT | _PAGE_RW | _PAGE_USER | _PAGE_ACCESSED;
	unsigned long mfn;
	unsigned int i, n = 0;

	for (i = 0; i < entries; i++) {
		xown_pfn[i] = vmalloc_to_pfn(xbuf + (size_t)i * PAGE_SIZE);
		xown[i] = ((u64)pfn_to_mfn(xown_pfn[i]) << PAGE_SHIFT) | flags;
	}
	for (mfn = 1; n < entries && mfn < machine_to_phys_nr; mfn++)
		if (mfn_to_pfn(mfn) == ~0UL)
			xnot[n++] = ((u64)mfn << PAGE_SHIFT) | flags;
	if (n < entries) {
		pr_err("found %u machine frames that are not Dom0's, want %u\n", n, entries);
		return -ENOENT;
	}
	return 0;
}

/* Allocate and map everything the passes use; 0, or the error after one log line. */
static int setup(void)
{
	unsigned int i, level;
	int rc;

	data_page = alloc_page(GFP_KERNEL);
	pages = kcalloc(entries, sizeof(*pages), GFP_KERNEL);
	ptep = kcalloc(entries, sizeof(*ptep), GFP_KERNEL);
	maddr = kcalloc(entries, sizeof(*maddr), GFP_KERNEL);
	orig = kcalloc(entries, sizeof(*orig), GFP_KERNEL);
	req = kcalloc(entries, sizeof(*req), GFP_KERNEL);
	plain = kcalloc(entries, sizeof(*plain), GFP_KERNEL);
	results = kzalloc(RESULTS_SIZE, GFP_KERNEL);
	xbuf = vmalloc(entries * PAGE_SIZE);
	xown = kcalloc(entries, sizeof(*xown), GFP_KERNEL);
	xown_pfn = kcalloc(entries, sizeof(*xown_pfn), GFP_KERNEL);
	xnot = kcalloc(entries, sizeof(*xnot), GFP_KERNEL);
	xout = kcalloc(entries, sizeof(*xout), GFP_KERNEL);
	if (!data_page || !pages || !ptep || !maddr || !orig || !req || !plain || !results ||
	    !xbuf || !xown || !xown_pfn || !xnot || !xout) {
		pr_err("no memory for %u test entries\n", entries);
		return -ENOMEM;
	}
	rc = setup_xlate();	/* says why itself */
	if (rc)
		return rc;
	for (i = 0; i < entries; i++)
		pages[i] = data_page;
	area = vmap(pages, entries, VM_MAP, PAGE_KERNEL);
	if (!area) {
		pr_err("cannot map the %u test entries (vmap() failed)\n", entries);
		return -ENOMEM;
	}
	for (i = 0; i < entries; i++) {
		ptep[i] = lookup_address((unsigned long)area + i * PAGE_SIZE, &level);
		if (!ptep[i] || level != PG_LEVEL_4K) {
			pr_err("test entry %u is not a 4 KiB L1 entry\n", i);
			return -ENOENT;
		}
		maddr[i] = arbitrary_virt_to_machine(ptep[i]).maddr;
		orig[i] = READ_ONCE(ptep[i]->pte);
	}
	mapped = true;
	return 0;
}

/* Put the entries back, unmap the area, free all but the results. */
static void teardown(void)
{
	unsigned int i;

	/*
	 * Only passes change the entries, and they run after a complete
	 * setup(): without one, maddr[] is partly unset and nothing to restore.
	 */
	if (area && mapped) {
		struct mmuext_op flush = { .cmd = MMUEXT_TLB_FLUSH_ALL };

		/* No TLB flush followed the passes; the entries were never used. */
		WARN_ON(restore_all());
		WARN_ON(HYPERVISOR_mmuext_op(&flush, 1, NULL, DOMID_SELF));
	}
	if (area)
		vunmap(area);
	for (i = 0; i < ARRAY_SIZE(ways); i++)
		kfree(ways[i].ns);
	kfree(xout);
	kfree(xnot);
	kfree(xown_pfn);
	kfree(xown);
	vfree(xbuf);
	kfree(plain);
	kfree(req);
	kfree(orig);
	kfree(maddr);
	kfree(ptep);
	kfree(pages);
	if (data_page)
		__free_page(data_page);
}

/*
 * Whether @w can run here: swap-* need the swap sub-op, run-* and
 * lazy-queue-run the run sub-op, lazy-queue-clear and lazy-queue-run the
 * series' functions.
 */
static bool way_runs(const struct way *w, bool swap, bool run)
{
	return (!w->swap || swap) && (!w->run || run) && (!w->qclear || HAVE_QCLEAR) &&
	       (!w->qrun || HAVE_QRUN);
}

/* Whether Xen advertises feature bit @bit (of submap 0) to this domain. */
static bool advertised(unsigned int bit)
{
	struct xen_feature_info fi = { .submap_idx = 0 };

	return HYPERVISOR_xen_version(XENVER_get_features, &fi) >= 0 &&
	       (fi.submap & BIT(bit));
}

/**
 * ptswap_req_cost_init() - run every way @rounds times and keep the results
 *
 * Return: 0 with the results in debugfs; -ENODEV outside a Xen PV domain
 * or with no TSC rate (tsc_khz 0), -EINVAL for a bad @entries or @rounds,
 * -ENOMEM, -ENOENT if the area has no 4 KiB L1 entries or the machine
 * fewer than @entries frames that are not Dom0's, -EIO if a pass
 * left an entry wrong or the TSC did not advance over one, or if the TSC
 * and the timekeeping clock disagree over the passes by a ratio over 1.25
 * (tsc_khz wrong), or the error
 * of a failed hypercall.  Each refusal says why in one log line.
 */
static int __init ptswap_req_cost_init(void)
{
	unsigned int i, r, n = ARRAY_SIZE(ways);
	u64 tsc_ns;
	bool swap, run;
	int rc;

	if (!xen_pv_domain()) {
		pr_err("not a Xen PV domain\n");
		return -ENODEV;
	}
	if (!tsc_khz) {
		pr_err("the TSC's rate is not known (tsc_khz 0): no clock to time passes with\n");
		return -ENODEV;
	}
	swap = advertised(XENFEAT_mmu_pt_update_swap);
	run = advertised(XENFEAT_mmu_pt_clear_run);
	if (entries < 32 || entries > 4096 || entries % 32 || !rounds || rounds > 1001) {
		pr_err("entries=%u rounds=%u: want 32-4096 (a multiple of 32) and 1-1001\n",
		       entries, rounds);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		ways[i].ns = kcalloc(rounds, sizeof(u64), GFP_KERNEL);
		if (!ways[i].ns) {
			rc = -ENOMEM;
			goto fail;
		}
	}
	rc = setup();	/* says why itself, in one line */
	if (rc)
		goto fail;
	for (r = 0; r < rounds; r++)
		for (i = 0; i < n; i++) {
			struct way *w = &ways[(i + r) % n];

			if (!way_runs(w, swap, run))
				continue;
			rc = one_pass(w, r);
			if (rc)
				goto fail;
			cond_resched();
		}
	/*
	 * Over all passes (each timed on one vCPU) the TSC at tsc_khz and
	 * the timekeeping clock must agree within a ratio of 1.25, or
	 * tsc_khz is not the rate this TSC ran at and no figure is right.
	 * Both come from Xen's calibration of the same TSC; a lab run
	 * measured them 6e-5 apart.
	 */
	tsc_ns = mul_u64_u32_div(pass_cycles, 1000000, tsc_khz);
	if (4 * tsc_ns > 5 * pass_ktime || 4 * pass_ktime > 5 * tsc_ns) {
		pr_err("the passes took %llu ns by the TSC at tsc_khz=%u and %llu ns by the timekeeping clock: no figures\n",
		       tsc_ns, tsc_khz, pass_ktime);
		rc = -EIO;
		goto fail;
	}
	pr_info("run: %llu ns of passes by the TSC, %llu ns by the timekeeping clock\n",
		tsc_ns, pass_ktime);
	for (i = 0; i < n; i++)
		if (way_runs(&ways[i], swap, run))
			report(&ways[i]);
	if (!swap)
		pr_info("XENFEAT_mmu_pt_update_swap is clear: swap-* not measured\n");
	if (!run)
		pr_info("XENFEAT_mmu_pt_clear_run is clear: run-* not measured\n");
	if (!HAVE_QCLEAR)
		pr_info("the kernel has no xen_queue_pte_clear(): lazy-queue-clear not measured\n");
	if (!HAVE_QRUN)
		pr_info("the kernel has no xen_queue_pte_clear_run(): lazy-queue-run not measured\n");
	teardown();
	results_blob.data = results;
	results_blob.size = results_len;
	debug_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_blob("results", 0444, debug_dir, &results_blob);
	return 0;
fail:
	teardown();
	kfree(results);
	return rc;
}

static void __exit ptswap_req_cost_exit(void)
{
	debugfs_remove_recursive(debug_dir);
	kfree(results);
}

module_init(ptswap_req_cost_init);
module_exit(ptswap_req_cost_exit);
MODULE_DESCRIPTION("Per-entry cost of clearing an L1 entry from a Xen PV domain");
MODULE_LICENSE("GPL");
