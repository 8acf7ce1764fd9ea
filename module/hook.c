// SPDX-License-Identifier: GPL-2.0
/*
 * hook.c - take and give back pv_ops.mmu.ptep_get_and_clear.
 *
 * test/linux-patch/ adds the slot, makes ptep_get_and_clear() load it at
 * every call on Xen PV (it is never patched into a direct call), and
 * gives it one owner at a time through xen_register_ptep_get_and_clear()
 * and xen_unregister_ptep_get_and_clear() (arch/x86/xen/mmu_pv.c).  This
 * file only calls that interface: the kernel refuses a second owner,
 * waits for the op's callers at unregistration, and puts the default back
 * if an owner goes away still registered.  Kbuild defines
 * XEN_PTSWAP_HAVE_HOOK when the kernel tree has the interface; without
 * it this file only has stubs and main.c refuses to load.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>
#include <linux/module.h>

#include "xen_ptswap.h"

#ifdef XEN_PTSWAP_HAVE_HOOK

#include <asm/xen/ptep.h>

/**
 * xps_hook_install() - make xps_ptep_get_and_clear() the op of the slot
 *
 * Every later ptep_get_and_clear() on any CPU calls
 * xps_ptep_get_and_clear(); a call that already loaded the default
 * finishes with it, which is just as correct.
 *
 * Context: process context (module init), may sleep.
 * Return: 0 on success; -EBUSY if another module owns the slot; -ENODEV
 * if this is not a Xen PV guest; another negative errno of
 * xen_register_ptep_get_and_clear().  On error nothing is installed.
 */
int xps_hook_install(void)
{
	return xen_register_ptep_get_and_clear(xps_ptep_get_and_clear,
					       THIS_MODULE);
}

/**
 * xps_hook_restore() - give the slot back
 *
 * xen_unregister_ptep_get_and_clear() puts the kernel's default op back
 * and returns once no CPU can still be executing this module's op (an
 * RCU and an RCU-tasks grace period), so module text can go after it.
 * No clear is lost: a deferred clear was handed to xen_queue_pte_clear()
 * and sits in the kernel's per-CPU multicall buffer,
 * not in this module, and is issued when that CPU leaves lazy MMU mode.
 *
 * Context: process context (module exit), may sleep.
 */
void xps_hook_restore(void)
{
	if (xen_unregister_ptep_get_and_clear(xps_ptep_get_and_clear))
		pr_warn("pv_ops.mmu.ptep_get_and_clear was not ours at unload; left as it is\n");
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
