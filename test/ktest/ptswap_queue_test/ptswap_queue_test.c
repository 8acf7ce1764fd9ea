// SPDX-License-Identifier: GPL-2.0
/*
 * ptswap_queue_test - queued PTE clears that span two page table pages,
 * one request each and in runs.
 *
 * xen_queue_pte_clear() (the Linux series' "panic when Xen refuses a
 * multicall that carries a deferred PTE clear") queues one mmu_update
 * request per clear, addressed by the entry's machine address, and marks
 * the multicall that holds it.  Nothing else checks that a run of queued
 * clears lands on its own entries when it crosses from one page table
 * page into the next, and that is where any sharing of work between the
 * requests of a run (a machine address kept per page table page, a run
 * request) can go wrong: a variant of the series that kept the batch's
 * first page for every later clear failed "cleared" here (lab run
 * 20261207-114133-32307), while the zaps of the batched correctness suite
 * passed (20261207-113325-26058: zap_pte_range() issues the batch at
 * every page table page).
 *
 * At load it maps one page of its own @XPS_QT_PAGES times into a vmap
 * area (kernel L1 entries in page tables that Xen has pinned), finds two
 * consecutive entries in different page table pages, and in one lazy MMU
 * section queues the clears of the %XPS_QT_RUN entries around that
 * boundary, fewer than one multicall batch holds, so that no flush
 * separates them.  Checks, each logged as "PASS: <check>" or
 * "FAIL: <check>: ...":
 *   queued:   inside the section every entry still holds its value (the
 *             clears were queued, not done at once) and
 *             xen_queue_pte_clear() returned true for each;
 *   cleared:  after the section every entry is none: each request
 *             reached its own entry, on both sides of the boundary;
 *   neighbours: the entries of the area outside the run are unchanged
 *             (a request addressed through the wrong page would clear
 *             an entry there, at the same offset).
 * Then the same three through xen_queue_pte_clear_run() (the series'
 * coalescing patch: consecutive clears of one page table page extend one
 * MMU_PT_CLEAR_RUN request; it needs Xen's XENFEAT_mmu_pt_clear_run), as
 * run-queued, run-cleared and run-neighbours: the run must end at the
 * boundary and a new one start in the next page table; and
 *   run-order: clear entry b, set_pte(b + 1) to its own value, clear
 *             b + 1 and b + 2, in one section: all three end none.  A
 *             clear that extended a run past a request queued after it
 *             would reach Xen before that set_pte(), which would then
 *             map b + 1 again;
 *   run-after-flush: clear entry b, issue the queue
 *             (arch_flush_lazy_mmu_mode()), set_pte() entry c far away to
 *             its own value, clear b + 1: b and b + 1 end none and c as
 *             mapped.  A run remembered across the flush would take c's
 *             request, queued where the run's was, for the run and
 *             count b + 1 into it.
 * Whether the boundary run met the page table pages adjacent in memory
 * (the only case in which the run's own entry-after-the-last test cannot
 * tell them apart, and the page boundary test must) is logged.
 * Between the passes, and at the end, the entries are put back with
 * set_pte() (the area is unmapped at the end).
 *
 * Return of the load: 0 if every check passed (the module stays loaded
 * until rmmod; it does nothing more), -EIO if one failed, -ENOENT if no
 * boundary or no 4 KiB entry was found, -ENOMEM, -ENODEV outside a Xen
 * PV domain.  Each refusal says why in one log line.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pgtable.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <asm/xen/ptep.h>
#include <xen/xen.h>

#include "xps_ktest_lazy.h"

/* 4 MiB of mappings: at least one whole 2 MiB page table page inside. */
#define XPS_QT_PAGES	1024
/* Entries queued around the boundary: fewer than a multicall batch's 32. */
#define XPS_QT_RUN	8

static struct page *data_page;
static struct page **pages;
static void *area;
static pte_t **ptep;
static pteval_t *orig;

/* The page table page that holds @p. */
static unsigned long table_of(const pte_t *p)
{
	return (unsigned long)p & PAGE_MASK;
}

