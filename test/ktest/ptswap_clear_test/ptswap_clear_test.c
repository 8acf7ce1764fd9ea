// SPDX-License-Identifier: GPL-2.0
/*
 * ptswap_clear_test - drive the installed ptep_get_and_clear (xen_ptswap's
 * op, module/clear.c) on a real, pinned page table of a user process.
 *
 * A user program (clear_run.py beside this file, run by
 * test/suites/hook.sh) maps one shared (shmem) page and writes
 * "ADDR MODE SCENARIO" to /sys/kernel/debug/ptswap_clear_test/run, MODE
 * being xen_ptswap's mode parameter.  The write handler finds the PTE of
 * ADDR in the writer's mm (clear_pte_lock(), page table lock held), runs the
 * scenario on it, checks the raw (machine) values it sees, logs one
 * "PASS: <check>" or "FAIL: <check>: got X want Y" line per check and
 * puts the entry back.  On Xen PV a running process's page tables are
 * pinned: read-only to the guest, so every write goes through Xen.
 *
 * swap:  a present, writable, clean entry W (a shmem page after a read
 *        fault).  In lazy MMU mode, queue set_pte(W|D), then call
 *        ptep_get_and_clear(): the op must issue the queue before it
 *        swaps, so it returns W|D and the entry is none after lazy mode.
 *        Without that flush the swap returns W and the queued W|D lands
 *        afterwards; a return value built with __pte() translates the
 *        frame a second time.
 * defer: a present, writable, dirty entry (the page written).  In lazy
 *        MMU mode ptep_get_and_clear() must queue the clear in modes
 *        batched and noswap (the entry is unchanged until lazy mode ends)
 *        and clear it at once in mode sync; either way it returns the old
 *        entry and the entry is none after lazy mode.
 * twice: the defer scenario's entry cleared twice in one lazy MMU section:
 *        the second call must return none, not the value the first
 *        call's still-queued clear replaces (which the caller would free
 *        a second time): the op issues its own queued clear of an entry
 *        before it reads that entry again (module/clear.c).
 * ro:    a present, read-only, clean entry (the page read, then
 *        mprotect(PROT_READ)), cleared with no mmu_gather and no TLB
 *        flush pending, as rmap's ptep_clear_flush() clears an entry that
 *        fork write-protected: it must be cleared at once in every mode
 *        (swapped, or in mode noswap the native xchg), never queued, since
 *        a CPU with a stale writable TLB entry could set D in it meanwhile.
 * unlazy: the defer scenario's entry cleared outside lazy MMU mode, as
 *        rmap's try_to_unmap_one() clears: nothing is queued there, so it
 *        must be cleared at once in every mode (swapped, or in mode noswap
 *        the native xchg) and return the old entry.
 * Mode noswap clears the swap scenario's entry with the native xchg
 * instead of the sub-op: the same values must come back (the caller
 * tells the two apart by xen_ptswap's counters).
 *
 * The write returns its length if every check passed, -EIO if one
 * failed (or the page table was not pinned), -EINVAL for bad input or an
 * address without a present PTE, and -EAGAIN, running nothing, for a
 * page whose entry __pte() would leave as it is (a frame above the end of
 * the P2M is not translated): on such a page a return value built with
 * __pte() instead of native_make_pte() would go unnoticed, so the caller
 * maps another page and asks again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/page-flags.h>
#include <linux/pgtable.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/paravirt.h>

#include "xps_ktest_lazy.h"

enum clear_scenario {
	CLEAR_SWAP,
	CLEAR_DEFER,
	CLEAR_TWICE,
	CLEAR_RO,
	CLEAR_UNLAZY,
};

/* What one scenario saw, raw machine values, printed after unlocking. */
struct clear_seen {
	pteval_t old;		/* the entry before the scenario */
	pteval_t want;		/* what ptep_get_and_clear() must return */
	pteval_t queued;	/* the entry after set_pte() in lazy mode (swap) */
	pteval_t ret;		/* what ptep_get_and_clear() returned */
	pteval_t ret2;		/* what a second call returned (twice) */
	pteval_t inside;	/* the entry after it, still in lazy mode */
	pteval_t after;		/* the entry after lazy mode */
	unsigned long pfn;	/* the page's frame as Linux numbers it */
};

