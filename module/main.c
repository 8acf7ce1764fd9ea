// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - xen_ptswap: clear PTEs on Xen PV without a trap per entry.
 *
 * Load-time checks, the "mode" parameter, module init and exit.  The
 * design is in docs/design.md; the hot path is in clear.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <xen/xen.h>

#include "stats.h"
#include "xen_ptswap.h"
#include "xen_ptswap_abi.h"

enum xps_mode xps_mode = XPS_MODE_BATCHED;

static const char * const xps_mode_names[] = {
	[XPS_MODE_BATCHED]	= "batched",
	[XPS_MODE_SYNC]		= "sync",
	[XPS_MODE_NOSWAP]	= "noswap",
};

static int xps_mode_set(const char *val, const struct kernel_param *kp)
{
	int mode = sysfs_match_string(xps_mode_names, val);

	if (mode < 0) {
		pr_err("invalid mode \"%s\": use mode=batched (the default), mode=sync or mode=noswap\n",
		       val);
		return -EINVAL;
	}
	*(enum xps_mode *)kp->arg = mode;
	return 0;
}

static int xps_mode_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 xps_mode_names[*(enum xps_mode *)kp->arg]);
}

static const struct kernel_param_ops xps_mode_ops = {
	.set = xps_mode_set,
	.get = xps_mode_get,
};

/**
 * DOC: mode
 *
 * Module parameter "mode", a string, set at load time only (0444 in
 * /sys/module/xen_ptswap/parameters/mode):
 *  - "batched" (default): a clear that the deferral rule allows (entry
 *    not present, dirty or special: defer.h) is queued into the lazy MMU
 *    multicall when the CPU is in lazy MMU mode; any other clear is one
 *    synchronous MMU_PT_UPDATE_SWAP;
 *  - "sync": every clear of a pinned, non-none entry is one synchronous
 *    MMU_PT_UPDATE_SWAP, for A/B comparisons of the two strategies;
 *  - "noswap": the opt-in for a Xen without MMU_PT_UPDATE_SWAP (stock
 *    Xen): clears the deferral rule allows are queued as in "batched",
 *    every other clear (a writable, clean entry) is the native xchg,
 *    which Xen traps and emulates (ptwr emulation, exact).  Needs nothing
 *    new from Xen: a queued clear is an ordinary MMU_NORMAL_PT_UPDATE in
 *    the lazy MMU multicall.  Also allowed on a Xen that has the sub-op,
 *    so that the mode can be measured beside the others.
 * Any other value fails the load with -EINVAL and installs nothing.  On a
 * Xen without XENFEAT_mmu_pt_update_swap only "noswap" loads; the others
 * fail with -EOPNOTSUPP and one log line that names mode=noswap.  Once Xen
 * has refused a page table update (xen_mmu_failures() is not 0, see
 * clear.c) only "sync" loads; "batched" and "noswap" fail with -EIO and
 * one log line, and a loaded module queues no clear from then on.
 */
module_param_cb(mode, &xps_mode_ops, &xps_mode, 0444);
MODULE_PARM_DESC(mode,
		 "batched (default): queue clears the CPU cannot race with, swap the rest; sync: one MMU_PT_UPDATE_SWAP per PTE; noswap: queue what batched queues, native xchg for the rest (for a Xen without MMU_PT_UPDATE_SWAP)");

/* Each failed check prints one line: the cause and what to do. */
static int __init xps_check(void)
{
	const char *why = "";
	unsigned long refused;
	int err;

	if (!xen_pv_domain()) {
		pr_err("not a Xen PV domain: this module only works in a Xen PV guest or PV Dom0\n");
		return -ENODEV;
	}
	if (!XPS_HAVE_HOOK) {
		pr_err("kernel has no pv_ops.mmu.ptep_get_and_clear hook with xen_register_ptep_get_and_clear(), xen_mmu_failures() and xen_queue_pte_clear(): apply the whole series for its version (test/linux-patch/VERSION/) to the kernel, boot it and rebuild this module against it\n");
		return -EOPNOTSUPP;
	}
	/* Queue nothing on a Xen that has refused an update (clear.c). */
	refused = xps_mmu_failures();
	if (xps_mode != XPS_MODE_SYNC && refused) {
		pr_err("Xen refused %lu page table update(s) since boot (the kernel warned in xen_mc_flush() or __xen_set_pte()): mode=%s would queue PTE clears on a Xen that refuses updates; reboot, or load with mode=sync\n",
		       refused, xps_mode_names[xps_mode]);
		return -EIO;
	}
	/* noswap never issues the sub-op: nothing of Xen's to check. */
	if (xps_mode == XPS_MODE_NOSWAP)
		return 0;
	if (!xps_xen_has_swap()) {
		pr_err("Xen does not offer MMU_PT_UPDATE_SWAP (XENFEAT_mmu_pt_update_swap clear): boot a Xen built with test/xen-patch/, or load with mode=noswap (deferred clears only, the rest trapped)\n");
		return -EOPNOTSUPP;
	}
	err = xps_probe_swap(&why);
	if (err == -EPROTO) {
		pr_err("Xen advertises XENFEAT_mmu_pt_update_swap, but a probe swap of one of our own entries failed (%s): this Xen's feature bit %d or mmu_update sub-op %d is not test/xen-patch/'s, not loading\n",
		       why, XENFEAT_mmu_pt_update_swap, MMU_PT_UPDATE_SWAP);
		return -EOPNOTSUPP;
	}
	if (err) {
		pr_err("cannot probe MMU_PT_UPDATE_SWAP: %s (error %d)\n",
		       why, err);
		return err;
	}
	return 0;
}

static int __init xps_init(void)
{
	int err;

	err = xps_check();
	if (err)
		return err;

	xps_stats_init();
	xps_fail_init(xps_stats_dir());

	err = xps_hook_install();
	if (err == -EBUSY) {
		pr_err("pv_ops.mmu.ptep_get_and_clear is owned by another module (error %d): unload that one first\n",
		       err);
		goto err_stats;
	}
	if (err) {
		pr_err("cannot register pv_ops.mmu.ptep_get_and_clear (error %d)\n",
		       err);
		goto err_stats;
	}

	pr_info("installed, mode=%s\n", xps_mode_names[xps_mode]);
	return 0;

err_stats:
	xps_stats_exit();
	return err;
}

static void __exit xps_exit(void)
{
	xps_hook_restore();
	xps_stats_exit();
	pr_info("removed, previous ptep_get_and_clear restored\n");
}

module_init(xps_init);
module_exit(xps_exit);

MODULE_DESCRIPTION("Batched, trap-free ptep_get_and_clear for Xen PV (MMU_PT_UPDATE_SWAP)");
MODULE_AUTHOR("xen-ptswap developers");
MODULE_LICENSE("GPL");
