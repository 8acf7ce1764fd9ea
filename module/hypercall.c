// SPDX-License-Identifier: GPL-2.0
/*
 * hypercall.c - the MMU_PT_UPDATE_SWAP sub-op of mmu_update, and the
 * question whether Xen offers it.
 *
 * The sub-op and the feature bit are defined by test/xen-patch/ and
 * numbered in include/xen_ptswap_abi.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/fault-inject.h>
#include <xen/interface/xen.h>
#include <xen/interface/version.h>
#include <asm/xen/hypercall.h>
#include <asm/xen/page.h>

#include "xen_ptswap_abi.h"
#include "xen_ptswap.h"

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
	struct xen_feature_info fi = {
		.submap_idx = XENFEAT_mmu_pt_update_swap / 32,
	};

	if (HYPERVISOR_xen_version(XENVER_get_features, &fi) < 0)
		return false;
	return fi.submap & BIT(XENFEAT_mmu_pt_update_swap % 32);
}

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static DECLARE_FAULT_ATTR(xps_fail_swap);

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
 * xps_fail_init() - create the fail_swap fault-injection attributes
 * @dir: the module's debugfs directory
 *
 * Errors of debugfs are ignored, as for the stats file.
 */
void xps_fail_init(struct dentry *dir)
{
	fault_create_debugfs_attr("fail_swap", dir, &xps_fail_swap);
}

static bool xps_swap_should_fail(void)
{
	return should_fail(&xps_fail_swap, 1);
}
#else
void xps_fail_init(struct dentry *dir)
{
}

static bool xps_swap_should_fail(void)
{
	return false;
}
#endif

/**
 * xps_hypercall_swap() - clear one L1 entry with MMU_PT_UPDATE_SWAP
 * @ptep: the entry, in a page table page of this domain (a pinned one, or
 *	Xen does a plain atomic exchange)
 * @old: where to store the entry Xen replaced, as the raw machine value a
 *	native xchg on the entry would have returned
 *
 * One mmu_update hypercall with one request on the stack: ptr is the
 * machine address of the entry with the sub-op in its low bits, val the
 * new entry (0).  Xen exchanges the entry atomically, tolerating A/D bits
 * set by the hardware meanwhile, and writes the old entry back into val.
 * A request is either done completely or not at all.
 *
 * Return: 0 on success; the negative errno from Xen; -EIO if Xen
 * returned success without doing the request; -EINVAL when the
 * fault-injection attribute fail_swap picks this call (see above).  On error @old is not
 * written and the entry is unchanged.
 */
int xps_hypercall_swap(pte_t *ptep, pteval_t *old)
{
	struct mmu_update req = {
		.ptr = virt_to_machine(ptep).maddr | MMU_PT_UPDATE_SWAP,
		.val = 0,
	};
	unsigned int done = 0;
	int rc;

	if (xps_swap_should_fail())
		return -EINVAL;

	rc = HYPERVISOR_mmu_update(&req, 1, &done, DOMID_SELF);
	if (rc < 0)
		return rc;
	if (done != 1)
		return -EIO;
	*old = req.val;
	return 0;
}