static DEFINE_MUTEX(clear_mutex);
static struct dentry *clear_dir;

/* One check: log it, and return whether it passed. */
static bool clear_check(const char *name, const char *mode, pteval_t got,
			pteval_t want, const char *why)
{
	if (got == want) {
		pr_info("PASS: %s %s\n", name, mode);
		return true;
	}
	pr_err("FAIL: %s %s: got %llx want %llx%s\n", name, mode,
	       (unsigned long long)got, (unsigned long long)want, why);
	return false;
}

/**
 * clear_pte_lock() - find the PTE that maps an address and lock its table
 * @mm: the address space; the caller holds mmap_read_lock(@mm)
 * @addr: a user address in @mm
 * @ptlp: set to the page table lock taken
 *
 * follow_pte() did this until Linux 6.10 turned it into
 * follow_pfnmap_start(), for VM_IO and VM_PFNMAP mappings only, and no
 * exported function locks an ordinary mapping's PTE.  So walk the tables
 * as __pte_offset_map_lock() (mm/pgtable-generic.c) does: read the PMD,
 * take the lock of the PTE table it points to and check that the PMD did
 * not change meanwhile, all under rcu_read_lock(), which keeps a PTE table
 * that is being retracted (freed through RCU since 6.6) from being reused.
 * Release with clear_pte_unlock().
 *
 * Return: the PTE (present or not), or NULL, nothing held, if no PTE table
 * maps @addr (none, bad or huge entries above it, or the PMD changed).
 */
static pte_t *clear_pte_lock(struct mm_struct *mm, unsigned long addr,
			     spinlock_t **ptlp)
{
	pmd_t *pmd, pmdval;
	pgd_t *pgd;
	p4d_t *p4d;
	pud_t *pud;

	pgd = pgd_offset(mm, addr);
	if (pgd_none(*pgd) || pgd_bad(*pgd))
		return NULL;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(*p4d) || p4d_bad(*p4d))
		return NULL;
	pud = pud_offset(p4d, addr);
	if (pud_none(*pud) || pud_bad(*pud))
		return NULL;
	pmd = pmd_offset(pud, addr);
	rcu_read_lock();
	pmdval = READ_ONCE(*pmd);
	if (pmd_none(pmdval) || pmd_bad(pmdval) || pmd_trans_huge(pmdval))
		goto none;
	*ptlp = pte_lockptr(mm, &pmdval);
	spin_lock(*ptlp);
	if (!pmd_same(pmdval, READ_ONCE(*pmd))) {
		spin_unlock(*ptlp);
		goto none;
	}
	return pte_offset_kernel(&pmdval, addr);
none:
	rcu_read_unlock();
	return NULL;
}

/* Undo clear_pte_lock(). */
static void clear_pte_unlock(spinlock_t *ptl)
{
	spin_unlock(ptl);
	rcu_read_unlock();
}

/* Run @sc on @ptep (locked by the caller) and fill @s. */
static void clear_scenario_run(struct mm_struct *mm, unsigned long addr,
			       pte_t *ptep, enum clear_scenario sc,
			       struct clear_seen *s)
{
	pte_t ret;

	s->old = native_pte_val(ptep_get(ptep));
	s->want = sc == CLEAR_SWAP ? s->old | _PAGE_DIRTY : s->old;

