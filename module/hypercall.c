// SPDX-License-Identifier: GPL-2.0
/*
 * hypercall.c - the MMU_PT_UPDATE_SWAP sub-op of mmu_update, and the
 * questions whether Xen offers it and whether it does what we rely on.
 *
 * The sub-op and the feature bit are defined by test/xen-patch/ and
 * numbered in include/xen_ptswap_abi.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/fault-inject.h>
#include <linux/pgtable.h>
#include <linux/vmalloc.h>
#include <xen/interface/xen.h>
#include <xen/interface/version.h>
#include <asm/xen/hypercall.h>
#include <asm/pgtable_types.h>
#include <asm/xen/page.h>

#include "xen_ptswap_abi.h"
#include "xen_ptswap.h"

/* Whether Xen sets feature bit @bit for this domain, asked afresh. */
static bool xps_xen_has(unsigned int bit)
{
	struct xen_feature_info fi = {
		.submap_idx = bit / 32,
	};

	if (HYPERVISOR_xen_version(XENVER_get_features, &fi) < 0)
		return false;
	return fi.submap & BIT(bit % 32);
}

/**
 * xps_xen_has_swap() - does Xen offer MMU_PT_UPDATE_SWAP to this domain?
 *
 * Asks Xen afresh with HYPERVISOR_xen_version(XENVER_get_features) for
 * the feature submap that holds %XENFEAT_mmu_pt_update_swap, rather than
 * trusting the kernel's copy of the features, which may predate the bit.
 *
 * Return: true if the bit is set; false if it is clear or Xen refuses the
 * query.
 */
bool xps_xen_has_swap(void)
{
	return xps_xen_has(XENFEAT_mmu_pt_update_swap);
}

/**
 * xps_xen_has_clear_run() - does Xen offer MMU_PT_CLEAR_RUN to this domain?
 *
 * As xps_xen_has_swap(), for %XENFEAT_mmu_pt_clear_run (test/xen-patch/
 * 0007).
 *
 * Return: true if the bit is set; false if it is clear or Xen refuses the
 * query.
 */
bool xps_xen_has_clear_run(void)
{
	return xps_xen_has(XENFEAT_mmu_pt_clear_run);
}

/*
 * One MMU_PT_UPDATE_SWAP request: exchange the L1 entry at @ptep with @new.
 * Return 0 and the replaced entry in *@old, or a negative errno with *@old
 * untouched.  *@changed says whether Xen counted the request done: then it
 * exchanged the entry, even if it failed afterwards (test/xen-patch/ 0004:
 * the write-back into the request can fail after the exchange only if the
 * request's page is remapped under the call).
 */
static int xps_swap_one(pte_t *ptep, pteval_t new, pteval_t *old,
			bool *changed)
{
	struct mmu_update req = {
		.ptr = virt_to_machine(ptep).maddr | MMU_PT_UPDATE_SWAP,
		.val = new,
	};
	unsigned int done = 0;
	int rc;

	rc = HYPERVISOR_mmu_update(&req, 1, &done, DOMID_SELF);
	*changed = done == 1;
	if (rc < 0)
		return rc;
	if (done != 1)
		return -EIO;
	*old = req.val;
	return 0;
}

/* Entries equal but for the A/D bits, which hardware may set at any time. */
static bool xps_same_entry(pteval_t a, pteval_t b)
{
	return !((a ^ b) & ~(pteval_t)(_PAGE_ACCESSED | _PAGE_DIRTY));
}

#define XPS_PROBE_MAGIC	0x7870737761702d31ULL	/* "xpswap-1" */

/*
 * The bit the probe flips: a software-available bit (_PAGE_SPECIAL in
 * user entries), which the hardware ignores and Xen accepts in any L1
 * entry; it means nothing in a kernel vmalloc mapping.
 */
#define XPS_PROBE_BIT	_PAGE_SOFTW1

