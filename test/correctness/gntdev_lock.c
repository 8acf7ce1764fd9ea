// SPDX-License-Identifier: MIT
/*
 * gntdev_lock - the lock order of /dev/xen/gntdev.  gntdev_mmap() takes
 * the file's priv->lock with mmap_lock held (mmap_region() calls
 * f_op->mmap), so nothing may touch user memory under priv->lock.  Linux
 * since 45ca1afe2fd1 ("xen/gntdev: fix error handling in ioctl", v7.2-rc2,
 * and its stable backports) copies the new index out to user space under
 * priv->lock in IOCTL_GNTDEV_MAP_GRANT_REF; with PROVE_LOCKING,
 * copy_to_user()'s might_fault() takes mmap_lock there for lockdep, and
 * the kernel log gets "possible circular locking dependency detected"
 * (&priv->lock and &mm->mmap_lock), which the suites' kernel-log check
 * after this program fails.  The checks below see only what the ioctls
 * return: the lockdep verdict is the kernel log's.  Lockdep reports the
 * first such problem of a boot and then turns itself off.
 *
 * No grant of another domain is needed: IOCTL_GNTDEV_MAP_GRANT_REF only
 * allocates the map's pages (gnttab_alloc_pages()) and records the grant
 * references; nothing is mapped, no hypercall is made for the grants and
 * no reference is checked until mmap() of the index, and this program
 * never mmap()s a map.  Its one mmap() asks for an index that holds no
 * map, which gntdev_mmap() finds out under priv->lock, so the order
 * mmap_lock -> priv->lock is recorded all the same.
 *
 * Checks (gntdev-mmap-no-map and gntdev-map-unmap are sanity checks whose
 * job is to have the kernel take both lock orders):
 *  gntdev-open             /dev/xen/gntdev opens
 *  gntdev-mmap-no-map      mmap() of an index that holds no map fails with
 *                          EINVAL (gntdev_mmap() took priv->lock under
 *                          mmap_lock to find that out)
 *  gntdev-map-unmap        MAP_GRANT_REF of one dummy grant returns index
 *                          0 (priv->lock, then the copy of the index out);
 *                          UNMAP_GRANT_REF of it succeeds, a second one
 *                          fails with ENOENT
 *  gntdev-map-efault       MAP_GRANT_REF whose argument is read-only fails
 *                          with EFAULT when the index is copied out (a real
 *                          fault in copy_to_user()) and leaves no map
 *                          behind: the next map gets index 0 again (needs
 *                          45ca1afe2fd1 or its backport, which removes the
 *                          map; before it the map stayed listed)
 *  gntdev-copy-unlocked    the copy of the index out does not hold
 *                          priv->lock, without lockdep: the argument is in a
 *                          page write-protected with userfaultfd, so the
 *                          copy blocks in the fault; meanwhile an
 *                          UNMAP_GRANT_REF of the new index must finish,
 *                          not sleep for priv->lock (where the copy holds
 *                          it, the unmap sleeps in gntdev_ioctl() until
 *                          the fault is resolved: /proc/self/task/TID/stat
 *                          and wchan say so); then
 *                          a new map must get that index again;
 *                          then the page is made read-only and the fault
 *                          woken: the first map fails with EFAULT and its
 *                          error path must leave the second map, which now
 *                          has its index, alone (one unmap of it succeeds)
 *                          and leave nothing else behind
 *  gntdev-copy-unlocked-ok the same with the write-protection lifted
 *                          instead: the first map returns 0 and its index,
 *                          whose map the unmap already removed; nothing is
 *                          left behind
 * A wrong error path shows as a failed check or in the kernel log
 * (refcount_t underflow, list corruption), which the suites check.
 * Usage: gntdev_lock (no arguments; root in a Xen PV Dom0: /dev/xen/gntdev;
 * userfaultfd write-protection of anonymous memory, Linux 5.7 and later).
 * Exit status 0 if every check passed.
 */
#include "xps_check.h"

#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

/*
 * From Linux's include/uapi/xen/gntdev.h (an ABI: the same in 6.1, 6.12,
 * 7.3).  Not #included: Debian 12's /usr/include/xen/gntdev.h
 * (linux-libc-dev) needs Xen's grant_ref_t and domid_t from libxen-dev,
 * and libxen-dev's /usr/include/xen/sys/gntdev.h is its own copy, there
 * only with libxen-dev; this program needs neither package.
 */
struct ioctl_gntdev_grant_ref {
	uint32_t domid;
	uint32_t ref;
};

struct ioctl_gntdev_map_grant_ref {
	uint32_t count;		/* in */
	uint32_t pad;
	uint64_t index;		/* out: the offset for mmap() */
	struct ioctl_gntdev_grant_ref refs[1];	/* in, @count of them */
};

