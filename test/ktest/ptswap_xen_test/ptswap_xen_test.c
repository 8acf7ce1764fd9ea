// SPDX-License-Identifier: GPL-2.0
/*
 * Checks, from a Xen PV Dom0, of the hypervisor's MMU_PT_UPDATE_SWAP and
 * MMU_PT_CLEAR_RUN mmu_update sub-ops and of their feature bits,
 * XENFEAT_mmu_pt_update_swap and XENFEAT_mmu_pt_clear_run.
 *
 * Load with expect=patched (Xen carries test/xen-patch/) or expect=stock
 * (Xen without it).  Every check runs at load time, and its result, one
 * "PASS: <check>" or "FAIL: <check>: <reason>" line, is kept in
 * /sys/kernel/debug/ptswap_xen_test/results (and logged).  The checks
 * swap only L1 entries of vmap areas this module creates, and put every
 * entry back before the area is unmapped.
 *
 * Values are machine values, as Xen stores them: an entry is read raw
 * (ptep->pte) and new entries are built from one Xen already accepted,
 * so no check depends on how Xen adjusts the flags of a guest entry.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pgtable.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <asm/xen/hypercall.h>
#include <asm/xen/page.h>
#include <xen/features.h>
#include <xen/interface/memory.h>
#include <xen/interface/version.h>
#include <xen/xen.h>

#include "xen_ptswap_abi.h"

static char *expect = "";
module_param(expect, charp, 0444);
MODULE_PARM_DESC(expect, "what Xen runs: \"patched\" (with MMU_PT_UPDATE_SWAP) or \"stock\"");

static unsigned int batch = 102400;
module_param(batch, uint, 0444);
MODULE_PARM_DESC(batch, "requests in the preemption check, at least 100000 (default 102400)");

static unsigned int race_swaps = 20000;
module_param(race_swaps, uint, 0444);
MODULE_PARM_DESC(race_swaps, "swaps while another vCPU sets A/D, at least 1 (default 20000)");

#define MIN_BATCH	100000
#define NR_SLOTS	16	/* entries most checks swap */
#define BATCH_SLOTS	512	/* entries the preemption check cycles over */
#define PREEMPT_TRIES	3	/* batch sizes tried until Xen preempts one */
#define HANDSHAKES	16	/* A/D round trips with the other vCPU */
#define PTE_AD		((u64)(_PAGE_ACCESSED | _PAGE_DIRTY))
#define PTE_RESERVED_BIT 51	/* a physical-address bit, reserved if MAXPHYADDR < 52 */
#define RESULTS_SIZE	8192
#define WHY_SIZE	200

static char *results;
static size_t results_len;
static struct dentry *debug_dir;
static char reason[WHY_SIZE];	/* why the last check failed */

/* Pages the test entries map; never page tables, owned by Dom0. */
static struct page *data_page[2];
static unsigned long data_mfn[2];

/**
 * struct slots - L1 entries of a vmap area, for the checks to swap
 * @va: start of the area, one page per entry
 * @n: number of entries
 * @ptep: each entry, as Linux maps it
 * @maddr: machine address of each entry, what mmu_update's ptr takes
 * @orig: each entry as Xen stored it when the area was mapped
 * @pages: the page each entry maps at setup
 */
struct slots {
	void *va;
	unsigned int n;
	pte_t **ptep;
	u64 *maddr;
	u64 *orig;
	struct page **pages;
};

/* The machine frame number of the L1 table holding entry @i of @s. */
#define L1_FRAME(s, i)	((s)->maddr[i] >> PAGE_SHIFT)

static void record(bool ok, const char *check, const char *why)
{
	int len;

	if (ok) {
		pr_info("PASS: %s\n", check);
		len = scnprintf(results + results_len, RESULTS_SIZE - results_len,
				"PASS: %s\n", check);
	} else {
		pr_warn("FAIL: %s: %s\n", check, why);
		len = scnprintf(results + results_len, RESULTS_SIZE - results_len,
				"FAIL: %s: %s\n", check, why);
	}
	results_len += len;
}

/* Fail the current check with a reason, from a function returning bool. */
#define FAIL(why, ...) ({ snprintf(why, WHY_SIZE, __VA_ARGS__); false; })

static u64 entry_read(const struct slots *s, unsigned int i)
{
	return READ_ONCE(s->ptep[i]->pte);
}

/* @e with its frame replaced by @mfn, flags untouched. */
static u64 entry_with_mfn(u64 e, unsigned long mfn)
{
	return (e & ~PTE_PFN_MASK) | ((u64)mfn << PAGE_SHIFT);
}

static unsigned long page_mfn(struct page *page)
{
	return pfn_to_mfn(page_to_pfn(page));
}

static bool same_but_ad(u64 a, u64 b);

/* The same entry pointing at the other data page. */
static u64 entry_flipped(u64 e)
{
	unsigned long mfn = (e & PTE_PFN_MASK) >> PAGE_SHIFT;

	return entry_with_mfn(e, mfn == data_mfn[0] ? data_mfn[1] : data_mfn[0]);
}

static int mmu_update(struct mmu_update *req, unsigned int count, int *done)
{
	return HYPERVISOR_mmu_update(req, count, done, DOMID_SELF);
}

static void swap_req(struct mmu_update *req, u64 maddr, u64 val)
{
	req->ptr = maddr | MMU_PT_UPDATE_SWAP;
	req->val = val;
}

/* One MMU_PT_UPDATE_SWAP; *val in: the new entry, out: what Xen wrote back. */
static int swap_one(u64 maddr, u64 *val, int *done)
{
	struct mmu_update req;
	int rc;

	swap_req(&req, maddr, *val);
	*done = -1;
	rc = mmu_update(&req, 1, done);
	*val = req.val;
	return rc;
}

static void normal_req(struct mmu_update *req, u64 maddr, u64 val)
{
	req->ptr = maddr | MMU_NORMAL_PT_UPDATE;
	req->val = val;
}

/* One MMU_NORMAL_PT_UPDATE: the reference the swap's validation must match. */
static int normal_update(u64 maddr, u64 val)
{
	struct mmu_update req;
	int done;

	normal_req(&req, maddr, val);
	return mmu_update(&req, 1, &done);
}

static int invlpg(unsigned int cmd, const void *va)
{
	struct mmuext_op op = {
		.cmd = cmd,
		.arg1.linear_addr = (unsigned long)va,
	};

	return HYPERVISOR_mmuext_op(&op, 1, NULL, DOMID_SELF);
}

static void slots_free(struct slots *s)
{
	unsigned int i;

	if (!s)
		return;
	if (s->va) {
		/* Put back every entry a check left changed. */
		for (i = 0; i < s->n; i++)
			if (entry_read(s, i) != s->orig[i])
				WARN_ON(normal_update(s->maddr[i], s->orig[i]));
		invlpg(MMUEXT_TLB_FLUSH_ALL, NULL);
		vunmap(s->va);
	}
	kfree(s->ptep);
	kfree(s->maddr);
	kfree(s->orig);
	kfree(s->pages);
	kfree(s);
}

/* Map @n pages, alternately data_page[0] and data_page[1], and find their L1 entries. */
static struct slots *slots_create(unsigned int n, pgprot_t prot)
{
	struct slots *s = kzalloc(sizeof(*s), GFP_KERNEL);
	unsigned int i, level;

	if (!s)
		return NULL;
	s->n = n;
	s->ptep = kcalloc(n, sizeof(*s->ptep), GFP_KERNEL);
	s->maddr = kcalloc(n, sizeof(*s->maddr), GFP_KERNEL);
	s->orig = kcalloc(n, sizeof(*s->orig), GFP_KERNEL);
	s->pages = kcalloc(n, sizeof(*s->pages), GFP_KERNEL);
	if (!s->ptep || !s->maddr || !s->orig || !s->pages)
		goto fail;
	for (i = 0; i < n; i++)
		s->pages[i] = data_page[i & 1];
	s->va = vmap(s->pages, n, VM_MAP, prot);
	if (!s->va)
		goto fail;
	for (i = 0; i < n; i++) {
		s->ptep[i] = lookup_address((unsigned long)s->va + i * PAGE_SIZE, &level);
		if (!s->ptep[i] || level != PG_LEVEL_4K)
			goto fail;
		s->maddr[i] = arbitrary_virt_to_machine(s->ptep[i]).maddr;
		s->orig[i] = entry_read(s, i);
	}
	return s;
fail:
	slots_free(s);
	return NULL;
}

/* 1 if Xen advertises XENFEAT_mmu_pt_update_swap, 0 if not, or -errno. */
static int xen_swap_feature(void)
{
	struct xen_feature_info fi = { .submap_idx = 0 };
	int rc = HYPERVISOR_xen_version(XENVER_get_features, &fi);

	if (rc < 0)
		return rc;
	return !!(fi.submap & BIT(XENFEAT_mmu_pt_update_swap));
}

/* --- checks on patched Xen ------------------------------------------- */

/* A present entry: the new one is installed, the old one comes back. */
static bool check_swap_present(struct slots *s, char *why)
{
	u64 old = entry_read(s, 0), new = entry_flipped(old), val = new;
	int done, rc;

	rc = swap_one(s->maddr[0], &val, &done);
	if (rc || done != 1)
		return FAIL(why, "rc %d, done %d, want 0, 1", rc, done);
	if (val != old)
		return FAIL(why, "returned %#llx, the entry was %#llx", val, old);
	if (entry_read(s, 0) != new)
		return FAIL(why, "entry %#llx, want %#llx", entry_read(s, 0), new);
	val = old;
	rc = swap_one(s->maddr[0], &val, &done);
	if (rc || val != new || entry_read(s, 0) != old)
		return FAIL(why,
			    "swapping back: rc %d, returned %#llx (want %#llx), entry %#llx (want %#llx)",
			    rc, val, new, entry_read(s, 0), old);
	return true;
}