/**
 * xps_probe_swap() - check that MMU_PT_UPDATE_SWAP does what we rely on
 * @why: set to a one-line reason when the check fails
 *
 * XENFEAT_mmu_pt_update_swap and sub-op 4 are test/xen-patch/'s numbers,
 * not allocated upstream: a Xen that uses them for something else would
 * make every swap hand back a wrong "old" entry (a leaked page, a lost D
 * bit).  So before installing anything, exchange the L1 entry of one page
 * of our own (vmalloc(), whose L1 table Xen PV pins with init_mm) for the
 * same entry with %XPS_PROBE_BIT flipped, and back, and check the
 * contract: each call succeeds, returns the entry it replaced (the
 * original, then the flipped one: the bit tells them apart, so a sub-op
 * that returns the entry without exchanging it fails), leaves the entry
 * holding the new value, and the page still holds what was written to
 * it.  The entry stays present throughout, so anything that walks
 * vmalloc meanwhile (a kmemleak scan, /proc/kcore) reads the page as
 * before.  On any mismatch the original entry is put back with set_pte()
 * (an ordinary mmu_update); if even that does not restore it, the page is
 * leaked rather than freed under an entry we cannot trust.  Call only
 * when xps_xen_has_swap() is true, outside lazy MMU mode.
 *
 * Return: 0 if the sub-op behaves as specified; -ENOMEM if no page could
 * be had; -EFAULT if the page's L1 entry cannot be found; -EPROTO if the
 * sub-op fails or misbehaves (*@why says how).
 */
int xps_probe_swap(const char **why)
{
	u64 *page = vmalloc(PAGE_SIZE);
	unsigned int level;
	pteval_t orig, flipped, old = 0;
	bool changed;
	pte_t *ptep;
	int err = -EPROTO;

	if (!page) {
		*why = "no memory for the probe page";
		return -ENOMEM;
	}
	page[0] = XPS_PROBE_MAGIC;
	page[PAGE_SIZE / sizeof(u64) - 1] = ~XPS_PROBE_MAGIC;

	ptep = lookup_address((unsigned long)page, &level);
	if (!ptep || level != PG_LEVEL_4K) {
		*why = "cannot find the probe page's L1 entry";
		vfree(page);
		return -EFAULT;
	}
	orig = native_pte_val(ptep_get(ptep));
	flipped = orig ^ XPS_PROBE_BIT;

	if (xps_swap_one(ptep, flipped, &old, &changed)) {
		*why = changed ? "swapping an entry failed after changing it" :
				 "swapping an entry failed";
	} else if (!xps_same_entry(old, orig)) {
		*why = "swapping an entry returned a value that is not the entry";
	} else if (!xps_same_entry(native_pte_val(ptep_get(ptep)), flipped)) {
		*why = "swapping an entry did not store the new value";
	} else if (xps_swap_one(ptep, orig, &old, &changed)) {
		*why = "swapping the entry back failed";
	} else if (!xps_same_entry(old, flipped)) {
		*why = "swapping the entry back did not return the value stored";
	} else if (!xps_same_entry(native_pte_val(ptep_get(ptep)), orig)) {
		*why = "swapping the entry back did not restore it";
	} else if (READ_ONCE(page[0]) != XPS_PROBE_MAGIC ||
		   READ_ONCE(page[PAGE_SIZE / sizeof(u64) - 1]) != ~XPS_PROBE_MAGIC) {
		*why = "the probe page lost its contents across the swaps";
	} else {
		err = 0;
	}

	if (err && !xps_same_entry(native_pte_val(ptep_get(ptep)), orig)) {
		set_pte(ptep, native_make_pte(orig));
		if (!xps_same_entry(native_pte_val(ptep_get(ptep)), orig))
			return err;	/* leak the page: its entry is not ours */
	}
	vfree(page);
	return err;
}

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static DECLARE_FAULT_ATTR(xps_fail_swap);
static DECLARE_FAULT_ATTR(xps_fail_writeback);