struct ioctl_gntdev_unmap_grant_ref {
	uint64_t index;
	uint32_t count;
	uint32_t pad;
};

#define IOCTL_GNTDEV_MAP_GRANT_REF \
	_IOC(_IOC_NONE, 'G', 0, sizeof(struct ioctl_gntdev_map_grant_ref))
#define IOCTL_GNTDEV_UNMAP_GRANT_REF \
	_IOC(_IOC_NONE, 'G', 1, sizeof(struct ioctl_gntdev_unmap_grant_ref))

#define GNTDEV "/dev/xen/gntdev"
#define HANG_MS 60000	/* a hang guard only: the unmap takes microseconds */
#define FAULT_MS 10000	/* for the copy to reach the write-protected page */
#define DUMMY_DOMID 0		/* never mapped: any domain and reference do */
#define DUMMY_REF 1

static int fd;

/* IOCTL_GNTDEV_MAP_GRANT_REF of one dummy grant; 0 or -errno. */
static int map_one(struct ioctl_gntdev_map_grant_ref *op)
{
	return ioctl(fd, IOCTL_GNTDEV_MAP_GRANT_REF, op) ? -errno : 0;
}

static void fill_op(struct ioctl_gntdev_map_grant_ref *op)
{
	memset(op, 0, sizeof(*op));
	op->count = 1;
	op->index = ~0ULL;	/* the kernel's answer replaces it */
	op->refs[0].domid = DUMMY_DOMID;
	op->refs[0].ref = DUMMY_REF;
}

/* IOCTL_GNTDEV_UNMAP_GRANT_REF of @count pages at @index; 0 or -errno. */
static int unmap(uint64_t index, uint32_t count)
{
	struct ioctl_gntdev_unmap_grant_ref op = { .index = index, .count = count };

	return ioctl(fd, IOCTL_GNTDEV_UNMAP_GRANT_REF, &op) ? -errno : 0;
}

/*
 * A map of one grant must get index 0 (no map is left on the file), and
 * its unmap must succeed: reports what went wrong as a problem of @c.
 */
static void expect_empty(struct xps_check *c, const char *when)
{
	struct ioctl_gntdev_map_grant_ref op;
	int err;

	fill_op(&op);
	err = map_one(&op);
	if (err) {
		xps_bad(c, "%s: MAP_GRANT_REF of one grant: %s", when, strerror(-err));
		return;
	}
	if (op.index != 0)
		xps_bad(c, "%s: a new map got index %#llx, not 0: a map was left behind",
			when, (unsigned long long)op.index);
	err = unmap(op.index, 1);
	if (err)
		xps_bad(c, "%s: UNMAP_GRANT_REF of index %#llx: %s", when,
			(unsigned long long)op.index, strerror(-err));
}

static void mmap_no_map(void)
{
	struct xps_check c;
	size_t psz = xps_page_size();
	off_t off = (off_t)1 << 32;	/* page index 1M: no map is there */
	void *p;

	xps_begin(&c, "gntdev-mmap-no-map");
	p = mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, off);
	if (p != MAP_FAILED) {
		xps_bad(&c, "mmap() of an index without a map succeeded");
		munmap(p, psz);
	} else if (errno != EINVAL) {
		xps_bad(&c, "mmap() of an index without a map: %s, expected EINVAL",
			strerror(errno));
	}
	xps_end(&c);
}

static void map_unmap(void)
{
	struct xps_check c;
	struct ioctl_gntdev_map_grant_ref op;
	int err;

	xps_begin(&c, "gntdev-map-unmap");
	fill_op(&op);
	err = map_one(&op);
	if (err)
		XPS_DIE(&c, "MAP_GRANT_REF of one grant: %s", strerror(-err));
	if (op.index != 0)
		xps_bad(&c, "the first map got index %#llx, expected 0",
			(unsigned long long)op.index);
	err = unmap(op.index, 1);
	if (err)
		xps_bad(&c, "UNMAP_GRANT_REF: %s", strerror(-err));
	err = unmap(op.index, 1);
	if (err != -ENOENT)
		xps_bad(&c, "second UNMAP_GRANT_REF: %s, expected ENOENT",
			err ? strerror(-err) : "succeeded");
	xps_end(&c);
}

/* A map request in a read-only page: the index cannot be copied out. */
static struct ioctl_gntdev_map_grant_ref *ro_op(struct xps_check *c)
{
	struct ioctl_gntdev_map_grant_ref *op;

	op = xps_map(c, xps_page_size(), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1);
	fill_op(op);
	if (mprotect(op, xps_page_size(), PROT_READ))
		XPS_DIE(c, "mprotect(PROT_READ): %s", strerror(errno));
	return op;
}