/* Clearing (new entry 0, the hook's use) and installing into an empty entry. */
static bool check_swap_clear(struct slots *s, char *why)
{
	u64 old = entry_read(s, 1), val = 0;
	int done, rc;

	rc = swap_one(s->maddr[1], &val, &done);
	if (rc || done != 1 || val != old || entry_read(s, 1) != 0)
		return FAIL(why,
			    "clear: rc %d, done %d, returned %#llx (want %#llx), entry %#llx (want 0)",
			    rc, done, val, old, entry_read(s, 1));
	val = old;
	rc = swap_one(s->maddr[1], &val, &done);
	if (rc || done != 1 || val != 0 || entry_read(s, 1) != old)
		return FAIL(why,
			    "install: rc %d, done %d, returned %#llx (want 0), entry %#llx (want %#llx)",
			    rc, done, val, entry_read(s, 1), old);
	return true;
}

/* A batch over NR_SLOTS entries, then a batch on one entry: each old value in its own slot. */
static bool check_batch(struct slots *s, char *why)
{
	struct mmu_update req[NR_SLOTS];
	u64 want[NR_SLOTS];
	unsigned int i;
	int done = -1, rc;

	for (i = 0; i < NR_SLOTS; i++) {
		want[i] = entry_read(s, i);
		swap_req(&req[i], s->maddr[i], entry_flipped(want[i]));
	}
	rc = mmu_update(req, NR_SLOTS, &done);
	if (rc || done != NR_SLOTS)
		return FAIL(why, "many entries: rc %d, done %d, want 0, %u", rc, done, NR_SLOTS);
	for (i = 0; i < NR_SLOTS; i++) {
		if (req[i].val != want[i])
			return FAIL(why, "many entries: slot %u returned %#llx, want %#llx",
				    i, req[i].val, want[i]);
		if (entry_read(s, i) != entry_flipped(want[i]))
			return FAIL(why, "many entries: entry %u is %#llx, want %#llx",
				    i, entry_read(s, i), entry_flipped(want[i]));
	}

	/* One entry, alternating values: slot i returns what slot i - 1 installed. */
	want[0] = entry_read(s, 2);
	for (i = 0; i < NR_SLOTS; i++) {
		swap_req(&req[i], s->maddr[2], i & 1 ? want[0] : entry_flipped(want[0]));
		if (i)
			want[i] = i & 1 ? entry_flipped(want[0]) : want[0];
	}
	done = -1;
	rc = mmu_update(req, NR_SLOTS, &done);
	if (rc || done != NR_SLOTS)
		return FAIL(why, "one entry: rc %d, done %d, want 0, %u", rc, done, NR_SLOTS);
	for (i = 0; i < NR_SLOTS; i++)
		if (req[i].val != want[i])
			return FAIL(why, "one entry: slot %u returned %#llx, want %#llx",
				    i, req[i].val, want[i]);
	if (entry_read(s, 2) != want[0])
		return FAIL(why,
			    "one entry: entry is %#llx, want %#llx",
			    entry_read(s, 2), want[0]);
	return true;
}

/* --- batches of updates to one L1 frame ---------------------------------
 *
 * Xen keeps the frame a request looked up referenced for the next
 * request to the same frame (test/xen-patch/ 0006).  These checks hold on
 * any Xen; on one that reused a frame where it must not, or kept it
 * locked, they fail or hang the boot.
 */

/* NR_SLOTS normal updates in one call, then NR_SLOTS more putting them back. */
static bool check_normal_run(struct slots *s, char *why)
{
	struct mmu_update req[NR_SLOTS];
	unsigned int i, round;
	int done, rc;

	for (round = 0; round < 2; round++) {
		for (i = 0; i < NR_SLOTS; i++)
			normal_req(&req[i], s->maddr[i],
				   round ? s->orig[i] : entry_flipped(s->orig[i]));
		done = -1;
		rc = mmu_update(req, NR_SLOTS, &done);
		if (rc || done != NR_SLOTS)
			return FAIL(why, "round %u: rc %d, done %d, want 0, %u",
				    round, rc, done, NR_SLOTS);
		for (i = 0; i < NR_SLOTS; i++)
			if (entry_read(s, i) != req[i].val)
				return FAIL(why, "round %u: entry %u is %#llx, want %#llx",
					    round, i, entry_read(s, i), req[i].val);
	}
	return true;
}

/*
 * One call alternating between entries of two L1 frames (A A B B A): each
 * update lands in its own frame.
 */
static bool check_normal_two_frames(struct slots *s, char *why)
{
	struct slots *t = slots_create(BATCH_SLOTS, PAGE_KERNEL);
	struct mmu_update req[5];
	unsigned int b, i;
	bool ok = true;
	int done = -1, rc;

	if (!t)
		return FAIL(why, "cannot run because %u entries could not be mapped", BATCH_SLOTS);
	if (L1_FRAME(s, 1) != L1_FRAME(s, 0)) {
		ok = FAIL(why, "cannot run because entries 0 and 1 are in two L1 frames");
		goto out;
	}
	/* Two entries of @t in one L1 frame, another than @s's. */
	for (b = 0; b + 1 < t->n; b++)
		if (L1_FRAME(t, b) != L1_FRAME(s, 0) && L1_FRAME(t, b + 1) == L1_FRAME(t, b))
			break;
	if (b + 1 >= t->n) {
		ok = FAIL(why, "cannot run because no two entries of another L1 frame were found");
		goto out;
	}
	normal_req(&req[0], s->maddr[0], entry_flipped(s->orig[0]));
	normal_req(&req[1], s->maddr[1], entry_flipped(s->orig[1]));
	normal_req(&req[2], t->maddr[b], entry_flipped(t->orig[b]));
	normal_req(&req[3], t->maddr[b + 1], entry_flipped(t->orig[b + 1]));
	normal_req(&req[4], s->maddr[0], s->orig[0]);
	rc = mmu_update(req, 5, &done);
	if (rc || done != 5) {
		ok = FAIL(why, "rc %d, done %d, want 0, 5", rc, done);
		goto out;
	}
	/* Each entry holds what the last request naming it installed. */
	if (entry_read(s, 0) != req[4].val || entry_read(s, 1) != req[1].val ||
	    entry_read(t, b) != req[2].val || entry_read(t, b + 1) != req[3].val) {
		ok = FAIL(why, "entries %#llx %#llx, %#llx %#llx; want %#llx %#llx, %#llx %#llx",
			  entry_read(s, 0), entry_read(s, 1), entry_read(t, b),
			  entry_read(t, b + 1), req[4].val, req[1].val, req[2].val,
			  req[3].val);
		goto out;
	}
	/* Entries of @s's frame that no request named are unchanged. */
	for (i = 2; i < s->n; i++)
		if (entry_read(s, i) != s->orig[i]) {
			ok = FAIL(why, "entry %u of the first area changed to %#llx",
				  i, entry_read(s, i));
			goto out;
		}
out:
	WARN_ON(normal_update(s->maddr[1], s->orig[1]));
	slots_free(t);
	return ok;
}

/*
 * Normal updates and swaps of entries of one frame mixed in one call:
 * each swap returns the entry as the requests before it left it.
 */
static bool check_normal_then_swap(struct slots *s, char *why)
{
	u64 o0 = s->orig[0], o1 = s->orig[1], o2 = s->orig[2];
	struct mmu_update req[6];
	int done = -1, rc;

	normal_req(&req[0], s->maddr[0], entry_flipped(o0));
	normal_req(&req[1], s->maddr[1], entry_flipped(o1));
	swap_req(&req[2], s->maddr[2], entry_flipped(o2));
	normal_req(&req[3], s->maddr[2], o2);
	swap_req(&req[4], s->maddr[0], o0);
	swap_req(&req[5], s->maddr[1], o1);
	rc = mmu_update(req, ARRAY_SIZE(req), &done);
	if (rc || done != ARRAY_SIZE(req))
		return FAIL(why, "rc %d, done %d, want 0, %zu", rc, done, ARRAY_SIZE(req));
	if (req[2].val != o2 || req[4].val != entry_flipped(o0) ||
	    req[5].val != entry_flipped(o1))
		return FAIL(why,
			    "swaps returned %#llx, %#llx, %#llx; want %#llx, %#llx, %#llx",
			    req[2].val, req[4].val, req[5].val, o2, entry_flipped(o0),
			    entry_flipped(o1));
	if (entry_read(s, 0) != o0 || entry_read(s, 1) != o1 || entry_read(s, 2) != o2)
		return FAIL(why, "entries %#llx, %#llx, %#llx; want %#llx, %#llx, %#llx",
			    entry_read(s, 0), entry_read(s, 1), entry_read(s, 2), o0, o1, o2);
	return true;
}

/*
 * A refused normal update after two accepted ones of the same frame: the
 * call stops there, and the frame is free for the next call (a swap and a
 * normal update of it).
 */
static bool check_normal_run_refused(struct slots *s, char *why)
{
	/* A writable mapping of the L1 table itself: refused at any level. */
	u64 bad = entry_with_mfn(s->orig[2] | _PAGE_RW, s->maddr[2] >> PAGE_SHIFT);
	struct mmu_update req[4];
	unsigned int i;
	int done = -1, rc;
	u64 val;

	for (i = 0; i < 4; i++)
		normal_req(&req[i], s->maddr[i], entry_flipped(s->orig[i]));
	req[2].val = bad;
	rc = mmu_update(req, 4, &done);
	if (!rc || done != 2)
		return FAIL(why, "rc %d, done %d, want an error, 2", rc, done);
	for (i = 0; i < 4; i++) {
		u64 want = i < 2 ? entry_flipped(s->orig[i]) : s->orig[i];

		if (entry_read(s, i) != want)
			return FAIL(why, "entry %u is %#llx, want %#llx",
				    i, entry_read(s, i), want);
	}
	val = s->orig[0];
	rc = swap_one(s->maddr[0], &val, &done);
	if (rc || val != entry_flipped(s->orig[0]))
		return FAIL(why, "the next swap: rc %d, returned %#llx, want 0, %#llx",
			    rc, val, entry_flipped(s->orig[0]));
	rc = normal_update(s->maddr[1], s->orig[1]);
	if (rc || entry_read(s, 1) != s->orig[1])
		return FAIL(why, "the next normal update: rc %d, entry %#llx, want 0, %#llx",
			    rc, entry_read(s, 1), s->orig[1]);
	return true;
}

