# SPDX-License-Identifier: GPL-2.0
#
# test/ktest/include/xps_ktest.mk - included by the Kbuild of each test
# module of test/ktest/ that enters lazy MMU mode (xps_ktest_lazy.h):
# finds that header, and tells it which interface this tree has.  Linux
# 7.3 (after 6.12's generic rework) counts lazy MMU mode per task
# (lazy_mmu_mode_enable() in include/linux/pgtable.h); before,
# arch_enter_lazy_mmu_mode() was the interface.
# XPS_KTEST_INCLUDE: this folder (the lab and tools/req-cost pass it, since
# they build a copy of the module's folder; default: beside it).
ccflags-y += -I$(XPS_KTEST_INCLUDE)
ifneq ($(shell grep -qs 'static inline void lazy_mmu_mode_enable' $(srctree)/include/linux/pgtable.h && echo y),)
ccflags-y += -DXPS_HAVE_LAZY_MMU_MODE_ENABLE=1
endif
