// SPDX-License-Identifier: MIT
/*
 * xen_pt_owner - MMU_PT_UPDATE_SWAP on another domain's page tables, from
 * Dom0 against a running PV DomU (test/xen-patch/ 0003: a swap whose
 * page-table owner, foreigndom[31:16], is not the caller fails with
 * -EPERM and changes nothing; the returned old value would otherwise be a
 * read primitive on that domain's frames under FLASK).
 *
 * Finds a live L1 entry of the guest: vCPU 0's CR3 (xc_vcpu_getcontext),
 * then the guest's own four-level walk of vCPU 0's instruction pointer
 * (kernel text, 4 KiB pages: PV has no superpages), each table mapped
 * read-only with xenforeignmemory_map() (a PV guest's tables hold machine
 * frame numbers).  The entry's machine address is the L1 frame's address
 * plus eight times its index.  Then, through libxencall's mmu_update with
 * foreigndom = ((DOMID + 1) << 16) | DOMID (page-table owner and page
 * owner the guest):
 *
 * Checks:
 *  pt-owner-swap-eperm    MMU_PT_UPDATE_SWAP of that entry with new value
 *                         0 fails with EPERM, done 0, the request's val
 *                         untouched, the entry unchanged (A/D aside)
 *  pt-owner-normal-update MMU_NORMAL_PT_UPDATE of the same entry with its
 *                         own value succeeds as before the series (done
 *                         1) and the entry is unchanged (A/D aside)
 * Usage: xen_pt_owner DOMID (root in a Xen PV Dom0).  Exit status 0 if
 * every check passed.  Needs libxenctrl, libxenforeignmemory, libxencall.
 */
#include "xps_check.h"

#include <xencall.h>
#include <xenctrl.h>
#include <xenforeignmemory.h>
#include <xen/xen.h>

#define PTE_MFN_MASK	0x000ffffffffff000ULL
#define PTE_AD		0x60ULL		/* _PAGE_ACCESSED | _PAGE_DIRTY */
#define PTE_PRESENT	0x1ULL
#define PTE_PSE		0x80ULL
#define SUBOP_SWAP	4		/* MMU_PT_UPDATE_SWAP, test/xen-patch/ */

static xenforeignmemory_handle *fm;
static uint32_t domid;

/* Entry @idx of the guest's table in machine frame @mfn, or ~0 on error. */
static uint64_t read_entry(struct xps_check *c, uint64_t mfn, unsigned int idx)
{
	xen_pfn_t pfn = mfn;
	int err = 0;
	uint64_t *t, e;

	t = xenforeignmemory_map(fm, domid, PROT_READ, 1, &pfn, &err);
	if (!t || err) {
		xps_bad(c, "cannot map the guest's table at MFN %#llx: %s",
			(unsigned long long)mfn, strerror(err ? -err : errno));
		if (t)
			xenforeignmemory_unmap(fm, t, 1);
		return ~0ULL;
	}
	e = __atomic_load_n(&t[idx], __ATOMIC_RELAXED);
	xenforeignmemory_unmap(fm, t, 1);
	return e;
}

/* One mmu_update request through libxencall; sets *@done and *@val. */
static int mmu_update(xencall_handle *xcall, uint64_t ptr, uint64_t *val,
		      unsigned int *done)
{
	struct mmu_update *req = xencall_alloc_buffer(xcall, sizeof(*req));
	unsigned int *pdone = xencall_alloc_buffer(xcall, sizeof(*pdone));
	int rc;

	if (!req || !pdone)
		return -ENOMEM;
	req->ptr = ptr;
	req->val = *val;
	*pdone = 0;
	rc = xencall4(xcall, __HYPERVISOR_mmu_update, (uint64_t)(uintptr_t)req,
		      1, (uint64_t)(uintptr_t)pdone,
		      ((domid + 1) << 16) | domid);
	if (rc < 0)
		rc = -errno;
	*val = req->val;
	*done = *pdone;
	xencall_free_buffer(xcall, req);
	xencall_free_buffer(xcall, pdone);
	return rc;
}

