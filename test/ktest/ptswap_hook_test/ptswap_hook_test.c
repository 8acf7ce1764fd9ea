// SPDX-License-Identifier: GPL-2.0
/*
 * ptswap_hook_test - a second would-be owner of
 * pv_ops.mmu.ptep_get_and_clear, to test the slot's ownership interface
 * (xen_register_ptep_get_and_clear() and
 * xen_unregister_ptep_get_and_clear(), test/linux-patch/) against
 * xen_ptswap in both load orders (test/suites/hook.sh).
 *
 * With register=1 (the default) it installs an op that counts its calls
 * and clears with the native xchg (what the kernel's default does), and
 * fails to load with the interface's error if the slot is taken, so that
 * insmod reports EBUSY.  With register=0 it installs nothing and only
 * shows which op the slot holds.  With leak=1 it registers but does not
 * unregister at unload, so that the kernel's module notifier has to put
 * the default back.
 *
 * debugfs, /sys/kernel/debug/ptswap_hook_test/:
 *  - slot:  "%ps" of the op pv_ops.mmu.ptep_get_and_clear holds now
 *           (the default is xen_ptep_get_and_clear);
 *  - calls: calls of this module's op since it was loaded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pgtable.h>
#include <linux/seq_file.h>
#include <asm/paravirt.h>
#include <asm/xen/ptep.h>

static bool do_register = true;

/**
 * DOC: register
 *
 * Module parameter "register", a bool (default 1): register this
 * module's op with xen_register_ptep_get_and_clear() at load, and fail
 * the load with its error if it is refused (-EBUSY while another module
 * owns the slot).  With register=0 nothing is registered: the module
 * only shows the slot.
 */
module_param_named(register, do_register, bool, 0444);
MODULE_PARM_DESC(register,
		 "register a counting op for ptep_get_and_clear at load (default 1)");

static bool leak;

/**
 * DOC: leak
 *
 * Module parameter "leak", a bool (default 0): do not unregister the op
 * at unload, so that the kernel's MODULE_STATE_GOING notifier has to
 * restore the default op (and says so in the kernel log).
 */
module_param(leak, bool, 0444);
MODULE_PARM_DESC(leak,
		 "keep the op registered at unload, for the kernel to restore the default (default 0)");

static atomic64_t hook_calls = ATOMIC64_INIT(0);
static bool registered;
static struct dentry *hook_dir;

/* The op: count, then do what the kernel's default does. */
static pte_t hook_ptep_get_and_clear(struct mm_struct *mm, unsigned long addr,
				     pte_t *ptep)
{
	atomic64_inc(&hook_calls);
	return native_ptep_get_and_clear(ptep);
}

static int slot_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%ps\n", (void *)READ_ONCE(pv_ops.mmu.ptep_get_and_clear));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(slot);

static int calls_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%lld\n", (long long)atomic64_read(&hook_calls));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(calls);

static int __init hook_test_init(void)
{
	int err;

	if (do_register) {
		err = xen_register_ptep_get_and_clear(hook_ptep_get_and_clear,
						      THIS_MODULE);
		if (err) {
			pr_err("xen_register_ptep_get_and_clear() refused the op (error %d); slot holds %ps\n",
			       err,
			       (void *)READ_ONCE(pv_ops.mmu.ptep_get_and_clear));
			return err;
		}
		registered = true;
	}

	hook_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("slot", 0444, hook_dir, NULL, &slot_fops);
	debugfs_create_file("calls", 0444, hook_dir, NULL, &calls_fops);
	pr_info("loaded, register=%d leak=%d, slot holds %ps\n",
		do_register, leak,
		(void *)READ_ONCE(pv_ops.mmu.ptep_get_and_clear));
	return 0;
}

static void __exit hook_test_exit(void)
{
	int err;

	debugfs_remove(hook_dir);
	if (!registered)
		return;
	if (leak) {
		pr_info("leak=1: unloading without unregistering the op (%lld calls)\n",
			(long long)atomic64_read(&hook_calls));
		return;
	}
	err = xen_unregister_ptep_get_and_clear(hook_ptep_get_and_clear);
	if (err)
		pr_err("xen_unregister_ptep_get_and_clear() failed (error %d)\n",
		       err);
	else
		pr_info("unregistered after %lld calls\n",
			(long long)atomic64_read(&hook_calls));
}

module_init(hook_test_init);
module_exit(hook_test_exit);

MODULE_DESCRIPTION("Test owner of pv_ops.mmu.ptep_get_and_clear for the xen-ptswap slot interface");
MODULE_AUTHOR("xen-ptswap developers");
MODULE_LICENSE("GPL");