/*
 * A new entry Xen must refuse: the swap fails, changes nothing, and fails
 * exactly as MMU_NORMAL_PT_UPDATE does with the same entry.
 */
static bool check_refused(struct slots *s, u64 bad, char *why)
{
	u64 before = entry_read(s, 3), val = bad;
	int done, rc, rc_normal;

	rc = swap_one(s->maddr[3], &val, &done);
	if (!rc)
		return FAIL(why, "swap of %#llx succeeded (returned %#llx)", bad, val);
	if (done != 0 || val != bad || entry_read(s, 3) != before)
		return FAIL(why,
			    "rc %d but done %d, request val %#llx (want %#llx), entry %#llx (want %#llx)",
			    rc, done, val, bad, entry_read(s, 3), before);
	rc_normal = normal_update(s->maddr[3], bad);
	if (entry_read(s, 3) != before) {
		WARN_ON(normal_update(s->maddr[3], before));
		return FAIL(why, "MMU_NORMAL_PT_UPDATE accepted %#llx: the check's frame is wrong",
			    bad);
	}
	if (rc != rc_normal)
		return FAIL(why,
			    "swap failed with %d, MMU_NORMAL_PT_UPDATE with %d",
			    rc, rc_normal);
	pr_info("%#llx refused with %d, as by MMU_NORMAL_PT_UPDATE\n", bad, rc);
	return true;
}

static bool check_refuse_pt_frame_rw(struct slots *s, char *why)
{
	/* A writable mapping of the L1 table that holds the entry itself. */
	return check_refused(s, entry_with_mfn(entry_read(s, 3) | _PAGE_RW,
					       s->maddr[3] >> PAGE_SHIFT), why);
}

static bool check_refuse_xen_frame(struct slots *s, char *why)
{
	struct xen_machphys_mfn_list list = { .max_extents = 1 };
	xen_pfn_t mfn = 0;
	int rc;

	/* The first frame of Xen's M2P table: owned by DOMID_XEN. */
	set_xen_guest_handle(list.extent_start, &mfn);
	rc = HYPERVISOR_memory_op(XENMEM_machphys_mfn_list, &list);
	if (rc || list.nr_extents < 1)
		return FAIL(why, "cannot run because XENMEM_machphys_mfn_list failed (%d)", rc);
	return check_refused(s, entry_with_mfn(entry_read(s, 3) & ~(u64)_PAGE_RW, mfn), why);
}

static bool check_refuse_unowned_frame(struct slots *s, char *why)
{
	long max = HYPERVISOR_memory_op(XENMEM_maximum_ram_page, NULL);
	unsigned long mfn;

	if (max <= 0)
		return FAIL(why, "cannot run because XENMEM_maximum_ram_page failed (%ld)", max);
	/*
	 * The highest frame that neither Dom0's P2M maps to nor its identity
	 * map covers: free, or Xen's own.  Below 1 MiB is I/O for Dom0.
	 */
	for (mfn = max - 1; mfn >= SZ_1M >> PAGE_SHIFT; mfn--)
		if (mfn_to_pfn(mfn) == ~0UL)
			break;
	if (mfn < SZ_1M >> PAGE_SHIFT)
		return FAIL(why, "cannot run because every frame below %#lx is Dom0's", max);
	pr_info("frame not owned by Dom0: %#lx (max_page %#lx)\n", mfn, max);
	return check_refused(s, entry_with_mfn(entry_read(s, 3) & ~(u64)_PAGE_RW, mfn), why);
}

static bool check_refuse_reserved_bit(struct slots *s, char *why)
{
	if (boot_cpu_data.x86_phys_bits > PTE_RESERVED_BIT)
		return FAIL(why, "cannot run because MAXPHYADDR is %u: bit %u is not reserved",
			    boot_cpu_data.x86_phys_bits, PTE_RESERVED_BIT);
	return check_refused(s, entry_read(s, 3) | BIT_ULL(PTE_RESERVED_BIT), why);
}

/* An L2, L3 or L4 entry: -EINVAL and nothing changed. */
static bool check_upper_level(void *entry, char *why)
{
	u64 maddr = arbitrary_virt_to_machine(entry).maddr;
	u64 before = READ_ONCE(*(u64 *)entry), bad = before ^ _PAGE_ACCESSED, val = bad;
	int done, rc;

	rc = swap_one(maddr, &val, &done);
	if (rc != -EINVAL)
		return FAIL(why, "rc %d, want %d (-EINVAL)", rc, -EINVAL);
	if (done != 0 || val != bad || READ_ONCE(*(u64 *)entry) != before)
		return FAIL(why,
			    "done %d, request val %#llx (want %#llx), entry %#llx (want %#llx)",
			    done, val, bad, READ_ONCE(*(u64 *)entry), before);
	return true;
}

static bool check_l2(struct slots *s, char *why)
{
	unsigned long va = (unsigned long)s->va;

	return check_upper_level(pmd_offset(pud_offset(p4d_offset(pgd_offset(current->active_mm,
									       va), va), va), va),
				 why);
}

static bool check_l3(struct slots *s, char *why)
{
	unsigned long va = (unsigned long)s->va;

	return check_upper_level(pud_offset(p4d_offset(pgd_offset(current->active_mm, va), va), va),
				 why);
}

static bool check_l4(struct slots *s, char *why)
{
	unsigned long va = (unsigned long)s->va;

	return check_upper_level(pgd_offset(current->active_mm, va), why);
}

/*
 * A frame that is not a page table is refused with -EINVAL, the word and
 * the request untouched: the guest can exchange such a word itself.
 */
static bool plain_refused(u64 *word, const char *what, char *why)
{
	u64 maddr = arbitrary_virt_to_machine(word).maddr, before = READ_ONCE(*word), val;
	/* An entry validation would refuse too: a reserved address bit set. */
	u64 unchecked = ((u64)data_mfn[0] << PAGE_SHIFT) | _PAGE_PRESENT | _PAGE_RW |
			BIT_ULL(PTE_RESERVED_BIT);
	int done, rc;

	val = unchecked;
	rc = swap_one(maddr, &val, &done);
	if (rc != -EINVAL || done != 0 || val != unchecked || READ_ONCE(*word) != before)
		return FAIL(why,
			    "%s: rc %d, done %d, request val %#llx (want %d, 0, %#llx), word %#llx (want %#llx)",
			    what, rc, done, val, -EINVAL, unchecked, READ_ONCE(*word), before);
	return true;
}

/* A frame Dom0 maps writable: Xen's PGT_writable_page case under page_lock(). */
static bool check_plain_frame(struct slots *unused, char *why)
{
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	u64 *word;
	bool ok;

	if (!page)
		return FAIL(why, "cannot run because no memory");
	word = (u64 *)page_address(page) + 5;
	WRITE_ONCE(*word, 0x0123456789abcdefULL);
	ok = plain_refused(word, "writable-mapped frame", why);
	__free_page(page);
	return ok;
}

/*
 * A frame of Dom0 with no writable mapping (its direct-map entry made
 * read-only with update_va_mapping): type count 0, so page_lock() fails
 * and Xen reaches its get_page_type(PGT_writable_page) case.
 */
static bool check_plain_frame_untyped(struct slots *unused, char *why)
{
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	unsigned long va;
	unsigned int level;
	pte_t *ptep, pte;
	bool ok;
	int rc;

	if (!page)
		return FAIL(why, "cannot run because no memory");
	va = (unsigned long)page_address(page);
	((u64 *)va)[6] = 0x0123456789abcdefULL;
	ptep = lookup_address(va, &level);
	if (!ptep || level != PG_LEVEL_4K) {
		__free_page(page);
		return FAIL(why, "cannot run because the page's direct-map entry is not 4K");
	}
	pte = *ptep;
	rc = HYPERVISOR_update_va_mapping(va, native_make_pte(native_pte_val(pte) & ~_PAGE_RW),
					  UVMF_INVLPG);
	if (rc) {
		__free_page(page);
		return FAIL(why, "cannot run because update_va_mapping failed (%d)", rc);
	}
	ok = plain_refused((u64 *)va + 6, "read-only frame", why);
	rc = HYPERVISOR_update_va_mapping(va, pte, UVMF_INVLPG);
	if (rc) {
		/* Leak the page rather than free it read-only. */
		return FAIL(why, "cannot restore the page's direct-map entry (%d)", rc);
	}
	__free_page(page);
	return ok;
}

/*
 * Without @pdone a SWAP is refused with -EINVAL, entry and request
 * untouched; the NORMAL update before it in the same call stays done.
 */
static bool check_null_pdone(struct slots *s, char *why)
{
	u64 before0 = entry_read(s, 0), before1 = entry_read(s, 1);
	u64 new0 = entry_flipped(before0), new1 = entry_flipped(before1);
	struct mmu_update req[2] = {
		{ .ptr = s->maddr[0] | MMU_NORMAL_PT_UPDATE, .val = new0 },
	};
	bool ok = true;
	int rc;

	swap_req(&req[1], s->maddr[1], new1);
	rc = HYPERVISOR_mmu_update(&req[1], 1, NULL, DOMID_SELF);
	if (rc != -EINVAL || req[1].val != new1 || entry_read(s, 1) != before1)
		return FAIL(why, "alone: rc %d (%d), val %#llx (%#llx), entry %#llx (%#llx)",
			    rc, -EINVAL, req[1].val, new1, entry_read(s, 1), before1);
	rc = HYPERVISOR_mmu_update(req, 2, NULL, DOMID_SELF);
	if (rc != -EINVAL || req[1].val != new1 || entry_read(s, 1) != before1 ||
	    !same_but_ad(entry_read(s, 0), new0))
		ok = FAIL(why, "2nd of 2: rc %d (%d), val %#llx, entries %#llx %#llx (%#llx %#llx)",
			  rc, -EINVAL, req[1].val, entry_read(s, 0), entry_read(s, 1),
			  new0, before1);
	WARN_ON(normal_update(s->maddr[0], before0));
	return ok;
}

