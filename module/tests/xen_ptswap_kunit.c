// SPDX-License-Identifier: GPL-2.0
/*
 * xen_ptswap_kunit.c - KUnit suite for the deferral rule of xen_ptswap.
 *
 * Tests module/defer.h, the code the module's hot path runs, on every
 * class of entry a ptep_get_and_clear() can meet, in both modes.  Entries
 * are built from raw values with native_make_pte(), as they are read from
 * a Xen PV page table (machine frame numbers); the frame number is
 * arbitrary because the rule only looks at flag bits.
 *
 * Built by the top-level Kbuild next to xen_ptswap.ko when the kernel has
 * CONFIG_KUNIT (kept beside the code it tests, as in-tree KUnit suites
 * are).  Run: insmod xen_ptswap_kunit.ko, then read
 * /sys/kernel/debug/kunit/xen_ptswap_defer/results (or the kernel log).
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/swap.h>
#include <linux/swapops.h>

#include "defer.h"

/* Any frame: the rule must not depend on it. */
#define XPS_TEST_FRAME	(0x12345ULL << PAGE_SHIFT)

static pte_t xps_raw(pteval_t flags)
{
	return native_make_pte(XPS_TEST_FRAME | flags);
}

static void xps_expect(struct kunit *test, pte_t pte, enum xps_clear batched,
		       enum xps_clear sync)
{
	KUNIT_EXPECT_EQ_MSG(test, xps_classify(pte, false), batched,
			    "mode batched, entry %#llx",
			    (unsigned long long)native_pte_val(pte));
	KUNIT_EXPECT_EQ_MSG(test, xps_classify(pte, true), sync,
			    "mode sync, entry %#llx",
			    (unsigned long long)native_pte_val(pte));
}

/* Zero, and the bits pte_none() ignores (KNL erratum): nothing to write. */
static void xps_test_none(struct kunit *test)
{
	xps_expect(test, native_make_pte(0), XPS_CLEAR_NONE, XPS_CLEAR_NONE);
	xps_expect(test, native_make_pte(_PAGE_KNL_ERRATUM_MASK),
		   XPS_CLEAR_NONE, XPS_CLEAR_NONE);
}

/* Swap entries and PTE markers: the CPU never walks them. */
static void xps_test_not_present(struct kunit *test)
{
	pte_t swap = swp_entry_to_pte(swp_entry(1, 0x4242));

	KUNIT_ASSERT_FALSE(test, pte_present(swap));
	KUNIT_ASSERT_FALSE(test, pte_none(swap));
	xps_expect(test, swap, XPS_CLEAR_DEFER, XPS_CLEAR_SWAP);
	xps_expect(test, native_make_pte(XPS_TEST_FRAME),
		   XPS_CLEAR_DEFER, XPS_CLEAR_SWAP);
}

/*
 * PROT_NONE (NUMA hinting): pte_present() and clean: swapped, like every
 * present clean entry (stricter than the hardware needs: it sees no P).
 */
static void xps_test_protnone(struct kunit *test)
{
	pte_t pte = xps_raw(_PAGE_PROTNONE | _PAGE_ACCESSED);

	KUNIT_ASSERT_TRUE(test, pte_present(pte));
	xps_expect(test, pte, XPS_CLEAR_SWAP, XPS_CLEAR_SWAP);
	xps_expect(test, xps_raw(_PAGE_PROTNONE | _PAGE_DIRTY),
		   XPS_CLEAR_DEFER, XPS_CLEAR_SWAP);
}

/*
 * Present read-only: a clean one can gain D through a stale writable TLB
 * entry until a write-protect's flush, which no count covers (fork):
 * never deferred; a dirty one always is.
 */
static void xps_test_read_only(struct kunit *test)
{
	pteval_t ro = _PAGE_PRESENT | _PAGE_USER | _PAGE_ACCESSED;

	xps_expect(test, xps_raw(ro), XPS_CLEAR_SWAP, XPS_CLEAR_SWAP);
	xps_expect(test, xps_raw(ro & ~_PAGE_ACCESSED),
		   XPS_CLEAR_SWAP, XPS_CLEAR_SWAP);
	xps_expect(test, xps_raw(ro | _PAGE_DIRTY),
		   XPS_CLEAR_DEFER, XPS_CLEAR_SWAP);
}

