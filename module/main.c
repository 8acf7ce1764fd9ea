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

enum xps_mode xps_mode = XPS_MODE_AUTO;

static const char * const xps_mode_names[] = {
	[XPS_MODE_BATCHED]	= "batched",
	[XPS_MODE_SYNC]		= "sync",
	[XPS_MODE_NOSWAP]	= "noswap",
	[XPS_MODE_AUTO]		= "auto",
};

/* Why mode=auto chose what it chose, for the "installed" line. */
static const char *xps_auto_why;

bool xps_runs = true;

/* Why the runs are off although "runs" asked for them, for the same line. */
static const char *xps_runs_why;

/**
 * xps_mode_name() - the name of the mode in force
 *
 * Return: "batched", "sync" or "noswap" once the module is loaded (the
 * choice of mode=auto is made before the op is installed); "auto" only
 * while a load with mode=auto has not chosen yet.  Never NULL.
 */
const char *xps_mode_name(void)
{
	return xps_mode_names[xps_mode];
}

static int xps_mode_set(const char *val, const struct kernel_param *kp)
{
	int mode = sysfs_match_string(xps_mode_names, val);

	if (mode < 0) {
		pr_err("invalid mode \"%s\": use mode=auto (the default), mode=batched, mode=sync or mode=noswap\n",
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
 * /sys/module/xen_ptswap/parameters/mode, which reads the mode in force:
 * "batched", "sync" or "noswap", never "auto" once loaded):
 *  - "auto" (default): "batched" where Xen advertises
 *    XENFEAT_mmu_pt_update_swap and a probe swap of one of the module's own
 *    entries passes, "noswap" otherwise (a stock Xen, or a Xen whose
 *    feature bit is not this project's sub-op).  The "installed" log line
 *    names the mode chosen and why; the first line of the debugfs stats
 *    file names it too.  A probe that cannot run at all (no memory) fails
 *    the load as for "batched";
 *  - "batched": a clear that the deferral rule allows (entry
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
 * Xen without XENFEAT_mmu_pt_update_swap only "auto" (as "noswap") and
 * "noswap" load; "batched" and "sync" fail with -EOPNOTSUPP and one log
 * line that names mode=noswap, and fail the same way when the probe swap
 * fails.  Once Xen has refused a page table update (xen_mmu_failures() is
 * not 0, see clear.c) only "sync" loads; "auto", "batched" and "noswap"
 * fail with -EIO and one log line, and a loaded module queues no clear
 * from then on.
 */
module_param_cb(mode, &xps_mode_ops, &xps_mode, 0444);
MODULE_PARM_DESC(mode,
		 "auto (default): batched if Xen offers MMU_PT_UPDATE_SWAP and the probe passes, else noswap; batched: queue clears the CPU cannot race with, swap the rest; sync: one MMU_PT_UPDATE_SWAP per PTE; noswap: queue what batched queues, native xchg for the rest (for a Xen without MMU_PT_UPDATE_SWAP)");

/**
 * DOC: runs
 *
 * Module parameter "runs", a bool, set at load time only (0444 in
 * /sys/module/xen_ptswap/parameters/runs, which reads what is in force,
 * Y or N).  Y (default): in modes "batched" and "noswap", a queued clear
 * goes through xen_queue_pte_clear_run() (the Linux series' coalescing
 * patch), which extends the previous queued clear's MMU_PT_CLEAR_RUN
 * request when the entry is the next one in the same page table, so that
 * Xen gets one request per run of cleared entries (test/xen-patch/ 0007,
 * XENFEAT_mmu_pt_clear_run) instead of one per entry.  It falls to N at
 * load, with the reason in the "installed" log line, where the kernel has
 * no xen_queue_pte_clear_run() or Xen does not advertise the feature.  N:
 * one MMU_NORMAL_PT_UPDATE request per queued clear (xen_queue_pte_clear()),
 * for A/B comparisons in one boot.  Mode "sync" queues nothing either way.
 * The value returned to the caller and the statistics are the same both
 * ways.
 */
module_param_named(runs, xps_runs, bool, 0444);
MODULE_PARM_DESC(runs,
		 "Y (default): queue clears as MMU_PT_CLEAR_RUN runs where the kernel and Xen have them (N where not); N: one request per queued clear");

/*
 * xps_choose_runs() - turn the runs off where the kernel or Xen lacks them
 *
 * Sets xps_runs to false, and xps_runs_why to the reason, where the kernel
 * has no xen_queue_pte_clear_run() or Xen does not advertise
 * XENFEAT_mmu_pt_clear_run.  The kernel asks Xen itself, at boot and on
 * every resume (the series' xen_probe_clear_run()), and
 * xen_queue_pte_clear_run() refuses where Xen does not offer the sub-op;
 * xps_ptep_get_and_clear() then queues one request per clear.  Never fails
 * the load: without runs a queued clear is one request, as before the run
 * sub-op existed.
 */
static void __init xps_choose_runs(void)
{
	if (!xps_runs)
		return;
	if (!XPS_HAVE_CLEAR_RUN)
		xps_runs_why = "the kernel has no xen_queue_pte_clear_run()";
	else if (!xps_xen_has_clear_run())
		xps_runs_why = "Xen does not offer MMU_PT_CLEAR_RUN";
	if (xps_runs_why)
		xps_runs = false;
}

/*
 * xps_choose_auto() - replace XPS_MODE_AUTO by the mode this Xen allows
 *
 * "batched" when Xen advertises XENFEAT_mmu_pt_update_swap and the probe
 * swap passes, "noswap" when it does not advertise it or the probe finds
 * that the feature bit is not this project's sub-op (-EPROTO).  Sets
 * xps_auto_why for the "installed" line.
 *
 * Return: 0; the probe's error when it could not run at all; -EIO when the
 * probe failed and Xen also refused the update that put its entry back
 * (each after one log line).
 */
static int __init xps_choose_auto(void)
{
	const char *why = "";
	int err;

	if (!xps_xen_has_swap()) {
		xps_mode = XPS_MODE_NOSWAP;
		xps_auto_why = "Xen does not offer MMU_PT_UPDATE_SWAP";
		return 0;
	}
	err = xps_probe_swap(&why);
	/* A probe whose restore Xen refused leaves nothing to trust. */
	if (err == -EPROTO && xps_mmu_failures()) {
		pr_err("mode=auto: the probe swap failed (%s) and Xen refused the update that restored its entry: not loading\n",
		       why);
		return -EIO;
	}
	if (err == -EPROTO) {
		pr_warn("mode=auto: Xen advertises XENFEAT_mmu_pt_update_swap, but a probe swap of one of our own entries failed (%s): this Xen's feature bit %d or mmu_update sub-op %d is not xen-ptswap's, using mode=noswap\n",
			why, XENFEAT_mmu_pt_update_swap, MMU_PT_UPDATE_SWAP);
		xps_mode = XPS_MODE_NOSWAP;
		xps_auto_why = "the probe swap failed";
		return 0;
	}
	if (err) {
		pr_err("cannot probe MMU_PT_UPDATE_SWAP: %s (error %d)\n",
		       why, err);
		return err;
	}
	xps_mode = XPS_MODE_BATCHED;
	xps_auto_why = "Xen offers MMU_PT_UPDATE_SWAP and the probe swap passed";
	return 0;
}

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
		pr_err("kernel has no pv_ops.mmu.ptep_get_and_clear hook with xen_register_ptep_get_and_clear(), xen_mmu_failures() and xen_queue_pte_clear(): boot a kernel built with xen-ptswap's Linux series for its version (make kernel-deb) and rebuild this module against it\n");
		return -EOPNOTSUPP;
	}
	/* Queue nothing on a Xen that has refused an update (clear.c). */
	refused = xps_mmu_failures();
	if (xps_mode != XPS_MODE_SYNC && refused) {
		pr_err("Xen refused %lu page table update(s) since boot (the kernel warned in xen_mc_flush() or __xen_set_pte()): mode=%s would queue PTE clears on a Xen that refuses updates; reboot, or load with mode=sync\n",
		       refused, xps_mode_names[xps_mode]);
		return -EIO;
	}
	if (xps_mode == XPS_MODE_AUTO)
		return xps_choose_auto();
	/* noswap never issues the sub-op: nothing of Xen's to check. */
	if (xps_mode == XPS_MODE_NOSWAP)
		return 0;
	if (!xps_xen_has_swap()) {
		pr_err("Xen does not offer MMU_PT_UPDATE_SWAP (XENFEAT_mmu_pt_update_swap clear): boot a Xen built with xen-ptswap's Xen series, or load with mode=noswap or mode=auto (deferred clears only, the rest trapped)\n");
		return -EOPNOTSUPP;
	}
	err = xps_probe_swap(&why);
	if (err == -EPROTO) {
		pr_err("Xen advertises XENFEAT_mmu_pt_update_swap, but a probe swap of one of our own entries failed (%s): this Xen's feature bit %d or mmu_update sub-op %d is not xen-ptswap's, not loading (mode=noswap or mode=auto load)\n",
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
	xps_choose_runs();

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

	if (xps_auto_why)
		pr_info("installed, mode=%s (auto: %s), runs=%s%s%s\n",
			xps_mode_name(), xps_auto_why, xps_runs ? "Y" : "N",
			xps_runs_why ? ": " : "", xps_runs_why ?: "");
	else
		pr_info("installed, mode=%s, runs=%s%s%s\n", xps_mode_name(),
			xps_runs ? "Y" : "N", xps_runs_why ? ": " : "",
			xps_runs_why ?: "");
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