/*
 * mmu_update with a full 32-bit @foreigndom: Linux's HYPERVISOR_mmu_update()
 * takes a domid_t, which has no room for PFD (@foreigndom[31:16]).
 */
static int mmu_update_pfd(struct mmu_update *req, unsigned int count, int *done,
			  unsigned int foreigndom)
{
	return _hypercall4(int, mmu_update, req, count, done, foreigndom);
}

/*
 * PFD naming a domain that does not exist: -ESRCH before any request is
 * read, so nothing changed and @pdone not even written.
 */
#define NO_SUCH_DOMID	32000

static bool check_pfd_missing(struct slots *s, char *why)
{
	u64 before = entry_read(s, 2), new = entry_flipped(before);
	struct mmu_update req;
	int done = -1, rc;

	swap_req(&req, s->maddr[2], new);
	rc = mmu_update_pfd(&req, 1, &done, ((NO_SUCH_DOMID + 1) << 16) | DOMID_SELF);
	if (rc != -ESRCH || done != -1 || req.val != new || entry_read(s, 2) != before)
		return FAIL(why, "rc %d, done %d (%d, -1), val %#llx (%#llx), entry %#llx (%#llx)",
			    rc, done, -ESRCH, req.val, new, entry_read(s, 2), before);
	return true;
}

/* PFD naming Dom0 itself (x = 0 + 1): the caller's own page tables, a swap. */
static bool check_pfd_self(struct slots *s, char *why)
{
	u64 before = entry_read(s, 2), new = entry_flipped(before);
	struct mmu_update req;
	int done = -1, rc;

	if (!xen_initial_domain())
		return FAIL(why, "cannot run because this is not Dom0 (domid unknown)");
	swap_req(&req, s->maddr[2], new);
	rc = mmu_update_pfd(&req, 1, &done, (1U << 16) | DOMID_SELF);
	if (rc || done != 1 || !same_but_ad(req.val, before) || entry_read(s, 2) != new) {
		if (entry_read(s, 2) != before)
			WARN_ON(normal_update(s->maddr[2], before));
		return FAIL(why, "rc %d, done %d (0, 1), old %#llx (%#llx), entry %#llx (%#llx)",
			    rc, done, req.val, before, entry_read(s, 2), new);
	}
	WARN_ON(normal_update(s->maddr[2], before));
	return true;
}

/* --- checks with a second vCPU ----------------------------------------- */

/**
 * struct duo - a check's main part on one vCPU and a helper on another
 * @main: runs on @cpu_main (in a bound kworker), returns the check's result
 * @helper: runs in a kthread bound to @cpu_helper until kthread_should_stop()
 * @s: the entries
 * @why: the reason, if @main fails
 * @cpu_main: vCPU of @main
 * @cpu_helper: vCPU of @helper, another one
 * @va: the address @helper writes through (A/D checks)
 * @done: the mmu_update done count @helper watches (preemption check)
 * @count: requests in the batch (preemption check)
 * @seen: a done count strictly between 0 and @count, seen by @helper
 * @normal: the batch is of MMU_NORMAL_PT_UPDATE, not of swaps (preemption check)
 * @go: @main asks @helper for one write
 * @ack: @helper did it
 * @free_run: @helper writes in a loop instead of on request
 */
struct duo {
	bool (*main)(struct duo *d);
	int (*helper)(void *d);
	struct slots *s;
	char *why;
	unsigned int cpu_main;
	unsigned int cpu_helper;
	void *va;
	int done;
	unsigned int count;
	int seen;
	bool normal;
	struct completion go;
	struct completion ack;
	bool free_run;
};

static long duo_main(void *arg)
{
	struct duo *d = arg;

	return d->main(d);
}

static bool duo_run(struct duo *d, char *why)
{
	struct task_struct *t;
	bool ok;

	d->why = why;
	d->cpu_main = cpumask_first(cpu_online_mask);
	d->cpu_helper = cpumask_next(d->cpu_main, cpu_online_mask);
	if (d->cpu_helper >= nr_cpu_ids)
		return FAIL(why, "cannot run because Dom0 has only one vCPU online");
	init_completion(&d->go);
	init_completion(&d->ack);
	t = kthread_create(d->helper, d, "ptswap_test/%u", d->cpu_helper);
	if (IS_ERR(t))
		return FAIL(why, "cannot run because kthread_create failed (%ld)", PTR_ERR(t));
	kthread_bind(t, d->cpu_helper);
	get_task_struct(t);
	wake_up_process(t);
	ok = work_on_cpu(d->cpu_main, duo_main, d);
	kthread_stop(t);
	put_task_struct(t);
	return ok;
}

/* Helper: write through d->va, after dropping its TLB entry so the walk sets A and D. */
static void write_through(struct duo *d, u64 n)
{
	invlpg(MMUEXT_INVLPG_LOCAL, d->va);
	WRITE_ONCE(*(u64 *)d->va, n);
}

static int ad_helper(void *arg)
{
	struct duo *d = arg;
	u64 n = 0;

	while (!kthread_should_stop()) {
		if (READ_ONCE(d->free_run)) {
			write_through(d, n++);
		} else if (try_wait_for_completion(&d->go)) {
			write_through(d, n++);
			complete(&d->ack);
		}
		cond_resched();
	}
	return 0;
}

/*
 * The other vCPU writes through the entry (hardware sets A and D) between
 * two swaps; the second swap returns exactly the entry it replaced, A/D set.
 * Then the other vCPU writes in a loop while this one swaps: every value
 * returned is the clean entry plus only A/D bits.
 */
static bool ad_main(struct duo *d)
{
	struct slots *s = d->s;
	u64 clean = entry_read(s, 4) & ~PTE_AD, seen, val;
	unsigned int i, with_d = 0;
	int done, rc;

	val = clean;
	if (swap_one(s->maddr[4], &val, &done))
		return FAIL(d->why, "first swap failed");
	for (i = 0; i < HANDSHAKES; i++) {
		complete(&d->go);
		wait_for_completion(&d->ack);
		seen = entry_read(s, 4);
		if ((seen & PTE_AD) != PTE_AD)
			return FAIL(d->why,
				    "cannot run because the other vCPU's write left A/D clear (%#llx)",
				    seen);
		val = clean;
		rc = swap_one(s->maddr[4], &val, &done);
		if (rc || done != 1 || val != seen || entry_read(s, 4) != clean)
			return FAIL(d->why,
				    "rc %d, done %d, returned %#llx, want %#llx (A/D set by the other vCPU)",
				    rc, done, val, seen);
	}

	WRITE_ONCE(d->free_run, true);
	for (i = 0; i < race_swaps; i++) {
		val = clean;
		rc = swap_one(s->maddr[4], &val, &done);
		if (rc || done != 1 || (val & ~PTE_AD) != clean)
			return FAIL(d->why,
				    "racing swap %u: rc %d, done %d, returned %#llx, want %#llx plus A/D only",
				    i, rc, done, val, clean);
		with_d += !!(val & _PAGE_DIRTY);
	}
	pr_info("%u of %u racing swaps returned D set by the other vCPU\n", with_d, race_swaps);
	return true;
}

static bool check_ad(struct slots *s, char *why)
{
	struct duo d = {
		.main = ad_main,
		.helper = ad_helper,
		.s = s,
		.va = s->va + 4 * PAGE_SIZE,
	};

	return duo_run(&d, why);
}

static int watch_helper(void *arg)
{
	struct duo *d = arg;

	while (!kthread_should_stop()) {
		int n = READ_ONCE(d->done);

		if (n > 0 && n < d->count)
			WRITE_ONCE(d->seen, n);
		cond_resched();
	}
	return 0;
}

/*
 * The preemption batch: request j swaps entry j % BATCH_SLOTS, in round
 * j / BATCH_SLOTS, to the other data page in even rounds and back in odd
 * ones.  So it installs batch_entry(s, j) and must return what request
 * j - BATCH_SLOTS installed, or the original entry in round 0.
 */
static u64 batch_entry(const struct slots *s, unsigned int j)
{
	unsigned int m = j % BATCH_SLOTS;

	return (j / BATCH_SLOTS) & 1 ? s->orig[m] : entry_flipped(s->orig[m]);
}

static bool batch_main(struct duo *d)
{
	struct slots *s = d->s;
	struct mmu_update *req;
	unsigned int j;
	bool ok = true;
	u64 want;
	int rc;

	req = vmalloc(array_size(d->count, sizeof(*req)));
	if (!req)
		return FAIL(d->why, "cannot run because no memory for %u requests", d->count);
	for (j = 0; j < d->count; j++)
		(d->normal ? normal_req : swap_req)(&req[j], s->maddr[j % BATCH_SLOTS],
						    batch_entry(s, j));
	WRITE_ONCE(d->done, 0);
	rc = mmu_update(req, d->count, &d->done);
	if (rc || READ_ONCE(d->done) != d->count) {
		ok = FAIL(d->why, "rc %d, done %d, want 0, %u", rc, READ_ONCE(d->done), d->count);
		goto out;
	}
	for (j = 0; j < d->count && !d->normal; j++) {
		want = j < BATCH_SLOTS ? s->orig[j] : batch_entry(s, j - BATCH_SLOTS);
		if (req[j].val != want) {
			ok = FAIL(d->why,
				  "request %u returned %#llx, want %#llx",
				  j, req[j].val, want);
			goto out;
		}
	}
	/* Each entry holds what the last request on it installed. */
	for (j = d->count - BATCH_SLOTS; j < d->count; j++) {
		if (entry_read(s, j % BATCH_SLOTS) != batch_entry(s, j)) {
			ok = FAIL(d->why, "entry %u is %#llx, want %#llx", j % BATCH_SLOTS,
				  entry_read(s, j % BATCH_SLOTS), batch_entry(s, j));
			goto out;
		}
	}
out:
	vfree(req);
	return ok;
}