int main(int argc, char **argv)
{
	struct xps_check c;
	vcpu_guest_context_any_t ctx;
	xencall_handle *xcall;
	xc_interface *xch;
	uint64_t mfn, e = 0, ma = 0, va, val, now;
	unsigned int done, level;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DOMID\n", argv[0]);
		return 2;
	}
	domid = strtoul(argv[1], NULL, 0);

	xps_begin(&c, "pt-owner-swap-eperm");
	xch = xc_interface_open(NULL, NULL, 0);
	fm = xenforeignmemory_open(NULL, 0);
	xcall = xencall_open(NULL, 0);
	if (!xch || !fm || !xcall)
		XPS_DIE(&c, "cannot run: opening libxenctrl, -foreignmemory or -call failed");
	if (xc_vcpu_getcontext(xch, domid, 0, &ctx))
		XPS_DIE(&c, "cannot run because xc_vcpu_getcontext(%u, 0) failed: %s",
			domid, strerror(errno));
	mfn = xen_cr3_to_pfn_x86_64(ctx.x64.ctrlreg[3]);
	va = ctx.x64.user_regs.rip;
	for (level = 4; level >= 1; level--) {
		unsigned int idx = (va >> (12 + 9 * (level - 1))) & 511;

		e = read_entry(&c, mfn, idx);
		if (e == ~0ULL)
			XPS_DIE(&c, "cannot run: the walk of %#llx failed at level %u",
				(unsigned long long)va, level);
		if (!(e & PTE_PRESENT) || (level > 1 && level < 4 && (e & PTE_PSE)))
			XPS_DIE(&c, "cannot run: L%u entry for %#llx is %#llx (absent or huge)",
				level, (unsigned long long)va, (unsigned long long)e);
		if (level == 1)
			ma = (mfn << 12) | (idx * 8);
		mfn = (e & PTE_MFN_MASK) >> 12;
	}
	printf("# xen_pt_owner: domain %u, rip %#llx, L1 entry at machine address %#llx is %#llx\n",
	       domid, (unsigned long long)va, (unsigned long long)ma,
	       (unsigned long long)e);

	val = 0;
	rc = mmu_update(xcall, ma | SUBOP_SWAP, &val, &done);
	now = read_entry(&c, ma >> 12, (ma & 0xfff) / 8);
	if (rc != -EPERM || done != 0)
		xps_bad(&c, "swap as the guest's owner: %d (%s), done %u; want -EPERM, done 0",
			rc, strerror(-rc), done);
	if (val != 0)
		xps_bad(&c, "the request's val became %#llx; want it untouched (0)",
			(unsigned long long)val);
	if ((now ^ e) & ~PTE_AD)
		xps_bad(&c, "the guest's entry changed from %#llx to %#llx",
			(unsigned long long)e, (unsigned long long)now);
	if (rc == 0 && done == 1 && val && !((val ^ e) & ~PTE_AD)) {
		/* The swap happened (an unfixed Xen): put the entry back. */
		uint64_t back = val;

		mmu_update(xcall, ma, &back, &done);
	}
	xps_end(&c);

	xps_begin(&c, "pt-owner-normal-update");
	val = e;
	rc = mmu_update(xcall, ma, &val, &done);
	now = read_entry(&c, ma >> 12, (ma & 0xfff) / 8);
	if (rc != 0 || done != 1)
		xps_bad(&c, "normal update of the guest's entry: %d (%s), done %u; want 0, done 1",
			rc, strerror(-rc), done);
	if ((now ^ e) & ~PTE_AD)
		xps_bad(&c, "the guest's entry changed from %#llx to %#llx",
			(unsigned long long)e, (unsigned long long)now);
	xps_end(&c);

	xencall_close(xcall);
	xenforeignmemory_close(fm);
	xc_interface_close(xch);
	return xps_exit_status();
}
