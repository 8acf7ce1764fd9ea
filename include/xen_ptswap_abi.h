/* SPDX-License-Identifier: MIT */
/*
 * xen_ptswap_abi.h - the ABI numbers of MMU_PT_UPDATE_SWAP, in one place.
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
 * writes the entry it replaced back into the request's val.  Non-L1
 * targets fail with -EINVAL.
 */
#ifndef MMU_PT_UPDATE_SWAP
#define MMU_PT_UPDATE_SWAP		4
#endif

/* XENFEAT_mmu_pt_update_swap: XENVER_get_features bit, PV guests only. */
#ifndef XENFEAT_mmu_pt_update_swap
#define XENFEAT_mmu_pt_update_swap	22
#endif

#endif /* XEN_PTSWAP_ABI_H */