static bool preempted_batch(bool normal, char *why)
{
	struct slots *s = slots_create(BATCH_SLOTS, PAGE_KERNEL);
	struct duo d = {
		.main = batch_main,
		.helper = watch_helper,
		.normal = normal,
	};
	unsigned int try;
	bool ok = true;

	if (!s)
		return FAIL(why, "cannot run because %u entries could not be mapped", BATCH_SLOTS);
	d.s = s;
	d.count = batch;
	for (try = 0; ok && try < PREEMPT_TRIES; try++, d.count *= 2) {
		ok = duo_run(&d, why);
		if (ok && READ_ONCE(d.seen)) {
			pr_info("batch of %u: the other vCPU saw done = %d between preemptions\n",
				d.count, d.seen);
			break;
		}
		/* Back to the original entries for the next, larger batch. */
		slots_free(s);
		s = slots_create(BATCH_SLOTS, PAGE_KERNEL);
		if (!s)
			return FAIL(why,
				    "cannot run because %u entries could not be mapped",
				    BATCH_SLOTS);
		d.s = s;
	}
	if (ok && !READ_ONCE(d.seen))
		ok = FAIL(why,
			  "cannot run because no batch (largest %u) was seen preempted",
			  d.count / 2);
	slots_free(s);
	return ok;
}

static bool check_preempted_batch(struct slots *unused, char *why)
{
	return preempted_batch(false, why);
}

/* Normal updates cycling over 512 entries: a preempted call must free the frame. */
static bool check_preempted_normal_batch(struct slots *unused, char *why)
{
	return preempted_batch(true, why);
}

/* --- unwritable request arrays and pdone ---------------------------- */

/*
 * Make the page at @va (a vmap() of ours) read-only to Dom0 and flush it;
 * *@maddr and *@rw_entry get what ro_restore() needs.  Returns 0, or
 * -ENOENT if @va has no L1 entry, or the hypercall's error.
 */
static int ro_make(void *va, u64 *maddr, u64 *rw_entry)
{
	unsigned int level;
	pte_t *pte = lookup_address((unsigned long)va, &level);
	int rc;

	if (!pte || level != PG_LEVEL_4K)
		return -ENOENT;
	*maddr = arbitrary_virt_to_machine(pte).maddr;
	*rw_entry = READ_ONCE(pte->pte);
	rc = normal_update(*maddr, *rw_entry & ~(u64)_PAGE_RW);
	if (!rc)
		rc = invlpg(MMUEXT_INVLPG_ALL, va);
	if (rc)
		*maddr = 0;
	return rc;
}

/* Undo ro_make(); nothing to do if it failed (@maddr 0). */
static void ro_restore(u64 maddr, u64 rw_entry)
{
	if (maddr)
		WARN_ON(normal_update(maddr, rw_entry));
}

/*
 * Requests 0-2 at the end of a writable page, request 3 at the start of a
 * read-only one: 0-2 done with their old values, 3 fails with -EFAULT
 * before its entry is touched, done = 3.
 */
static bool check_readonly_array(struct slots *s, char *why)
{
	struct page *pages[2] = { alloc_page(GFP_KERNEL), alloc_page(GFP_KERNEL) };
	struct mmu_update *req = NULL;
	unsigned int i;
	u64 before[4], ro_maddr = 0, rw_entry = 0;
	void *area = NULL;
	bool ok = true;
	int done, rc;

	if (!pages[0] || !pages[1]) {
		ok = FAIL(why, "cannot run because no memory");
		goto out;
	}
	area = vmap(pages, 2, VM_MAP, PAGE_KERNEL);
	if (!area) {
		ok = FAIL(why, "cannot run because vmap failed");
		goto out;
	}
	req = area + PAGE_SIZE - 3 * sizeof(*req);
	for (i = 0; i < 4; i++) {
		before[i] = entry_read(s, 8 + i);
		swap_req(&req[i], s->maddr[8 + i], entry_flipped(before[i]));
	}
	if (ro_make(area + PAGE_SIZE, &ro_maddr, &rw_entry)) {
		ok = FAIL(why,
			  "cannot run because the array's second page cannot be made read-only");
		goto out;
	}

	done = -1;
	rc = mmu_update(req, 4, &done);
	if (rc != -EFAULT || done != 3) {
		ok = FAIL(why, "rc %d, done %d, want %d (-EFAULT), 3", rc, done, -EFAULT);
		goto out;
	}
	for (i = 0; i < 3; i++)
		if (req[i].val != before[i] || entry_read(s, 8 + i) != entry_flipped(before[i])) {
			ok = FAIL(why,
				  "request %u returned %#llx (want %#llx), entry %#llx (want %#llx)",
				  i, req[i].val, before[i], entry_read(s, 8 + i),
				  entry_flipped(before[i]));
			goto out;
		}
	if (req[3].val != entry_flipped(before[3]) || entry_read(s, 11) != before[3])
		ok = FAIL(why,
			  "failed request: val %#llx (want %#llx), entry %#llx (want %#llx, unchanged)",
			  req[3].val, entry_flipped(before[3]), entry_read(s, 11), before[3]);
out:
	ro_restore(ro_maddr, rw_entry);
	if (area)
		vunmap(area);
	if (pages[0])
		__free_page(pages[0]);
	if (pages[1])
		__free_page(pages[1]);
	return ok;
}

#define PDONE_MARK	0x5eed	/* what the read-only pdone holds */

/*
 * @pdone in a page Dom0 can read but not write.  A swap alone, and a swap
 * after a normal update, fail with -EFAULT before the exchange: the swap's
 * entry and val unchanged, the normal update done, @pdone as it was.
 * (Xen checks @pdone before the first swap of a call; otherwise the swap
 * would succeed and its count be lost with the final write of @pdone.)
 */
static bool check_readonly_pdone(struct slots *s, char *why)
{
	struct page *page = alloc_page(GFP_KERNEL);
	u64 before0 = entry_read(s, 12), before1 = entry_read(s, 13);
	u64 new0 = entry_flipped(before0), new1 = entry_flipped(before1);
	struct mmu_update req[2] = {
		{ .ptr = s->maddr[12] | MMU_NORMAL_PT_UPDATE, .val = new0 },
	};
	u64 ro_maddr = 0, rw_entry = 0;
	unsigned int *pdone;
	void *area = NULL;
	bool ok = true;
	int rc;

	if (!page)
		return FAIL(why, "cannot run because no memory");
	area = vmap(&page, 1, VM_MAP, PAGE_KERNEL);
	if (!area) {
		ok = FAIL(why, "cannot run because vmap failed");
		goto out;
	}
	pdone = area;
	WRITE_ONCE(*pdone, PDONE_MARK);
	if (ro_make(area, &ro_maddr, &rw_entry)) {
		ok = FAIL(why, "cannot run because the pdone page cannot be made read-only");
		goto out;
	}

	swap_req(&req[1], s->maddr[13], new1);
	rc = HYPERVISOR_mmu_update(&req[1], 1, pdone, DOMID_SELF);
	if (rc != -EFAULT || req[1].val != new1 || entry_read(s, 13) != before1 ||
	    READ_ONCE(*pdone) != PDONE_MARK) {
		ok = FAIL(why,
			  "alone: rc %d (%d), val %#llx (%#llx), entry %#llx (%#llx), pdone %#x (%#x)",
			  rc, -EFAULT, req[1].val, new1, entry_read(s, 13), before1,
			  READ_ONCE(*pdone), PDONE_MARK);
		goto out;
	}
	rc = HYPERVISOR_mmu_update(req, 2, pdone, DOMID_SELF);
	if (rc != -EFAULT || req[1].val != new1 || entry_read(s, 13) != before1 ||
	    !same_but_ad(entry_read(s, 12), new0) || READ_ONCE(*pdone) != PDONE_MARK)
		ok = FAIL(why,
			  "2nd of 2: rc %d (%d), val %#llx, entries %#llx %#llx (%#llx %#llx), pdone %#x",
			  rc, -EFAULT, req[1].val, entry_read(s, 12), entry_read(s, 13),
			  new0, before1, READ_ONCE(*pdone));
out:
	WARN_ON(normal_update(s->maddr[12], before0));
	WARN_ON(normal_update(s->maddr[13], before1));
	ro_restore(ro_maddr, rw_entry);
	if (area)
		vunmap(area);
	__free_page(page);
	return ok;
}

/* A request array Xen cannot even read: -EFAULT, done = 0. */
static bool check_unmapped_array(struct slots *unused, char *why)
{
	struct page *page = alloc_page(GFP_KERNEL);
	void *area;
	bool ok = true;
	int done = -1, rc;

	if (!page)
		return FAIL(why, "cannot run because no memory");
	area = vmap(&page, 1, VM_MAP, PAGE_KERNEL);
	if (!area) {
		__free_page(page);
		return FAIL(why, "cannot run because vmap failed");
	}
	/*
	 * The guard page after a vmap area is never mapped here; drop any TLB
	 * entry a lazily flushed earlier mapping of it may have left.
	 */
	invlpg(MMUEXT_INVLPG_ALL, area + PAGE_SIZE);
	rc = mmu_update(area + PAGE_SIZE, 1, &done);
	if (rc != -EFAULT || done != 0)
		ok = FAIL(why, "rc %d, done %d, want %d (-EFAULT), 0", rc, done, -EFAULT);
	vunmap(area);
	__free_page(page);
	return ok;
}

/* --- a self-referential request ------------------------------------- */

#define SELF_SLOT	5		/* the request's index in its page */
#define SELF_MARK	0x5e1f5e1f5e1f5e1fULL	/* what the other page holds */

/* Entries equal but for the A/D bits, which hardware may set at any time. */
static bool same_but_ad(u64 a, u64 b)
{
	return !((a ^ b) & ~PTE_AD);
}

