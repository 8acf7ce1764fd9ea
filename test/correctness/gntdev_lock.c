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
 * Checks:
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
 *                          behind: the next map gets index 0 again
 *  gntdev-map-efault-race  the same 2000 times while another thread
 *                          unmaps index 0 in a loop: every map fails with
 *                          EFAULT, every unmap succeeds or fails with
 *                          ENOENT, no map is left behind, and the kernel
 *                          neither crashes nor logs trouble.  Where the
 *                          index is copied out after priv->lock is dropped,
 *                          this races the map's error path (which must
 *                          find the map again under priv->lock) with an
 *                          unmap of the same index
 * Usage: gntdev_lock (no arguments; root in a Xen PV Dom0: /dev/xen/gntdev).
 * Exit status 0 if every check passed.
 */
#include "xps_check.h"

#include <pthread.h>
#include <sys/ioctl.h>

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
#define ROUNDS 2000
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

struct unmapper {
	int stop;		/* set by the main thread */
	unsigned long won;	/* unmaps that removed a map */
	unsigned long lost;	/* unmaps that found none (ENOENT) */
	int bad_errno;		/* first other error, 0 if none */
};

static void *unmapper(void *arg)
{
	struct unmapper *u = arg;

	while (!__atomic_load_n(&u->stop, __ATOMIC_RELAXED)) {
		int err = unmap(0, 1);

		if (!err)
			u->won++;
		else if (err == -ENOENT)
			u->lost++;
		else if (!u->bad_errno)
			u->bad_errno = -err;
	}
	return NULL;
}

static void map_efault_race(void)
{
	struct xps_check c;
	struct ioctl_gntdev_map_grant_ref *op;
	struct unmapper u = { 0 };
	unsigned long wrong = 0;
	int first_wrong = 0;
	pthread_t t;

	xps_begin(&c, "gntdev-map-efault-race");
	op = ro_op(&c);
	if (pthread_create(&t, NULL, unmapper, &u))
		XPS_DIE(&c, "pthread_create failed");
	for (int i = 0; i < ROUNDS; i++) {
		int err = map_one(op);

		if (err != -EFAULT && !wrong++)
			first_wrong = err ? -err : -1;
	}
	__atomic_store_n(&u.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	if (wrong)
		xps_bad(&c, "%lu of %d maps did not fail with EFAULT, the first: %s",
			wrong, ROUNDS, first_wrong < 0 ? "succeeded" : strerror(first_wrong));
	if (u.bad_errno)
		xps_bad(&c, "UNMAP_GRANT_REF of index 0: %s, expected success or ENOENT",
			strerror(u.bad_errno));
	printf("# gntdev: %d maps with a read-only argument; ", ROUNDS);
	printf("the racing unmap removed %lu, found none %lu times\n", u.won, u.lost);
	expect_empty(&c, "after the race");
	munmap(op, xps_page_size());
	xps_end(&c);
}

int main(void)
{
	struct xps_check c;

	xps_begin(&c, "gntdev-mmap-no-map");
	fd = open(GNTDEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		XPS_DIE(&c, "cannot run because open %s failed: %s", GNTDEV, strerror(errno));
	mmap_no_map();
	map_unmap();
	map_efault();
	map_efault_race();
	close(fd);
	return xps_exit_status();
}