static void map_efault(void)
{
	struct xps_check c;
	struct ioctl_gntdev_map_grant_ref *op;
	int err;

	xps_begin(&c, "gntdev-map-efault");
	op = ro_op(&c);
	err = map_one(op);
	if (err != -EFAULT)
		xps_bad(&c, "MAP_GRANT_REF with a read-only argument: %s, expected EFAULT",
			err ? strerror(-err) : "succeeded");
	expect_empty(&c, "after the failed map");
	munmap(op, xps_page_size());
	xps_end(&c);
}

/* A map request that blocks in copy_to_user() until the fault is resolved. */
struct blocked_map {
	struct ioctl_gntdev_map_grant_ref *op;	/* in a write-protected page */
	int uffd;
	int err;		/* the map's result, once done */
	int done;
};

static void *blocked_map_main(void *arg)
{
	struct blocked_map *b = arg;

	b->err = map_one(b->op);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* An UNMAP_GRANT_REF of index 0 in a thread of its own. */
struct bg_unmap {
	pid_t tid;		/* the thread's, 0 until it runs */
	int err;
	int done;
};

static void *bg_unmap_main(void *arg)
{
	struct bg_unmap *u = arg;

	__atomic_store_n(&u->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	u->err = unmap(0, 1);
	__atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* /proc/self/task/@tid/@name into @buf (NUL-terminated); 0 or -1. */
static int read_task_file(pid_t tid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/*
 * Whether thread @tid of this process, in an ioctl of /dev/xen/gntdev,
 * sleeps uninterruptibly (state D) with gntdev_ioctl() as its wchan, the
 * first function on its stack outside the scheduler's, which include
 * __mutex_lock(): where it waits for priv->lock.  0 if it runs or is gone.
 */
static int sleeps_in_gntdev_ioctl(pid_t tid)
{
	char buf[512], *p;

	if (read_task_file(tid, "stat", buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');	/* the state follows the command's ")" */
	if (!p || p[1] != ' ' || p[2] != 'D')
		return 0;
	if (read_task_file(tid, "wchan", buf, sizeof(buf)))
		return 0;
	return !strncmp(buf, "gntdev_ioctl", strlen("gntdev_ioctl"));
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/*
 * Wait for the unmap thread: 1 once it is done, 0 once it sleeps for
 * priv->lock (sleeps_in_gntdev_ioctl()) or after HANG_MS; *@slept says
 * which of the two ended a wait that returns 0.
 */
static int wait_unmap(struct bg_unmap *u, int *slept)
{
	long deadline = now_ms() + HANG_MS;

	*slept = 0;
	while (!__atomic_load_n(&u->done, __ATOMIC_ACQUIRE) && now_ms() < deadline) {
		pid_t tid = __atomic_load_n(&u->tid, __ATOMIC_ACQUIRE);

		if (tid && sleeps_in_gntdev_ioctl(tid)) {
			*slept = 1;
			break;
		}
		usleep(1000);
	}
	return __atomic_load_n(&u->done, __ATOMIC_ACQUIRE);
}

static int uffd_wp(int uffd, void *p, int on)
{
	struct uffdio_writeprotect wp = {
		.range = { .start = (uintptr_t)p, .len = xps_page_size() },
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

/*
 * Start a MAP_GRANT_REF whose copy of the index out blocks on a
 * write-protected page, and wait until it does: the map is then listed.
 */
static void start_blocked_map(struct xps_check *c, struct blocked_map *b, pthread_t *t)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct pollfd pfd;
	struct uffd_msg msg;
	size_t psz = xps_page_size();

	memset(b, 0, sizeof(*b));
	b->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (b->uffd < 0)
		XPS_DIE(c, "cannot run because userfaultfd() failed: %s", strerror(errno));
	if (ioctl(b->uffd, UFFDIO_API, &api))
		XPS_DIE(c, "cannot run because UFFDIO_API failed: %s", strerror(errno));
	b->op = xps_map(c, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	fill_op(b->op);
	reg.range.start = (uintptr_t)b->op;
	reg.range.len = psz;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	if (ioctl(b->uffd, UFFDIO_REGISTER, &reg))
		XPS_DIE(c, "cannot run because UFFDIO_REGISTER(WP) failed: %s", strerror(errno));
	if (uffd_wp(b->uffd, b->op, 1))
		XPS_DIE(c, "UFFDIO_WRITEPROTECT: %s", strerror(errno));
	if (pthread_create(t, NULL, blocked_map_main, b))
		XPS_DIE(c, "pthread_create failed");
	pfd.fd = b->uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, FAULT_MS) != 1 || read(b->uffd, &msg, sizeof(msg)) != sizeof(msg)) {
		int returned = __atomic_load_n(&b->done, __ATOMIC_ACQUIRE);

		XPS_DIE(c, "MAP_GRANT_REF did not fault on its write-protected argument in %d ms%s",
			FAULT_MS, returned ? " (it returned)" : "");
	}
	if (msg.event != UFFD_EVENT_PAGEFAULT ||
	    !(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP))
		XPS_DIE(c, "userfaultfd reported event %u flags %#llx, not a write-protect fault",
			msg.event, (unsigned long long)msg.arg.pagefault.flags);
}

/*
 * While a map's copy of its index out is blocked: unmap that index
 * (must finish, not sleep for priv->lock), and, if it did, map again (the index
 * is free again).  Returns whether a second map was made (index 0).
 */
static int unmap_while_blocked(struct xps_check *c, pthread_t *ut, struct bg_unmap *u)
{
	struct ioctl_gntdev_map_grant_ref op2;
	int err, slept;

	memset(u, 0, sizeof(*u));
	if (pthread_create(ut, NULL, bg_unmap_main, u))
		XPS_DIE(c, "pthread_create failed");
	if (!wait_unmap(u, &slept)) {
		if (slept)
			xps_bad(c, "UNMAP_GRANT_REF slept for priv->lock while MAP_GRANT_REF %s",
				"copied out: priv->lock is held across copy_to_user()");
		else
			xps_bad(c, "UNMAP_GRANT_REF did not finish in %d s", HANG_MS / 1000);
		return 0;
	}
	if (u->err) {
		xps_bad(c, "UNMAP_GRANT_REF of the blocked map's index 0: %s", strerror(-u->err));
		return 0;
	}
	fill_op(&op2);
	err = map_one(&op2);
	if (err || op2.index != 0) {
		xps_bad(c, "a second map after the unmap: %s, index %#llx, expected index 0",
			err ? strerror(-err) : "ok", (unsigned long long)op2.index);
		if (!err)
			unmap(op2.index, 1);
		return 0;
	}
	return 1;
}

/*
 * gntdev-copy-unlocked (@copy_fails: the blocked copy then fails) and
 * gntdev-copy-unlocked-ok (it then succeeds), see the top of the file.
 */
static void copy_unlocked(const char *name, int copy_fails)
{
	struct uffdio_range r;
	struct xps_check c;
	struct blocked_map b;
	struct bg_unmap u;
	pthread_t t, ut;
	int second;

	xps_begin(&c, name);
	start_blocked_map(&c, &b, &t);
	second = unmap_while_blocked(&c, &ut, &u);
	r.start = (uintptr_t)b.op;
	r.len = xps_page_size();
	if (copy_fails) {
		/* The copy fails: its page read-only, the fault woken. */
		if (mprotect(b.op, r.len, PROT_READ))
			XPS_DIE(&c, "mprotect(PROT_READ): %s", strerror(errno));
		if (ioctl(b.uffd, UFFDIO_WAKE, &r))
			XPS_DIE(&c, "UFFDIO_WAKE: %s", strerror(errno));
	} else {
		/* The second map goes first; then lifting the protection wakes the copy. */
		if (second && unmap(0, 1))
			xps_bad(&c, "UNMAP_GRANT_REF of the second map failed");
		second = 0;
		if (uffd_wp(b.uffd, b.op, 0))
			XPS_DIE(&c, "UFFDIO_WRITEPROTECT(0): %s", strerror(errno));
	}
	pthread_join(t, NULL);
	pthread_join(ut, NULL);
	if (copy_fails && b.err != -EFAULT)
		xps_bad(&c, "the blocked map, its page now read-only: %s, expected EFAULT",
			b.err ? strerror(-b.err) : "succeeded");
	else if (!copy_fails && b.err)
		xps_bad(&c, "the blocked map, its page writable again: %s, expected success",
			strerror(-b.err));
	else if (!copy_fails && b.op->index != 0)
		xps_bad(&c, "the blocked map returned index %#llx, expected 0",
			(unsigned long long)b.op->index);
	if (second && unmap(0, 1))
		xps_bad(&c, "second map (index 0) gone after the first's EFAULT: %s",
			"the error path removed another map");
	expect_empty(&c, "after the blocked map");
	munmap(b.op, r.len);
	close(b.uffd);
	xps_end(&c);
}

int main(void)
{
	struct xps_check c;

	xps_begin(&c, "gntdev-open");
	fd = open(GNTDEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		XPS_DIE(&c, "cannot run because open %s failed: %s", GNTDEV, strerror(errno));
	xps_end(&c);
	mmap_no_map();
	map_unmap();
	map_efault();
	copy_unlocked("gntdev-copy-unlocked", 1);
	copy_unlocked("gntdev-copy-unlocked-ok", 0);
	close(fd);
	return xps_exit_status();
}