/*
 * The request array sits in a vmalloc() page of ours, and its one request
 * swaps the L1 entry that maps that very page: to the same entry pointing
 * at another page of ours (@to_none false), or to none.  After Xen checks
 * the write-back and exchanges the entry, the write-back goes through the
 * new mapping or a stale TLB entry of the old one (xen.h's contract): the
 * old value may land in the request's page, in the other page, nowhere
 * with -EFAULT and done = 1.  Checks only what the contract promises and
 * reports the rest: rc, done, where the old value went, the entry after.
 * The entry is put back with MMU_NORMAL_PT_UPDATE and flushed before the
 * pages are freed; nothing but Xen touches the vmalloc address meanwhile.
 */
static bool self_referential(bool to_none, char *why)
{
	struct page *other = alloc_page(GFP_KERNEL);
	struct mmu_update *req = vmalloc(PAGE_SIZE);
	struct page *own = req ? vmalloc_to_page(req) : NULL;
	u64 *own_word, *other_word, maddr, before, new, after, in_own, in_other;
	const char *where;
	unsigned int level;
	bool ok = true, found;
	pte_t *ptep;
	int done, rc;

	if (!other || !own) {
		ok = FAIL(why, "cannot run because no memory");
		goto out;
	}
	ptep = lookup_address((unsigned long)req, &level);
	if (!ptep || level != PG_LEVEL_4K) {
		ok = FAIL(why, "cannot run because the request page has no L1 entry");
		goto out;
	}
	maddr = arbitrary_virt_to_machine(ptep).maddr;
	/* The same slot, seen through each page's direct-map address. */
	own_word = (u64 *)page_address(own) + 2 * SELF_SLOT + 1;
	other_word = (u64 *)page_address(other) + 2 * SELF_SLOT + 1;
	WRITE_ONCE(*other_word, SELF_MARK);

	swap_req(&req[SELF_SLOT], maddr, 0);
	before = READ_ONCE(ptep->pte);
	new = to_none ? 0 : entry_with_mfn(before, page_mfn(other));
	req[SELF_SLOT].val = new;
	done = -1;
	rc = mmu_update(&req[SELF_SLOT], 1, &done);
	after = READ_ONCE(ptep->pte);
	in_own = READ_ONCE(*own_word);
	in_other = READ_ONCE(*other_word);

	if (same_but_ad(in_own, before))
		where = "in the request's own page (the old mapping, through a stale TLB entry)";
	else if (!to_none && same_but_ad(in_other, before))
		where = "in the other page (the new mapping)";
	else
		where = "nowhere we can see";
	pr_info("self-referential swap to %s: rc %d, done %d, entry %#llx -> %#llx; the old entry landed %s (request page's slot %#llx, other page's %#llx)\n",
		to_none ? "none" : "the other page", rc, done, before, after, where,
		in_own, in_other);

	/* The contract: exchanged iff done counts it; rc 0 gives the old value. */
	found = same_but_ad(in_own, before) || (!to_none && same_but_ad(in_other, before));
	if (after == new) {
		if (done != 1)
			ok = FAIL(why, "entry exchanged (%#llx) but rc %d, done %d",
				  after, rc, done);
		else if (!rc && !found)
			ok = FAIL(why,
				  "rc 0, done 1, but neither frame holds the old entry %#llx (%#llx, %#llx)",
				  before, in_own, in_other);
	} else if (same_but_ad(after, before)) {
		if (!rc || done != 0)
			ok = FAIL(why, "entry unchanged but rc %d, done %d", rc, done);
	} else {
		ok = FAIL(why, "entry %#llx is neither the old %#llx nor the new %#llx",
			  after, before, new);
	}

	if (READ_ONCE(ptep->pte) != before &&
	    (normal_update(maddr, before) || READ_ONCE(ptep->pte) != before)) {
		/* Leak both pages rather than free them under a wrong entry. */
		WARN(1, "cannot restore the request page's entry %#llx (is %#llx)\n",
		     before, (u64)READ_ONCE(ptep->pte));
		return FAIL(why, "cannot restore the request page's entry");
	}
	invlpg(MMUEXT_INVLPG_ALL, req);
out:
	vfree(req);
	if (other)
		__free_page(other);
	return ok;
}

static bool check_self_referential_other(struct slots *unused, char *why)
{
	return self_referential(false, why);
}

static bool check_self_referential_none(struct slots *unused, char *why)
{
	return self_referential(true, why);
}

/* --- MMU_PT_CLEAR_RUN: runs of cleared L1 entries (test/xen-patch/ 0007) --- */

#define RUN_LEN		16	/* entries the basic run checks clear */
#define RUN_PREEMPT_REQS 2048	/* run requests in the preemption check's first call */
#define L1_SLOT(s, i)	(((s)->maddr[i] & ~PAGE_MASK) / sizeof(u64))

static void run_req(struct mmu_update *req, u64 maddr, u64 count)
{
	req->ptr = maddr | MMU_PT_CLEAR_RUN;
	req->val = count;
}

/* 1 if Xen advertises XENFEAT_mmu_pt_clear_run, 0 if not, or -errno. */
static int xen_run_feature(void)
{
	struct xen_feature_info fi = { .submap_idx = XENFEAT_mmu_pt_clear_run / 32 };
	int rc = HYPERVISOR_xen_version(XENVER_get_features, &fi);

	if (rc < 0)
		return rc;
	return !!(fi.submap & BIT(XENFEAT_mmu_pt_clear_run % 32));
}

/*
 * Entries [@i, @i + @n) of @s: consecutive slots of one L1 frame.  Return
 * the first such @i at or after @from, or @s->n if none.
 */
static unsigned int run_find(const struct slots *s, unsigned int from, unsigned int n)
{
	unsigned int i, j;

	for (i = from; i + n <= s->n; i++) {
		/* Two L1 frames may be adjacent in machine memory. */
		for (j = 1; j < n; j++)
			if (s->maddr[i + j] != s->maddr[i] + j * sizeof(u64) ||
			    L1_FRAME(s, i + j) != L1_FRAME(s, i))
				break;
		if (j == n)
			return i;
	}
	return s->n;
}

/* The index of the entry of @s in the last slot (511) of its L1 frame, or @s->n. */
static unsigned int run_find_table_end(const struct slots *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (L1_SLOT(s, i) == PTRS_PER_PTE - 1)
			return i;
	return s->n;
}

/* Put back every entry of @s that differs from what was mapped. */
static void run_restore(struct slots *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (entry_read(s, i) != s->orig[i])
			WARN_ON(normal_update(s->maddr[i], s->orig[i]));
	invlpg(MMUEXT_TLB_FLUSH_ALL, NULL);
}

/*
 * Entries [@a, @b) of @s must be none and every other one as mapped; then
 * put them all back.  Return false, with @why set, on a mismatch.
 */
static bool run_cleared_only(struct slots *s, unsigned int a, unsigned int b,
			     const char *what, char *why)
{
	unsigned int i;
	bool ok = true;

	for (i = 0; i < s->n && ok; i++) {
		u64 e = entry_read(s, i), want = i >= a && i < b ? 0 : s->orig[i];

		if (e != want)
			ok = FAIL(why, "%s: entry %u (run [%u, %u)) is %#llx, want %#llx",
				  what, i, a, b, e, want);
	}
	run_restore(s);
	return ok;
}

/* A run of RUN_LEN entries inside one frame: exactly those are cleared. */
static bool check_run_clears(struct slots *unused, char *why)
{
	struct slots *s = slots_create(BATCH_SLOTS, PAGE_KERNEL);
	struct mmu_update req;
	unsigned int i;
	int done = -1, rc;
	bool ok;

	if (!s)
		return FAIL(why, "cannot run because %u entries could not be mapped", BATCH_SLOTS);
	/* Not the area's first entry: one entry before the run stays. */
	i = run_find(s, 1, RUN_LEN + 1);
	if (i >= s->n) {
		ok = FAIL(why, "cannot run because no %u entries share an L1 frame", RUN_LEN + 1);
		goto out;
	}
	run_req(&req, s->maddr[i], RUN_LEN);
	rc = mmu_update(&req, 1, &done);
	if (rc || done != 1) {
		ok = FAIL(why, "rc %d, done %d, want 0, 1", rc, done);
		run_restore(s);
		goto out;
	}
	if (req.ptr != (s->maddr[i] | MMU_PT_CLEAR_RUN) || req.val != RUN_LEN) {
		ok = FAIL(why, "a whole run rewrote its request: ptr %#llx val %llu",
			  req.ptr, req.val);
		run_restore(s);
		goto out;
	}
	ok = run_cleared_only(s, i, i + RUN_LEN, "run", why);
out:
	slots_free(s);
	return ok;
}

/*
 * A run that ends in the frame's last slot is done; one that would cross
 * into the next frame, and one of 0 or of more than 2^32 entries, are
 * refused with -EINVAL, nothing changed, the request untouched.
 */
