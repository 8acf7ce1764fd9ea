/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xps_ktest_lazy.h - enter and leave lazy MMU mode, for the test modules
 * of test/ktest/.
 *
 * In Linux 7.3 (the generic rework after 6.12, include/linux/pgtable.h)
 * lazy MMU mode is counted per task by lazy_mmu_mode_enable()/disable(),
 * and Xen PV queues only while that count is raised
 * (is_lazy_mmu_mode_active()); arch_enter_lazy_mmu_mode() alone no longer
 * turns it on.  Before, it was the interface.  xps_ktest.mk, which the
 * module's Kbuild includes, tells which this tree has
 * (XPS_HAVE_LAZY_MMU_MODE_ENABLE).
 */
#ifndef XPS_KTEST_LAZY_H
#define XPS_KTEST_LAZY_H

#include <linux/pgtable.h>

/* Enter lazy MMU mode the way this kernel's callers do. */
static inline void xps_lazy_enter(void)
{
#ifdef XPS_HAVE_LAZY_MMU_MODE_ENABLE
	lazy_mmu_mode_enable();
#else
	arch_enter_lazy_mmu_mode();
#endif
}

/* Leave it: on Xen PV, issues what was queued. */
static inline void xps_lazy_leave(void)
{
#ifdef XPS_HAVE_LAZY_MMU_MODE_ENABLE
	lazy_mmu_mode_disable();
#else
	arch_leave_lazy_mmu_mode();
#endif
}

#endif /* XPS_KTEST_LAZY_H */