	if (sc != CLEAR_UNLAZY)
		xps_lazy_enter();
	if (sc == CLEAR_SWAP) {
		/* Queued into the lazy MMU multicall, not yet in the entry. */
		set_pte(ptep, native_make_pte(s->want));
		s->queued = native_pte_val(ptep_get(ptep));
	}
	ret = ptep_get_and_clear(mm, addr, ptep);
	s->ret = native_pte_val(ret);
	if (sc == CLEAR_TWICE)
		s->ret2 = native_pte_val(ptep_get_and_clear(mm, addr, ptep));
	s->inside = native_pte_val(ptep_get(ptep));
	if (sc != CLEAR_UNLAZY)
		xps_lazy_leave();
	s->after = native_pte_val(ptep_get(ptep));

	/* Put the entry back as it must be, whatever the op returned. */
	set_pte_at(mm, addr, ptep, native_make_pte(s->want));
}

static int clear_run(unsigned long addr, const char *mode_name,
		     enum clear_scenario sc)
{
	bool sync = !strcmp(mode_name, "sync");
	struct mm_struct *mm = current->mm;
	char mode[24];
	bool want_dirty = sc == CLEAR_DEFER || sc == CLEAR_TWICE ||
			  sc == CLEAR_UNLAZY;
	bool want_write = sc != CLEAR_RO;
	struct clear_seen s = {};
	spinlock_t *ptl;	/* the page table lock, clear_pte_lock()'s */
	pte_t *ptep;
	pte_t pte;
	bool ok;

	if (!mm)
		return -EINVAL;
	snprintf(mode, sizeof(mode), "(mode %s)", mode_name);
	mmap_read_lock(mm);
	ptep = clear_pte_lock(mm, addr, &ptl);
	if (ptep && !pte_present(ptep_get(ptep))) {
		clear_pte_unlock(ptl);
		ptep = NULL;
	}
	if (!ptep) {
		mmap_read_unlock(mm);
		pr_err("no present PTE maps %lx\n", addr);
		return -EINVAL;
	}
	if (!PagePinned(virt_to_page(ptep))) {
		clear_pte_unlock(ptl);
		mmap_read_unlock(mm);
		pr_err("FAIL: setup %s: the page table of %lx is not pinned\n",
		       mode, addr);
		return -EIO;
	}
	pte = ptep_get(ptep);
	if (!pte_present(pte) || !!pte_write(pte) != want_write ||
	    !!pte_dirty(pte) != want_dirty) {
		clear_pte_unlock(ptl);
		mmap_read_unlock(mm);
		pr_err("FAIL: setup %s: entry %llx at %lx is not present, %s and %s\n",
		       mode, (unsigned long long)native_pte_val(pte), addr,
		       want_write ? "writable" : "read-only",
		       want_dirty ? "dirty" : "clean");
		return -EIO;
	}
	/*
	 * A return value built with __pte() goes through the P2M lookup
	 * again, which leaves a frame above the P2M's end as it is: such a
	 * page could not tell a translated value from a raw one.
	 */
	if (native_pte_val(__pte(native_pte_val(pte))) == native_pte_val(pte)) {
		clear_pte_unlock(ptl);
		mmap_read_unlock(mm);
		pr_info("note: __pte() leaves entry %llx as it is: asking for another page\n",
			(unsigned long long)native_pte_val(pte));
		return -EAGAIN;
	}
	s.pfn = pte_pfn(pte);
	clear_scenario_run(mm, addr, ptep, sc, &s);
	clear_pte_unlock(ptl);
	mmap_read_unlock(mm);

