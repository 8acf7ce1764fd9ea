/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xps_trace.h - the xen_ptswap module's trace event, in the style of
 * trace_xen_mmu_*() (include/trace/events/xen.h).
 *
 * tools/xen_ptswap.bt counts clears from this event, not from kprobes on
 * the module's functions: the event fires where the counter of the
 * call's class is counted, so a change inside the module cannot make the
 * script count nothing without the statistics file counting nothing too.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM xen_ptswap

#if !defined(XEN_PTSWAP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define XEN_PTSWAP_TRACE_H

#include <linux/tracepoint.h>
#include <asm/pgtable_types.h>

#include "stats.h"

/* The longest class name, "fallbacks" (10 bytes with its NUL), fits. */
#define XPS_TRACE_KIND_LEN 12

/**
 * xen_ptswap_clear - one call of the module's ptep_get_and_clear ended
 * @mm: the address space of the entry (may be &init_mm)
 * @addr: the user (or kernel) virtual address the entry maps
 * @ptep: the entry
 * @pte: the entry's old value the call returned, raw (an MFN; the
 *	printed "pteval" is translated to a PFN when the trace is read, as
 *	trace_xen_mmu_*() do)
 * @how: the class the call was counted in, a counter of the stats file
 *	(stats.h, enum xps_stat): %XPS_STAT_UNPINNED, %XPS_STAT_NONE,
 *	%XPS_STAT_DEFERRED (the entry is still present when the event fires:
 *	its clear is queued), %XPS_STAT_SWAPPED, %XPS_STAT_FALLBACKS or
 *	%XPS_STAT_NATIVE.  Its name is the "kind" field.
 * @err: the MMU_PT_UPDATE_SWAP error for a failed swap (class fallbacks;
 *	class swapped with a non-zero @err is a swap that cleared the entry
 *	but lost its old value, counted in lost_old too), else 0
 *
 * One event per call, after its counters were counted.  The fields have
 * plain C types (no pte_t, pteval_t) so that bpftrace can parse the
 * event's format on a kernel without BTF.
 */
TRACE_EVENT(xen_ptswap_clear,
	    TP_PROTO(struct mm_struct *mm, unsigned long addr, pte_t *ptep,
		     pte_t pte, enum xps_stat how, int err),
	    TP_ARGS(mm, addr, ptep, pte, how, err),
	    TP_STRUCT__entry(__field(const void *, mm)
			     __field(unsigned long, addr)
			     __field(const void *, ptep)
			     __field(unsigned long long, pteval)
			     __field(int, err)
			     __array(char, kind, XPS_TRACE_KIND_LEN)),
	    TP_fast_assign(__entry->mm = mm;
			   __entry->addr = addr;
			   __entry->ptep = ptep;
			   __entry->pteval = native_pte_val(pte);
			   __entry->err = err;
			   strscpy(__entry->kind, xps_stat_name(how),
				   XPS_TRACE_KIND_LEN)),
	    TP_printk("mm %p addr %lx ptep %p pteval %016llx (raw %016llx) kind %s err %d",
		      __entry->mm, __entry->addr, __entry->ptep,
		      (unsigned long long)pte_val(native_make_pte(__entry->pteval)),
		      __entry->pteval, __entry->kind, __entry->err)
);

#endif /* XEN_PTSWAP_TRACE_H */

/* This header is not in include/trace/events/: look for it here. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE xps_trace
#include <trace/define_trace.h>