static bool check_run_page_end(struct slots *unused, char *why)
{
	struct slots *s = slots_create(BATCH_SLOTS, PAGE_KERNEL);
	const struct {
		int off;	/* the run's first entry, from the frame's last slot */
		u64 count;
	} bad[] = {
		{ 0, 2 },			/* one entry past the frame */
		{ -7, 9 },
		{ -3, 0 },			/* none at all */
		{ -3, (1ULL << 32) | 1 },	/* 1 if Xen truncated val to 32 bits */
		{ -3, ~0ULL },
	};
	struct mmu_update req;
	unsigned int e, k;
	int done, rc;
	bool ok = true;

	if (!s)
		return FAIL(why, "cannot run because %u entries could not be mapped", BATCH_SLOTS);
	e = run_find_table_end(s);
	if (e < 8 || e >= s->n) {
		ok = FAIL(why, "cannot run because no frame ends after entry 8 (%u)", e);
		goto out;
	}
	for (k = 0; k < ARRAY_SIZE(bad) && ok; k++) {
		u64 ptr = s->maddr[e + bad[k].off] | MMU_PT_CLEAR_RUN;

		run_req(&req, s->maddr[e + bad[k].off], bad[k].count);
		done = -1;
		rc = mmu_update(&req, 1, &done);
		if (rc != -EINVAL || done != 0 || req.ptr != ptr || req.val != bad[k].count)
			ok = FAIL(why, "run of %llu at slot %lu: rc %d done %d ptr %#llx val %llu",
				  bad[k].count, (unsigned long)L1_SLOT(s, e + bad[k].off), rc, done,
				  req.ptr, req.val);
		if (!run_cleared_only(s, 0, 0, "after a refused run", why))
			ok = false;
	}
	if (!ok)
		goto out;
	/* The last 8 entries of the frame. */
	run_req(&req, s->maddr[e - 7], 8);
	done = -1;
	rc = mmu_update(&req, 1, &done);
	if (rc || done != 1) {
		ok = FAIL(why, "run to the frame's end: rc %d, done %d, want 0, 1", rc, done);
		run_restore(s);
		goto out;
	}
	ok = run_cleared_only(s, e - 7, e + 1, "run to the frame's end", why);
out:
	slots_free(s);
	return ok;
}

/*
 * A run aimed at a frame that is not an L1 table: a plain frame (Dom0
 * maps it writable) and an L2 table.  -EINVAL, nothing changed.
 */
static bool check_run_not_l1(struct slots *s, char *why)
{
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	unsigned long va = (unsigned long)s->va;
	u64 *word, *l2e, before, l2before;
	struct mmu_update req;
	int done = -1, rc;
	bool ok = true;

	if (!page)
		return FAIL(why, "cannot run because no memory");
	word = (u64 *)page_address(page) + 3;
	word[0] = 0x0123456789abcdefULL;
	word[1] = 0x1123456789abcdefULL;
	before = word[0];
	run_req(&req, arbitrary_virt_to_machine(word).maddr, 2);
	rc = mmu_update(&req, 1, &done);
	if (rc != -EINVAL || done != 0 || READ_ONCE(word[0]) != before ||
	    READ_ONCE(word[1]) != 0x1123456789abcdefULL)
		ok = FAIL(why, "plain frame: rc %d, done %d, words %#llx %#llx; want %d, 0, same",
			  rc, done, READ_ONCE(word[0]), READ_ONCE(word[1]), -EINVAL);
	__free_page(page);
	if (!ok)
		return false;

	l2e = (u64 *)pmd_offset(pud_offset(p4d_offset(pgd_offset(current->active_mm, va), va),
				      va), va);
	l2before = READ_ONCE(*l2e);
	run_req(&req, arbitrary_virt_to_machine(l2e).maddr, 1);
	done = -1;
	rc = mmu_update(&req, 1, &done);
	if (rc != -EINVAL || done != 0 || READ_ONCE(*l2e) != l2before)
		return FAIL(why, "L2 table: rc %d, done %d, entry %#llx (want %d, 0, %#llx)",
			    rc, done, READ_ONCE(*l2e), -EINVAL, l2before);
	return true;
}

/*
 * Runs, normal updates and swaps in one call, in order; then a call whose
 * second run is refused: the first run stays done (pdone 1), the third
 * is not done, its entries untouched.
 */
static bool check_run_mixed(struct slots *unused, char *why)
{
	struct slots *s = slots_create(BATCH_SLOTS, PAGE_KERNEL);
	struct mmu_update req[4];
	unsigned int i, e;
	int done = -1, rc;
	bool ok = true;

	if (!s)
		return FAIL(why, "cannot run because %u entries could not be mapped", BATCH_SLOTS);
	i = run_find(s, 0, 12);
	e = run_find_table_end(s);
	if (i >= s->n || e >= s->n || e < 1) {
		ok = FAIL(why, "cannot run because no 12 entries share a frame, or no frame ends");
		goto out;
	}
	/* Entry i flipped, then [i, i + 4) cleared, i + 5 swapped, [i + 8, i + 10) cleared. */
	normal_req(&req[0], s->maddr[i], entry_flipped(s->orig[i]));
	run_req(&req[1], s->maddr[i], 4);
	swap_req(&req[2], s->maddr[i + 5], 0);
	run_req(&req[3], s->maddr[i + 8], 2);
	rc = mmu_update(req, 4, &done);
	if (rc || done != 4 || req[2].val != s->orig[i + 5]) {
		ok = FAIL(why, "mixed: rc %d, done %d, swap returned %#llx; want 0, 4, %#llx",
			  rc, done, req[2].val, s->orig[i + 5]);
		goto out;
	}
	for (e = 0; e < s->n && ok; e++) {
		bool none = (e >= i && e < i + 4) || e == i + 5 || e == i + 8 || e == i + 9;

		if (entry_read(s, e) != (none ? 0 : s->orig[e]))
			ok = FAIL(why, "mixed: entry %u is %#llx, want %#llx", e,
				  entry_read(s, e), none ? 0 : s->orig[e]);
	}
	run_restore(s);
	if (!ok)
		goto out;

	e = run_find_table_end(s);
	run_req(&req[0], s->maddr[i], 3);
	run_req(&req[1], s->maddr[e], 2);	/* crosses the frame's end */
	run_req(&req[2], s->maddr[i + 4], 3);
	done = -1;
	rc = mmu_update(req, 3, &done);
	if (rc != -EINVAL || done != 1) {
		ok = FAIL(why, "refused 2nd of 3: rc %d, done %d; want %d, 1", rc, done, -EINVAL);
		run_restore(s);
		goto out;
	}
	ok = run_cleared_only(s, i, i + 3, "refused 2nd of 3", why);
out:
	slots_free(s);
	return ok;
}

/*
 * Units of RUN_UNIT requests, in one call, until Xen preempts a run
 * mid-run: the first and last entries of the area's longest stretch in
 * one frame mapped again (two normal updates), the run clearing the whole
 * stretch, and swaps of those two entries to 0, which must return 0 (the
 * run cleared them, ends included, before the next request: a run
 * counted done without finishing, or resumed past its end, leaves one
 * mapped).  The entries between are already none after the first unit,
 * so most of a unit's time is its run, and most preemptions land
 * mid-run.  A run stopped mid-run has its request written back, ptr
 * advanced by what it cleared and val the count left, before the
 * continuation, which must finish it (pdone = all).
 */
#define RUN_UNIT	5
static bool check_run_preempted(struct slots *unused, char *why)
{
	struct slots *s = slots_create(BATCH_SLOTS, PAGE_KERNEL);
	unsigned int a = 0, len = 0, b, i, j, units, count = 0, try, mid = 0;
	struct mmu_update *req = NULL;
	bool ok = true;
	int done, rc;

	if (!s)
		return FAIL(why, "cannot run because %u entries could not be mapped", BATCH_SLOTS);
	/* The longest stretch of the area in one frame: at least 256 entries. */
	for (i = 0; i < s->n; i = j) {
		for (j = i + 1; j < s->n && L1_FRAME(s, j) == L1_FRAME(s, i); j++)
			;
		if (j - i > len) {
			a = i;
			len = j - i;
		}
	}
	b = a + len - 1;
	for (try = 0, units = RUN_PREEMPT_REQS; try < PREEMPT_TRIES && !mid && ok;
	     try++, units *= 2) {
		count = units * RUN_UNIT;
		vfree(req);
		req = vmalloc(array_size(count, sizeof(*req)));
		if (!req) {
			ok = FAIL(why, "cannot run because no memory for %u requests", count);
			break;
		}
		for (j = 0; j < count; j += RUN_UNIT) {
			normal_req(&req[j], s->maddr[a], s->orig[a]);
			normal_req(&req[j + 1], s->maddr[b], s->orig[b]);
			run_req(&req[j + 2], s->maddr[a], len);
			swap_req(&req[j + 3], s->maddr[a], 0);
			swap_req(&req[j + 4], s->maddr[b], 0);
		}
		done = -1;
		rc = mmu_update(req, count, &done);
		if (rc || done != count) {
			ok = FAIL(why, "%u units of a run of %u: rc %d, done %d, want 0, %u",
				  units, len, rc, done, count);
			break;
		}
		for (j = 0; j < count && ok; j += RUN_UNIT) {
			struct mmu_update *r = &req[j + 2];
			u64 cleared = ((r->ptr & ~7ULL) - s->maddr[a]) / sizeof(u64);

			if (req[j + 3].val || req[j + 4].val) {
				ok = FAIL(why, "unit %u: run left entries %u, %u as %#llx, %#llx",
					  j / RUN_UNIT, a, b, req[j + 3].val, req[j + 4].val);
				break;
			}
			if (r->val == len && r->ptr == (s->maddr[a] | MMU_PT_CLEAR_RUN))
				continue;
			/* Written back at a stop: cleared + left = len, same frame and sub-op. */
			if ((r->ptr & 7) == MMU_PT_CLEAR_RUN &&
			    (r->ptr & PAGE_MASK) == (s->maddr[a] & PAGE_MASK) &&
			    r->val && cleared && cleared + r->val == len) {
				mid++;
				continue;
			}
			ok = FAIL(why, "unit %u: run written back: %#llx %llu (%u at %#llx)",
				  j / RUN_UNIT, r->ptr, r->val, len, s->maddr[a]);
		}
		if (ok)
			ok = run_cleared_only(s, a, a + len, "after the call", why);
	}
	if (ok && !mid)
		ok = FAIL(why, "cannot run because no run was preempted mid-run (%u units)",
			  units / 2);
	else if (ok)
		pr_info("%u units with a run of %u entries in one call: %u runs written back mid-run and resumed\n",
			units / 2, len, mid);
	vfree(req);
	slots_free(s);
	return ok;
}

/* --- stock Xen ------------------------------------------------------- */

/*
 * Sub-op 4 is unknown to stock Xen: the request fails exactly as one with
 * sub-op 7 (unknown to both), before anything is read or written.
 */
