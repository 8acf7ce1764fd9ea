// SPDX-License-Identifier: GPL-2.0
/*
 * hook.c - install and restore pv_ops.mmu.ptep_get_and_clear.
 *
 * test/linux-patch/ adds the slot and makes ptep_get_and_clear() load it
 * at every call on Xen PV (it is never patched into a direct call), so
 * writing the pointer takes effect at once and putting the old one back
 * undoes it.  Kbuild defines XEN_PTSWAP_HAVE_HOOK when the kernel tree
 * has the slot; without it this file only has stubs and main.c refuses
 * to load.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <asm/paravirt.h>

#include "xen_ptswap.h"

#ifdef XEN_PTSWAP_HAVE_HOOK

typedef pte_t (*xps_clear_fn)(struct mm_struct *mm, unsigned long addr,
			      pte_t *ptep);

/* The op found in the slot at load time, put back at unload. */
static xps_clear_fn xps_saved_op;

/**
 * xps_hook_install() - point pv_ops.mmu.ptep_get_and_clear at this module
 *
 * Every later ptep_get_and_clear() on any CPU calls
 * xps_ptep_get_and_clear(); a call that already loaded the old pointer
 * finishes with the old op, which is just as correct.
 *
 * Return: 0 on success; -ENOENT if the slot is empty (a kernel bug);
 * -EBUSY if the slot changed while it was being replaced.  On error
 * nothing is installed.
 */
int xps_hook_install(void)
{
	xps_clear_fn cur = READ_ONCE(pv_ops.mmu.ptep_get_and_clear);

	if (!cur)
		return -ENOENT;
	xps_saved_op = cur;
	if (cmpxchg(&pv_ops.mmu.ptep_get_and_clear, cur,
		    xps_ptep_get_and_clear) != cur)
		return -EBUSY;
	return 0;
}

/**
 * xps_hook_restore() - put the saved op back and wait for our callers
 *
 * The old op goes back only if the slot still points at this module; if
 * something else replaced it since, the slot is left alone and a warning
 * says so.  Then wait until no CPU can still be executing module text
 * through a pointer it loaded earlier:
 *  - callers that hold the page table lock (zap_pte_range() and the
 *    other mm paths) run with preemption disabled, so synchronize_rcu()
 *    waits for them;
 *  - a few callers do not hold a spinlock (vunmap_pte_range() on
 *    init_mm) and may be preempted on a preemptible kernel between
 *    loading the pointer and returning from our function: for those,
 *    synchronize_rcu_tasks() waits until every task has voluntarily
 *    switched out or gone to user space.  Without CONFIG_PREEMPTION (the
 *    lab's voluntary-preemption kernel) no task can be switched out in
 *    that window, which holds no cond_resched() or sleep, so the grace
 *    period of synchronize_rcu() covers them too.  main.c refuses to
 *    load on a preemptible kernel without CONFIG_TASKS_RCU (Debian's
 *    kernels have it).
 *
 * No clear is lost: a deferred clear was handed to set_pte() and sits in
 * the kernel's per-CPU multicall buffer, not in this module, and is
 * issued when that CPU leaves lazy MMU mode whether or not the module is
 * still loaded.
 *
 * Context: process context, may sleep.
 */
void xps_hook_restore(void)
{
	xps_clear_fn prev;

	prev = cmpxchg(&pv_ops.mmu.ptep_get_and_clear,
		       xps_ptep_get_and_clear, xps_saved_op);
	if (prev != xps_ptep_get_and_clear)
		pr_warn("pv_ops.mmu.ptep_get_and_clear was changed to %ps after this module installed it; left as is\n",
			prev);

	synchronize_rcu();
#ifdef CONFIG_TASKS_RCU
	synchronize_rcu_tasks();
#endif
}

#else /* !XEN_PTSWAP_HAVE_HOOK */

int xps_hook_install(void)
{
	return -EOPNOTSUPP;
}

void xps_hook_restore(void)
{
}

#endif /* XEN_PTSWAP_HAVE_HOOK */