/**
 * DOC: /sys/kernel/debug/xen_ptswap/fail_swap/
 *
 * Only in kernels built with CONFIG_FAULT_INJECTION_DEBUG_FS: the kernel's
 * fault-injection attributes (probability in percent, interval, times,
 * space, verbose, ...; see Documentation/fault-injection/) for
 * MMU_PT_UPDATE_SWAP.  A call that should_fail() picks is not issued:
 * xps_hypercall_swap() returns -EINVAL, as Xen does for a request it
 * refuses, and the entry is unchanged, so the caller takes its failure
 * path (native xchg, hcall_errors and fallbacks counted, one warning).
 * Off (probability 0) at every load.
 */

/**
 * DOC: /sys/kernel/debug/xen_ptswap/fail_swap_writeback/
 *
 * The same attributes for the write-back edge of the sub-op's contract
 * (test/xen-patch/ 0004): a call that should_fail() picks is issued and
 * exchanges the entry, then xps_hypercall_swap() drops the replaced value
 * Xen returned and reports -EFAULT with the request counted done, as Xen
 * does when it cannot write the old entry back after the exchange.  The
 * caller must not fall back to a native xchg (the entry is already none);
 * it returns the entry it read before, as accessed and, where the entry
 * may have gained D meanwhile, dirty (module/clear.c, xps_lost_old();
 * hcall_errors, lost_old and swapped counted, one warning).  Off at every
 * load.
 */

/**
 * xps_fail_init() - create the fault-injection attributes
 * @dir: the module's debugfs directory
 *
 * Creates fail_swap/ and fail_swap_writeback/ in @dir.  Errors of debugfs
 * are ignored, as for the stats file.
 */
void xps_fail_init(struct dentry *dir)
{
	fault_create_debugfs_attr("fail_swap", dir, &xps_fail_swap);
	fault_create_debugfs_attr("fail_swap_writeback", dir,
				  &xps_fail_writeback);
}

static bool xps_swap_should_fail(void)
{
	return should_fail(&xps_fail_swap, 1);
}

static bool xps_writeback_should_fail(void)
{
	return should_fail(&xps_fail_writeback, 1);
}
#else
void xps_fail_init(struct dentry *dir)
{
}

static bool xps_swap_should_fail(void)
{
	return false;
}

static bool xps_writeback_should_fail(void)
{
	return false;
}
#endif

/**
 * xps_hypercall_swap() - clear one L1 entry with MMU_PT_UPDATE_SWAP
 * @ptep: the entry, in a pinned L1 page table of this domain (Xen refuses
 *	any other frame with -EINVAL, changing nothing)
 * @old: where to store the entry Xen replaced, as the raw machine value a
 *	native xchg on the entry would have returned
 * @changed: set to whether the entry was exchanged, also on error
 *
 * One mmu_update hypercall with one request on the stack: ptr is the
 * machine address of the entry with the sub-op in its low bits, val the
 * new entry (0).  Xen exchanges the entry atomically, tolerating A/D bits
 * set by the hardware meanwhile, and writes the old entry back into val.
 * A failed request normally changed nothing; only when Xen cannot write
 * the old entry back after the exchange (the request's page remapped
 * under the call: test/xen-patch/ 0004) does it fail with the request
 * counted done: the entry is then none and its old value lost, and
 * *@changed is true.
 *
 * Return: 0 on success; the negative errno from Xen; -EIO if Xen
 * returned success without doing the request; -EINVAL when fail_swap
 * picks this call, -EFAULT with *@changed true when fail_swap_writeback
 * does (see above).  On error @old is not written.
 */
int xps_hypercall_swap(pte_t *ptep, pteval_t *old, bool *changed)
{
	pteval_t val;
	int rc;

	*changed = false;
	if (xps_swap_should_fail())
		return -EINVAL;

	rc = xps_swap_one(ptep, 0, &val, changed);
	if (rc)
		return rc;
	if (xps_writeback_should_fail())
		return -EFAULT;
	*old = val;
	return 0;
}
