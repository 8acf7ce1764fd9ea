/* SPDX-License-Identifier: MIT */
/*
 * xen_ptswap_abi.h - the ABI numbers of MMU_PT_UPDATE_SWAP and
 * MMU_PT_CLEAR_RUN, in one place.
 *
 * These must agree with xen/include/public/xen.h and
 * xen/include/public/features.h as patched by test/xen-patch/; the lab's
 * test "abi-header-matches-xen" compares them.  Used by the module
 * (module/) and by the tests and tools, in kernel and in user space.
 */
#ifndef XEN_PTSWAP_ABI_H
#define XEN_PTSWAP_ABI_H

/*
 * MMU_PT_UPDATE_SWAP: sub-op 4 of HYPERVISOR_mmu_update, in ptr[2:0].
 * ptr: machine address of an L1 entry; val: the new entry.  Xen validates
 * val as for MMU_NORMAL_PT_UPDATE, exchanges the entry atomically and
 * writes the entry it replaced back into the request's val.  Xen does no
 * TLB flush.  Refused, nothing changed, in the order Xen checks:
 * -EPERM if the page-table owner (foreigndom[31:16]) is another domain;
 * -EINVAL if pdone is NULL; -EFAULT if Xen cannot write pdone (checked
 * once per call) or the request's val; -EINVAL if ptr is not in an L1
 * page table (L2-L4, or a frame that is not a page table: exchange that
 * natively).  val, and pdone last, are written after the exchange
 * through the caller's mapping as it is then: if writing val fails then,
 * the call fails with -EFAULT and pdone counts the request (exchanged, old
 * value lost).  Keep the request and pdone out of the entries swapped.
 */
#ifndef MMU_PT_UPDATE_SWAP
#define MMU_PT_UPDATE_SWAP		4
#endif

/*
 * XENFEAT_mmu_pt_update_swap: XENVER_get_features bit, PV guests only.
 * Not allocated upstream: the module's load-time probe swap guards
 * against a Xen that gives the bit another meaning.
 */
#ifndef XENFEAT_mmu_pt_update_swap
#define XENFEAT_mmu_pt_update_swap	21
#endif

/*
 * MMU_PT_CLEAR_RUN: sub-op 5 of HYPERVISOR_mmu_update (test/xen-patch/
 * 0007).  ptr: machine address of the first of a run of L1 entries; val:
 * the run's length, 1 to the entries left in ptr's page.  Xen clears each
 * entry as an MMU_NORMAL_PT_UPDATE writing 0 would, in order, and returns
 * no old value.  Refused, nothing changed: -EINVAL for a length of 0 or
 * one that would cross the page, the XSM errors of clearing an entry,
 * -EFAULT if Xen cannot write the request (checked by writing it back
 * unchanged), -EINVAL if ptr is not in an L1 page table.  A run that
 * stops after clearing some entries (preempted, or the frame stopped being
 * an L1 table: -EINVAL) has its request written back first: ptr advanced
 * past the entries cleared, val the count left; a continuation resumes it,
 * and pdone counts a request only once its whole run is done.
 */
#ifndef MMU_PT_CLEAR_RUN
#define MMU_PT_CLEAR_RUN		5
#endif

/* XENFEAT_mmu_pt_clear_run: XENVER_get_features bit, PV guests only. */
#ifndef XENFEAT_mmu_pt_clear_run
#define XENFEAT_mmu_pt_clear_run	22
#endif

#endif /* XEN_PTSWAP_ABI_H */
