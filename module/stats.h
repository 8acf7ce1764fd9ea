/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.h - per-CPU event counters of the xen_ptswap module.
 *
 * Counting is one this_cpu_inc(): no lock, no atomic, no shared cache
 * line on the hot path.  Readers sum the CPUs (stats.c), so a read taken
 * while PTEs are being cleared may be a few events apart between classes.
 */
#ifndef XEN_PTSWAP_STATS_H
#define XEN_PTSWAP_STATS_H

#include <linux/percpu.h>
#include <linux/types.h>

/**
 * enum xps_stat - what the counters count
 * @XPS_STAT_CALLS: calls of xps_ptep_get_and_clear()
 * @XPS_STAT_UNPINNED: native xchg on a page table that is not pinned
 * @XPS_STAT_NONE: entry already none, nothing written
 * @XPS_STAT_DEFERRED: clear queued in the lazy MMU multicall
 *	(xps_queue_clear())
 * @XPS_STAT_SWAPPED: synchronous MMU_PT_UPDATE_SWAP that succeeded
 * @XPS_STAT_HCALL_ERRORS: MMU_PT_UPDATE_SWAP that failed
 * @XPS_STAT_FALLBACKS: native xchg after a failed MMU_PT_UPDATE_SWAP
 *	that changed nothing
 * @XPS_STAT_LOST_OLD: failed MMU_PT_UPDATE_SWAP that cleared the entry but
 *	lost the old value (the sub-op's write-back edge; also in swapped)
 * @XPS_STAT_NATIVE: native xchg on a pinned page table by choice (mode
 *	noswap: an entry the deferral rule does not allow to queue)
 * @XPS_STAT_READBACK: a call for an entry whose clear this CPU had queued
 *	and not yet issued: the queue was issued and the entry read again
 *	(an event within a call, not a class of its own)
 * @XPS_STAT_SYNC_AFTER_FAILURE: a call whose clear the deferral rule
 *	allowed to queue, done at once instead because Xen had refused a
 *	page table update (xen_mmu_failures(); an event within a call,
 *	ending in swapped, fallbacks or native)
 * @XPS_NR_STATS: number of counters
 *
 * Every call ends in exactly one of unpinned, none, deferred, swapped,
 * fallbacks and native, so at rest calls is their sum; hcall_errors
 * equals fallbacks plus lost_old.
 */
enum xps_stat {
	XPS_STAT_CALLS,
	XPS_STAT_UNPINNED,
	XPS_STAT_NONE,
	XPS_STAT_DEFERRED,
	XPS_STAT_SWAPPED,
	XPS_STAT_HCALL_ERRORS,
	XPS_STAT_FALLBACKS,
	XPS_STAT_LOST_OLD,
	XPS_STAT_NATIVE,
	XPS_STAT_READBACK,
	XPS_STAT_SYNC_AFTER_FAILURE,
	XPS_NR_STATS,
};

/**
 * struct xps_stats - one CPU's counters
 * @count: events of each &enum xps_stat class since the module was loaded
 */
struct xps_stats {
	u64 count[XPS_NR_STATS];
};

DECLARE_PER_CPU(struct xps_stats, xps_stats);

/**
 * xps_count() - count one event on this CPU
 * @stat: the class of event
 *
 * Safe with preemption enabled: this_cpu_inc() is one instruction on x86.
 */
static inline void xps_count(enum xps_stat stat)
{
	this_cpu_inc(xps_stats.count[stat]);
}

struct dentry;

const char *xps_stat_name(enum xps_stat stat);
void xps_stats_init(void);
struct dentry *xps_stats_dir(void);
void xps_stats_exit(void);

#endif /* XEN_PTSWAP_STATS_H */
