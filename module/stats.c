// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - the per-CPU counters of xen_ptswap and their debugfs file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "stats.h"
#include "xen_ptswap.h"

DEFINE_PER_CPU(struct xps_stats, xps_stats);

static const char * const xps_stat_names[XPS_NR_STATS] = {
	[XPS_STAT_CALLS]	= "calls",
	[XPS_STAT_UNPINNED]	= "unpinned",
	[XPS_STAT_NONE]		= "none",
	[XPS_STAT_DEFERRED]	= "deferred",
	[XPS_STAT_SWAPPED]	= "swapped",
	[XPS_STAT_HCALL_ERRORS]	= "hcall_errors",
	[XPS_STAT_FALLBACKS]	= "fallbacks",
	[XPS_STAT_LOST_OLD]	= "lost_old",
	[XPS_STAT_NATIVE]	= "native",
	[XPS_STAT_READBACK]	= "readback",
	[XPS_STAT_SYNC_AFTER_FAILURE] = "sync_after_failure",
};

static struct dentry *xps_debugfs_dir;

/**
 * xps_stat_name() - a counter's name, as the stats file prints it
 * @stat: the counter, less than %XPS_NR_STATS
 *
 * Used by the trace event (xps_trace.h), whose "kind" field names the
 * class a call ended in.
 *
 * Return: the name ("calls", "deferred", ...), a static string; "?" for
 * a value out of range.
 */
const char *xps_stat_name(enum xps_stat stat)
{
	return (unsigned int)stat < XPS_NR_STATS ? xps_stat_names[stat] : "?";
}

static int xps_stats_show(struct seq_file *m, void *unused)
{
	int stat, cpu;

	seq_printf(m, "mode %s\n", xps_mode_name());
	for (stat = 0; stat < XPS_NR_STATS; stat++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += READ_ONCE(per_cpu(xps_stats, cpu).count[stat]);
		seq_printf(m, "%s %llu\n", xps_stat_names[stat], sum);
	}
	seq_printf(m, "mmu_failures %lu\n", xps_mmu_failures());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xps_stats);

/**
 * DOC: /sys/kernel/debug/xen_ptswap/stats
 *
 * Read-only text.  The first line is "mode <name>", the mode in force
 * (batched, sync or noswap: what mode=auto chose, see main.c).  Then one
 * "<name> <count>" line per counter, each the sum
 * over all CPUs of the events since the module was loaded (counters start
 * at zero at every load): calls (calls of the module's
 * ptep_get_and_clear), unpinned (native xchg, page table not pinned),
 * none (entry already none), deferred (clear queued in the lazy MMU
 * multicall with xen_queue_pte_clear()),
 * swapped (synchronous MMU_PT_UPDATE_SWAP), hcall_errors (failed
 * MMU_PT_UPDATE_SWAP), fallbacks (native xchg after such a failure that
 * changed nothing), lost_old (such a failure after Xen had cleared the
 * entry, counted in swapped too: see xps_hypercall_swap()) and native
 * (native xchg on a pinned page table in mode noswap, trapped and
 * emulated by Xen), and readback (calls for an entry whose clear this
 * CPU had queued and not yet issued, whose read the module therefore
 * repeated after issuing the queue: an event within a call, expected to
 * stay 0), sync_after_failure (calls whose clear the deferral rule allowed
 * to queue, done at once because Xen had refused a page table update: an
 * event within a call, 0 unless one was refused).  The last line is not
 * the module's but the kernel's, since boot: mmu_failures, the
 * page table updates Xen refused (failed multicall batches and failed
 * immediate set_pte()s: xen_mmu_failures(), test/linux-patch/ 0003),
 * which is 0 unless something went badly wrong (while it is not 0 the
 * module queues no clear; a refused multicall that carried a queued clear
 * panics the kernel instead, see xen_queue_pte_clear()).  At rest
 * calls = unpinned + none + deferred + swapped + fallbacks + native and
 * hcall_errors = fallbacks + lost_old.
 *
 * Like every debugfs user, the module loads even if debugfs is missing;
 * the counters then still count but cannot be read.
 */

/**
 * xps_stats_init() - create /sys/kernel/debug/xen_ptswap/stats
 *
 * Errors of debugfs are ignored on purpose, as debugfs users should: see
 * the DOC section above.
 */
void xps_stats_init(void)
{
	xps_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("stats", 0444, xps_debugfs_dir, NULL,
			    &xps_stats_fops);
}

/**
 * xps_stats_dir() - the module's debugfs directory
 *
 * Return: /sys/kernel/debug/xen_ptswap as xps_stats_init() created it (an
 * error pointer if debugfs failed, which debugfs calls accept).
 */
struct dentry *xps_stats_dir(void)
{
	return xps_debugfs_dir;
}

/**
 * xps_stats_exit() - remove the debugfs directory
 *
 * Removes everything in it (the stats file, fail_swap/) and waits for
 * their readers to finish (debugfs_remove()).
 */
void xps_stats_exit(void)
{
	debugfs_remove(xps_debugfs_dir);
}