/* Map the area and find its entries; 0, or the error after one log line. */
static int setup(void)
{
	unsigned int i, level;

	data_page = alloc_page(GFP_KERNEL);
	pages = kcalloc(XPS_QT_PAGES, sizeof(*pages), GFP_KERNEL);
	ptep = kcalloc(XPS_QT_PAGES, sizeof(*ptep), GFP_KERNEL);
	orig = kcalloc(XPS_QT_PAGES, sizeof(*orig), GFP_KERNEL);
	if (!data_page || !pages || !ptep || !orig) {
		pr_err("no memory for %d test entries\n", XPS_QT_PAGES);
		return -ENOMEM;
	}
	for (i = 0; i < XPS_QT_PAGES; i++)
		pages[i] = data_page;
	area = vmap(pages, XPS_QT_PAGES, VM_MAP, PAGE_KERNEL);
	if (!area) {
		pr_err("cannot map the %d test entries (vmap() failed)\n", XPS_QT_PAGES);
		return -ENOMEM;
	}
	for (i = 0; i < XPS_QT_PAGES; i++) {
		ptep[i] = lookup_address((unsigned long)area + i * PAGE_SIZE, &level);
		if (!ptep[i] || level != PG_LEVEL_4K) {
			pr_err("test entry %u is not a 4 KiB L1 entry\n", i);
			return -ENOENT;
		}
		orig[i] = native_pte_val(ptep_get(ptep[i]));
	}
	return 0;
}

/* Put back every entry that is not as mapped, unmap, free. */
static void teardown(void)
{
	unsigned int i;

	if (area) {
		for (i = 0; i < XPS_QT_PAGES && ptep[i]; i++)
			if (native_pte_val(ptep_get(ptep[i])) != orig[i])
				set_pte(ptep[i], native_make_pte(orig[i]));
		vunmap(area);
	}
	kfree(orig);
	kfree(ptep);
	kfree(pages);
	if (data_page)
		__free_page(data_page);
}

/* Put back every entry that is not as mapped. */
static void restore(void)
{
	unsigned int i;

	for (i = 0; i < XPS_QT_PAGES; i++)
		if (native_pte_val(ptep_get(ptep[i])) != orig[i])
			set_pte(ptep[i], native_make_pte(orig[i]));
}

/*
 * Queue the clears of entries [@first, @first + XPS_QT_RUN) in one lazy
 * MMU section, with xen_queue_pte_clear_run() if @run, else
 * xen_queue_pte_clear(), and check them (the checks' names get "run-"
 * before them if @run); 0 if every check passed, else -EIO.
 */
static int queue_and_check(unsigned int first, bool run)
{
	unsigned int i, end = first + XPS_QT_RUN;
	bool queued = true, still = true;
	const char *pre = run ? "run-" : "";
	int failed = 0;

	preempt_disable();
	xps_lazy_enter();
	for (i = first; i < end; i++)
		queued &= run ? xen_queue_pte_clear_run(ptep[i]) : xen_queue_pte_clear(ptep[i]);
	for (i = first; i < end; i++)
		still &= native_pte_val(ptep_get(ptep[i])) == orig[i];
	xps_lazy_leave();
	preempt_enable();

	if (queued && still) {
		pr_info("PASS: %squeued\n", pre);
	} else {
		pr_err("FAIL: %squeued: %s\n", pre, queued ?
		       "an entry changed before lazy MMU mode ended" :
		       run ? "xen_queue_pte_clear_run() refused (Xen without MMU_PT_CLEAR_RUN?)" :
		       "xen_queue_pte_clear() refused in lazy MMU mode");
		failed = 1;
	}
	for (i = first; i < end; i++)
		if (native_pte_val(ptep_get(ptep[i])) != 0)
			break;
	if (i == end) {
		pr_info("PASS: %scleared\n", pre);
	} else {
		pr_err("FAIL: %scleared: entry %u (%s the page table boundary) is %#llx after lazy MMU mode, want 0\n",
		       pre, i, table_of(ptep[i]) == table_of(ptep[first]) ? "before" : "after",
		       (u64)native_pte_val(ptep_get(ptep[i])));
		failed = 1;
	}
	for (i = 0; i < XPS_QT_PAGES; i++)
		if ((i < first || i >= end) &&
		    native_pte_val(ptep_get(ptep[i])) != orig[i])
			break;
	if (i == XPS_QT_PAGES) {
		pr_info("PASS: %sneighbours\n", pre);
	} else {
		pr_err("FAIL: %sneighbours: entry %u, outside the run, is %#llx, was %#llx\n",
		       pre, i, (u64)native_pte_val(ptep_get(ptep[i])), (u64)orig[i]);
		failed = 1;
	}
	return failed ? -EIO : 0;
}

/*
 * run-order: in one lazy MMU section clear entry @b, set_pte() entry
 * @b + 1 to its own value (a request queued after the run), then clear
 * @b + 1 and @b + 2, all with xen_queue_pte_clear_run(); all three must be
 * none afterwards.  0 if so, else -EIO.
 */