	pr_info("%s %s: pfn %lx old %llx queued %llx returned %llx then %llx inside %llx after %llx\n",
		sc == CLEAR_SWAP ? "swap" : sc == CLEAR_DEFER ? "defer" :
		sc == CLEAR_TWICE ? "twice" : sc == CLEAR_RO ? "ro" : "unlazy",
		mode, s.pfn, (unsigned long long)s.old,
		(unsigned long long)s.queued, (unsigned long long)s.ret,
		(unsigned long long)s.ret2, (unsigned long long)s.inside,
		(unsigned long long)s.after);
	if (sc == CLEAR_SWAP) {
		if (s.queued != s.old)
			pr_info("note: set_pte() in lazy MMU mode was not queued (entry %llx)\n",
				(unsigned long long)s.queued);
		ok = clear_check("S1 swap: returned value", mode, s.ret, s.want,
				 " (the queued set_pte() must be issued before the swap; value raw, not translated)");
		ok &= clear_check("S1 swap: entry after lazy mode", mode,
				  s.after, 0, " (a queued update landed after the swap)");
	} else if (sc == CLEAR_RO) {
		ok = clear_check("S4 ro: returned value", mode, s.ret, s.want, "");
		ok &= clear_check("S4 ro: entry inside lazy mode", mode,
				  s.inside, 0,
				  " (a read-only clean entry must be cleared at once: a stale writable TLB entry could set D)");
		ok &= clear_check("S4 ro: entry after lazy mode", mode,
				  s.after, 0, "");
	} else if (sc == CLEAR_UNLAZY) {
		ok = clear_check("S5 unlazy: returned value", mode, s.ret,
				 s.want, "");
		ok &= clear_check("S5 unlazy: entry right after the call", mode,
				  s.inside, 0,
				  " (outside lazy MMU mode nothing is queued: the clear must be done at once)");
	} else if (sc == CLEAR_TWICE) {
		ok = clear_check("S3 twice: first returned value", mode, s.ret,
				 s.want, "");
		ok &= clear_check("S3 twice: second returned value", mode,
				  s.ret2, 0,
				  " (the first call's queued clear must be issued before the entry is read again)");
		ok &= clear_check("S3 twice: entry after lazy mode", mode,
				  s.after, 0, "");
	} else {
		ok = clear_check("S2 defer: returned value", mode, s.ret,
				 s.want, "");
		ok &= clear_check("S2 defer: entry inside lazy mode", mode,
				  s.inside, sync ? 0 : s.old,
				  sync ? " (mode sync clears at once)" :
					 " (modes batched and noswap queue the clear of a dirty entry on a pinned table)");
		ok &= clear_check("S2 defer: entry after lazy mode", mode,
				  s.after, 0, "");
	}
	return ok ? 0 : -EIO;
}

static ssize_t run_write(struct file *file, const char __user *ubuf,
			 size_t len, loff_t *ppos)
{
	char buf[80], mode[16], scenario[16];
	enum clear_scenario sc;
	unsigned long addr;
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%lx %15s %15s", &addr, mode, scenario) != 3)
		return -EINVAL;
	if (strcmp(mode, "batched") && strcmp(mode, "sync") &&
	    strcmp(mode, "noswap"))
		return -EINVAL;
	if (!strcmp(scenario, "swap"))
		sc = CLEAR_SWAP;
	else if (!strcmp(scenario, "defer"))
		sc = CLEAR_DEFER;
	else if (!strcmp(scenario, "twice"))
		sc = CLEAR_TWICE;
	else if (!strcmp(scenario, "ro"))
		sc = CLEAR_RO;
	else if (!strcmp(scenario, "unlazy"))
		sc = CLEAR_UNLAZY;
	else
		return -EINVAL;

	mutex_lock(&clear_mutex);
	err = clear_run(addr, mode, sc);
	mutex_unlock(&clear_mutex);
	return err ? err : len;
}

static const struct file_operations run_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = run_write,
	.llseek = noop_llseek,
};

static int __init clear_test_init(void)
{
	clear_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("run", 0200, clear_dir, NULL, &run_fops);
	return 0;
}

static void __exit clear_test_exit(void)
{
	debugfs_remove(clear_dir);
}

module_init(clear_test_init);
module_exit(clear_test_exit);

MODULE_DESCRIPTION("Drives the installed ptep_get_and_clear on a pinned user page table");
MODULE_AUTHOR("xen-ptswap developers");
MODULE_LICENSE("GPL");