/* Present, writable, clean: the CPU may set D at any moment: never defer. */
static void xps_test_writable_clean(struct kunit *test)
{
	pteval_t rw = _PAGE_PRESENT | _PAGE_RW | _PAGE_USER;

	xps_expect(test, xps_raw(rw), XPS_CLEAR_SWAP, XPS_CLEAR_SWAP);
	xps_expect(test, xps_raw(rw | _PAGE_ACCESSED),
		   XPS_CLEAR_SWAP, XPS_CLEAR_SWAP);
	xps_expect(test, xps_raw(rw | _PAGE_ACCESSED | _PAGE_SOFT_DIRTY),
		   XPS_CLEAR_SWAP, XPS_CLEAR_SWAP);
	xps_expect(test, xps_raw(rw | _PAGE_NX | _PAGE_GLOBAL),
		   XPS_CLEAR_SWAP, XPS_CLEAR_SWAP);
}

/* Present, writable, dirty: D is already in the value returned. */
static void xps_test_writable_dirty(struct kunit *test)
{
	pteval_t rwd = _PAGE_PRESENT | _PAGE_RW | _PAGE_USER | _PAGE_DIRTY;

	xps_expect(test, xps_raw(rwd), XPS_CLEAR_DEFER, XPS_CLEAR_SWAP);
	xps_expect(test, xps_raw(rwd | _PAGE_ACCESSED),
		   XPS_CLEAR_DEFER, XPS_CLEAR_SWAP);
}

/* pte_special(): no struct page whose dirtiness anybody reads. */
static void xps_test_special(struct kunit *test)
{
	pteval_t sp = _PAGE_PRESENT | _PAGE_RW | _PAGE_USER | _PAGE_SPECIAL;

	xps_expect(test, xps_raw(sp), XPS_CLEAR_DEFER, XPS_CLEAR_SWAP);
	xps_expect(test, xps_raw(sp & ~_PAGE_RW),
		   XPS_CLEAR_DEFER, XPS_CLEAR_SWAP);
}

/*
 * Every combination of the flags the rule reads, with and without flags it
 * must ignore: deferred exactly when not present, dirty or special; so a
 * present, clean, non-special entry is never deferred, writable or not,
 * whatever else is set.  (_PAGE_GLOBAL is not in the ignored set: without
 * _PAGE_PRESENT that bit is _PAGE_PROTNONE, which pte_present() counts as
 * present.)
 */
static void xps_test_all_combinations(struct kunit *test)
{
	static const pteval_t ignored[] = {
		0, _PAGE_ACCESSED, _PAGE_USER | _PAGE_NX,
		_PAGE_SOFT_DIRTY, _PAGE_PWT | _PAGE_PCD | _PAGE_PAT,
	};
	unsigned int bits, i;

	for (bits = 0; bits < 16; bits++) {
		pteval_t flags = (bits & 1 ? _PAGE_PRESENT : 0) |
				 (bits & 2 ? _PAGE_RW : 0) |
				 (bits & 4 ? _PAGE_DIRTY : 0) |
				 (bits & 8 ? _PAGE_SPECIAL : 0);
		bool defer = !(bits & 1) || (bits & 4) || (bits & 8);

		for (i = 0; i < ARRAY_SIZE(ignored); i++) {
			pte_t pte = xps_raw(flags | ignored[i]);

			KUNIT_EXPECT_EQ_MSG(test, xps_can_defer(pte), defer,
					    "entry %#llx",
					    (unsigned long long)native_pte_val(pte));
			xps_expect(test, pte,
				   defer ? XPS_CLEAR_DEFER : XPS_CLEAR_SWAP,
				   XPS_CLEAR_SWAP);
		}
	}
}

static struct kunit_case xps_defer_cases[] = {
	KUNIT_CASE(xps_test_none),
	KUNIT_CASE(xps_test_not_present),
	KUNIT_CASE(xps_test_protnone),
	KUNIT_CASE(xps_test_read_only),
	KUNIT_CASE(xps_test_writable_clean),
	KUNIT_CASE(xps_test_writable_dirty),
	KUNIT_CASE(xps_test_special),
	KUNIT_CASE(xps_test_all_combinations),
	{}
};

static struct kunit_suite xps_defer_suite = {
	.name = "xen_ptswap_defer",
	.test_cases = xps_defer_cases,
};

kunit_test_suite(xps_defer_suite);

MODULE_DESCRIPTION("KUnit tests for the xen_ptswap deferral rule");
MODULE_LICENSE("GPL");