static bool check_stock_refuses(struct slots *s, char *why)
{
	u64 before = entry_read(s, 0), new = entry_flipped(before), val = new;
	struct mmu_update unknown = {
		.ptr = s->maddr[0] | 7,
		.val = new,
	};
	int done, rc, rc_unknown, done_unknown = -1;

	rc = swap_one(s->maddr[0], &val, &done);
	rc_unknown = mmu_update(&unknown, 1, &done_unknown);
	if (rc >= 0 || rc != rc_unknown)
		return FAIL(why, "rc %d, want what unknown sub-op 7 gets, %d (negative)",
			    rc, rc_unknown);
	if (done != 0 || val != new || entry_read(s, 0) != before)
		return FAIL(why,
			    "done %d (want 0), val %#llx (want %#llx), entry %#llx (want %#llx)",
			    done, val, new, entry_read(s, 0), before);
	pr_info("sub-op %d refused with %d, as unknown sub-op 7\n", MMU_PT_UPDATE_SWAP, rc);
	return true;
}

/* Sub-op 5 likewise: a run is refused as sub-op 7, the entries untouched. */
static bool check_stock_run_refused(struct slots *s, char *why)
{
	struct mmu_update req, unknown = { .ptr = s->maddr[0] | 7, .val = 2 };
	int done = -1, rc, rc_unknown, done_unknown = -1;

	run_req(&req, s->maddr[0], 2);
	rc = mmu_update(&req, 1, &done);
	rc_unknown = mmu_update(&unknown, 1, &done_unknown);
	if (rc >= 0 || rc != rc_unknown)
		return FAIL(why, "rc %d, want what unknown sub-op 7 gets, %d (negative)",
			    rc, rc_unknown);
	if (done != 0 || req.val != 2 || entry_read(s, 0) != s->orig[0] ||
	    entry_read(s, 1) != s->orig[1])
		return FAIL(why, "done %d (0), val %llu (2), entries %#llx %#llx (%#llx %#llx)",
			    done, req.val, entry_read(s, 0), entry_read(s, 1),
			    s->orig[0], s->orig[1]);
	pr_info("sub-op %d refused with %d, as unknown sub-op 7\n", MMU_PT_CLEAR_RUN, rc);
	return true;
}

/* --- a plain frame the other vCPU keeps writing ------------------------ */

#define BUSY_SWAPS	2000	/* swaps of a word the other vCPU rewrites */
#define BUSY_MARK	BIT_ULL(63)	/* set in every value the swaps install */

/* Helper: rewrite the word with an increasing count (bit 63 clear). */
static int busy_helper(void *arg)
{
	struct duo *d = arg;
	u64 n = 0;

	while (!kthread_should_stop()) {
		WRITE_ONCE(*(u64 *)d->va, n++ & ~BUSY_MARK);
		if (!(n & 1023))
			cond_resched();
	}
	return 0;
}

/*
 * A plain frame the other vCPU keeps writing: every swap is refused with
 * -EINVAL before the word is touched (Xen used to retry a cmpxchg on it
 * and give up with -EBUSY); the word never holds a value of ours.
 */
static bool busy_main(struct duo *d)
{
	u64 *word = d->va, maddr = arbitrary_virt_to_machine(word).maddr, val, mine;
	unsigned int i;
	int done, rc;

	for (i = 0; i < BUSY_SWAPS; i++) {
		mine = BUSY_MARK | i;
		val = mine;
		rc = swap_one(maddr, &val, &done);
		if (rc != -EINVAL || done != 0 || val != mine || (READ_ONCE(*word) & BUSY_MARK))
			return FAIL(d->why, "swap %u: rc %d done %d val %#llx (%#llx) word %#llx",
				    i, rc, done, val, mine, READ_ONCE(*word));
		if (!(i & 255))
			cond_resched();
	}
	pr_info("busy plain frame: %u swaps refused with -EINVAL\n", BUSY_SWAPS);
	return true;
}

static bool check_plain_frame_busy(struct slots *s, char *why)
{
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	struct duo d = { .main = busy_main, .helper = busy_helper, .s = s };
	bool ok;

	if (!page)
		return FAIL(why, "cannot run because no memory");
	d.va = (u64 *)page_address(page) + 7;
	ok = duo_run(&d, why);
	__free_page(page);
	return ok;
}

/* --------------------------------------------------------------------- */

/* In order: the later ones assume the earlier ones work. */
static const struct {
	const char *name;
	bool (*fn)(struct slots *s, char *why);
} patched_checks[] = {
	{ "swap-present-entry", check_swap_present },
	{ "swap-clear-and-install", check_swap_clear },
	{ "batch-old-value-per-slot", check_batch },
	{ "normal-run-one-call", check_normal_run },
	{ "normal-two-frames-one-call", check_normal_two_frames },
	{ "normal-then-swap-one-frame", check_normal_then_swap },
	{ "normal-run-refused-frees-frame", check_normal_run_refused },
	{ "refuse-writable-pt-frame", check_refuse_pt_frame_rw },
	{ "refuse-domid-xen-frame", check_refuse_xen_frame },
	{ "refuse-unowned-frame", check_refuse_unowned_frame },
	{ "refuse-reserved-address-bit", check_refuse_reserved_bit },
	{ "l2-target-einval", check_l2 },
	{ "l3-target-einval", check_l3 },
	{ "l4-target-einval", check_l4 },
	{ "plain-frame-einval", check_plain_frame },
	{ "plain-frame-untyped-einval", check_plain_frame_untyped },
	{ "plain-frame-busy-einval", check_plain_frame_busy },
	{ "null-pdone-einval", check_null_pdone },
	{ "pfd-missing-esrch", check_pfd_missing },
	{ "pfd-self-is-own", check_pfd_self },
	{ "ad-bits-from-other-vcpu", check_ad },
	{ "preempted-batch", check_preempted_batch },
	{ "preempted-normal-batch", check_preempted_normal_batch },
	{ "readonly-request-array", check_readonly_array },
	{ "readonly-pdone-efault", check_readonly_pdone },
	{ "unmapped-request-array", check_unmapped_array },
	{ "self-referential-swap-to-other-page", check_self_referential_other },
	{ "self-referential-swap-to-none", check_self_referential_none },
	{ "run-clears-its-entries-only", check_run_clears },
	{ "run-to-frame-end-and-refused-counts", check_run_page_end },
	{ "run-not-l1-einval", check_run_not_l1 },
	{ "run-mixed-and-refused-part-way", check_run_mixed },
	{ "run-preempted-mid-run", check_run_preempted },
};

/*
 * Record check @check: feature bit @bit (@name), as xen_*_feature()
 * returned it in @feature, must be set on a patched Xen and clear on stock.
 */
static void record_feature(const char *check, const char *name, int bit, int feature,
			   bool patched)
{
	if (feature < 0)
		snprintf(reason, WHY_SIZE, "XENVER_get_features failed (%d)", feature);
	else
		snprintf(reason, WHY_SIZE, "%s (bit %d) is %s", name, bit,
			 feature ? "set" : "clear");
	record(feature == patched, check, reason);
}

static void run_checks(bool patched)
{
	struct slots *s;
	unsigned int i;

	record_feature("feature-bit", "XENFEAT_mmu_pt_update_swap",
		       XENFEAT_mmu_pt_update_swap, xen_swap_feature(), patched);
	record_feature("run-feature-bit", "XENFEAT_mmu_pt_clear_run",
		       XENFEAT_mmu_pt_clear_run, xen_run_feature(), patched);

	s = slots_create(NR_SLOTS, PAGE_KERNEL);
	if (!s) {
		record(false, "fixture", "cannot run because the test entries could not be mapped");
		goto out;
	}
	if (!patched) {
		record(check_stock_refuses(s, reason), "stock-swap-refused", reason);
		record(check_stock_run_refused(s, reason), "stock-run-refused", reason);
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(patched_checks); i++)
		record(patched_checks[i].fn(s, reason), patched_checks[i].name, reason);
out:
	slots_free(s);
}

static int results_show(struct seq_file *m, void *v)
{
	seq_write(m, results, results_len);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(results);

static int __init ptswap_xen_test_init(void)
{
	bool patched;
	int rc = -ENOMEM;

	if (!strcmp(expect, "patched")) {
		patched = true;
	} else if (!strcmp(expect, "stock")) {
		patched = false;
	} else {
		pr_err("expect=patched or expect=stock, not \"%s\"\n", expect);
		return -EINVAL;
	}
	if (batch < MIN_BATCH || batch > INT_MAX / (2 << PREEMPT_TRIES) || !race_swaps) {
		pr_err("batch must be %u..%d, race_swaps at least 1\n", MIN_BATCH,
		       INT_MAX / (2 << PREEMPT_TRIES));
		return -EINVAL;
	}
	if (!xen_pv_domain()) {
		pr_err("not a Xen PV domain: nothing to check\n");
		return -ENODEV;
	}

	results = kzalloc(RESULTS_SIZE, GFP_KERNEL);
	data_page[0] = alloc_page(GFP_KERNEL | __GFP_ZERO);
	data_page[1] = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!results || !data_page[0] || !data_page[1])
		goto fail;
	data_mfn[0] = page_mfn(data_page[0]);
	data_mfn[1] = page_mfn(data_page[1]);

	run_checks(patched);

	debug_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("results", 0444, debug_dir, NULL, &results_fops);
	return 0;
fail:
	if (data_page[1])
		__free_page(data_page[1]);
	if (data_page[0])
		__free_page(data_page[0]);
	kfree(results);
	return rc;
}

static void __exit ptswap_xen_test_exit(void)
{
	debugfs_remove_recursive(debug_dir);
	__free_page(data_page[1]);
	__free_page(data_page[0]);
	kfree(results);
}

module_init(ptswap_xen_test_init);
module_exit(ptswap_xen_test_exit);
MODULE_DESCRIPTION("Checks of Xen's MMU_PT_UPDATE_SWAP and MMU_PT_CLEAR_RUN sub-ops from a PV Dom0");
MODULE_LICENSE("GPL");