static int run_order(unsigned int b)
{
	bool queued = true;
	unsigned int i;

	preempt_disable();
	xps_lazy_enter();
	queued &= xen_queue_pte_clear_run(ptep[b]);
	set_pte(ptep[b + 1], native_make_pte(orig[b + 1]));
	queued &= xen_queue_pte_clear_run(ptep[b + 1]);
	queued &= xen_queue_pte_clear_run(ptep[b + 2]);
	xps_lazy_leave();
	preempt_enable();

	for (i = b; i < b + 3; i++)
		if (native_pte_val(ptep_get(ptep[i])) != 0)
			break;
	if (queued && i == b + 3) {
		pr_info("PASS: run-order\n");
		return 0;
	}
	if (!queued)
		pr_err("FAIL: run-order: xen_queue_pte_clear_run() refused in lazy MMU mode\n");
	else
		pr_err("FAIL: run-order: entry %u is %#llx after lazy MMU mode, want 0 (entry %u was set between two clears)\n",
		       i, (u64)native_pte_val(ptep_get(ptep[i])), b + 1);
	return -EIO;
}

/*
 * run-after-flush: clear @b, issue the queue, set_pte() @c to its own
 * value, clear @b + 1, all in one lazy MMU section; @b and @b + 1 must be
 * none and @c as mapped.  0 if so, else -EIO.
 */
static int run_after_flush(unsigned int b, unsigned int c)
{
	bool queued = true;
	pteval_t e0, e1, ec;

	preempt_disable();
	xps_lazy_enter();
	queued &= xen_queue_pte_clear_run(ptep[b]);
	arch_flush_lazy_mmu_mode();
	set_pte(ptep[c], native_make_pte(orig[c]));
	queued &= xen_queue_pte_clear_run(ptep[b + 1]);
	xps_lazy_leave();
	preempt_enable();

	e0 = native_pte_val(ptep_get(ptep[b]));
	e1 = native_pte_val(ptep_get(ptep[b + 1]));
	ec = native_pte_val(ptep_get(ptep[c]));
	if (queued && !e0 && !e1 && ec == orig[c]) {
		pr_info("PASS: run-after-flush\n");
		return 0;
	}
	pr_err("FAIL: run-after-flush: queued %d, entries %u %u %u: %#llx %#llx %#llx, want 0 0 %#llx\n",
	       queued, b, b + 1, c, (u64)e0, (u64)e1, (u64)ec, (u64)orig[c]);
	return -EIO;
}

/**
 * ptswap_queue_test_init() - run the checks at load (see the file's header)
 *
 * Return: 0 if every check passed; -ENODEV outside a Xen PV domain,
 * -ENOMEM, -ENOENT (no 4 KiB entries, or no page table boundary in the
 * area), -EIO if a check failed.
 */
static int __init ptswap_queue_test_init(void)
{
	unsigned int i;
	int rc;

	if (!xen_pv_domain()) {
		pr_err("not a Xen PV domain\n");
		return -ENODEV;
	}
	rc = setup();
	if (rc)
		goto out;
	for (i = XPS_QT_RUN / 2; i + XPS_QT_RUN / 2 < XPS_QT_PAGES; i++)
		if (table_of(ptep[i]) != table_of(ptep[i - 1]))
			break;
	if (i + XPS_QT_RUN / 2 >= XPS_QT_PAGES) {
		pr_err("no page table boundary among the %d test entries\n", XPS_QT_PAGES);
		rc = -ENOENT;
		goto out;
	}
	pr_info("entries %u-%u, page table boundary before entry %u; the two page table pages %s adjacent in memory\n",
		i - XPS_QT_RUN / 2, i + XPS_QT_RUN / 2 - 1, i,
		ptep[i - 1] + 1 == ptep[i] ? "are" : "are not");
	rc = queue_and_check(i - XPS_QT_RUN / 2, false);
	restore();
	if (queue_and_check(i - XPS_QT_RUN / 2, true))
		rc = -EIO;
	restore();
	/*
	 * Three entries of the page table page that starts at entry i, past
	 * the run above: the area holds a whole one, so i < 513 and
	 * i + XPS_QT_RUN + 2 < XPS_QT_PAGES.
	 */
	if (run_order(i + XPS_QT_RUN))
		rc = -EIO;
	restore();
	/* Two more entries of that page, and one far from them. */
	if (run_after_flush(i + 2 * XPS_QT_RUN, i + 4 * XPS_QT_RUN))
		rc = -EIO;
out:
	teardown();
	return rc;
}

static void __exit ptswap_queue_test_exit(void)
{
}

module_init(ptswap_queue_test_init);
module_exit(ptswap_queue_test_exit);
MODULE_DESCRIPTION("xen-ptswap: queued PTE clears across a page table boundary");
MODULE_LICENSE("GPL");
