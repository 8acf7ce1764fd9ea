// SPDX-License-Identifier: MIT
/*
 * lost_dirty - which pages a zap reports dirty when the clear's old value
 * is lost.
 *
 * When an MMU_PT_UPDATE_SWAP clears an entry but Xen cannot hand back the
 * value it replaced (the sub-op's write-back edge, which the module's
 * fail_swap_writeback attribute plays), the module returns the value it
 * read before, dirty where the entry may have gained D since: a writable
 * entry, or a read-only one over an anonymous or shmem page (a stale
 * writable TLB entry).  A page of a file that writes back must stay
 * clean: its write-notify mapping has no writable TLB entry for a clean
 * entry, and its filesystem must not see it dirtied (9p BUG()s writing
 * back a file opened read-only, which every exiting process's text would
 * hit; ext4 WARNs).
 *
 * Checks (PFNs from /proc/self/pagemap, PG_dirty from /proc/kpageflags:
 * root only; 64 pages each, clean before the zap):
 *  lost-dirty-ro-file-clean      a file on DIR opened read-only, mapped
 *                                shared and privately, read, zapped
 *                                (MADV_DONTNEED, munmap): no page dirty
 *                                afterwards, whatever the mode
 *  lost-dirty-writeback-file-clean  a file on DIR mapped shared and
 *                                writable, written and msync()ed (which
 *                                write-protects and cleans the entries),
 *                                zapped: no page dirty
 *  lost-dirty-shmem              a memfd mapped shared and writable, read
 *                                (writable, clean entries), mprotect()ed
 *                                read-only, zapped: with "lost" (every
 *                                swap loses its old value) every page
 *                                dirty, the module's guess; without, none
 * Usage: lost_dirty DIR [lost]   (DIR on ext4 or the like, not tmpfs)
 * Exit status 0 if every check passed.
 */
#include <stdbool.h>

#include "xps_check.h"

#define PAGES 64
#define KPF_DIRTY 4

/* The PFNs of @n pages at @p into @pfn; 0, or -1 (reported to @c). */
static int pfns_of(struct xps_check *c, const char *p, uint64_t *pfn, size_t n)
{
	size_t ps = xps_page_size(), i;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e;

	if (fd < 0) {
		xps_bad(c, "cannot run because /proc/self/pagemap: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		off_t off = (off_t)((uintptr_t)(p + i * ps) / ps) * 8;

		if (pread(fd, &e, 8, off) != 8 || !(e >> 63) || !(e & ((1ULL << 55) - 1))) {
			xps_bad(c, "cannot run because page %zu has no PFN (pagemap %#llx; root?)",
				i, (unsigned long long)e);
			close(fd);
			return -1;
		}
		pfn[i] = e & ((1ULL << 55) - 1);
	}
	close(fd);
	return 0;
}

/* How many of the @n frames @pfn have PG_dirty; -1 (reported) on error. */
static long dirty_count(struct xps_check *c, const uint64_t *pfn, size_t n)
{
	int fd = open("/proc/kpageflags", O_RDONLY);
	long dirty = 0;
	uint64_t f;
	size_t i;

	if (fd < 0) {
		xps_bad(c, "cannot run because /proc/kpageflags: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (pread(fd, &f, 8, (off_t)pfn[i] * 8) != 8) {
			xps_bad(c, "cannot run because /proc/kpageflags at PFN %#llx: %s",
				(unsigned long long)pfn[i], strerror(errno));
			close(fd);
			return -1;
		}
		dirty += (f >> KPF_DIRTY) & 1;
	}
	close(fd);
	return dirty;
}

/* Create @path with @n pages of pattern @seed, written back; 0 or -1. */
static int make_file(struct xps_check *c, const char *path, size_t n, uint64_t seed)
{
	size_t len = n * xps_page_size();
	char *buf = malloc(len);
	int fd;

	if (!buf)
		XPS_DIE(c, "malloc: %s", strerror(errno));
	xps_fill(buf, len, seed, 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || fsync(fd)) {
		xps_bad(c, "cannot run because writing %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(buf);
		return -1;
	}
	free(buf);
	close(fd);
	return 0;
}

/*
 * Read @n pages of @p, note their frames, check they are clean, zap them
 * with MADV_DONTNEED (@zap_by_munmap false) or munmap; the number of
 * those frames dirty afterwards, or -1 (reported).
 */
static long zap_and_count(struct xps_check *c, const char *what, char *p, size_t n,
			  bool zap_by_munmap)
{
	uint64_t pfn[PAGES];
	size_t ps = xps_page_size(), i;
	volatile uint64_t sum = 0;
	long d;

	for (i = 0; i < n; i++)
		sum += *(volatile uint64_t *)(p + i * ps);
	(void)sum;
	if (pfns_of(c, p, pfn, n))
		return -1;
	d = dirty_count(c, pfn, n);
	if (d != 0) {
		if (d > 0)
			xps_bad(c, "cannot run because %ld of %zu pages (%s) dirty before the zap",
				d, n, what);
		return -1;
	}
	if (zap_by_munmap ? munmap(p, n * ps) : madvise(p, n * ps, MADV_DONTNEED))
		XPS_DIE(c, "%s of the %s: %s", zap_by_munmap ? "munmap" : "MADV_DONTNEED", what,
			strerror(errno));
	return dirty_count(c, pfn, n);
}

/* mmap() @PAGES pages of @fd with @prot and @flags, or die naming @what. */
static char *map_or_die(struct xps_check *c, int fd, int prot, int flags, const char *what)
{
	char *p = mmap(NULL, PAGES * xps_page_size(), prot, flags, fd, 0);

	if (p == MAP_FAILED)
		XPS_DIE(c, "mmap %s: %s", what, strerror(errno));
	return p;
}

int main(int argc, char **argv)
{
	size_t ps = xps_page_size(), len = PAGES * ps;
	struct xps_check c;
	char path[4096];
	bool lost;
	long d;
	char *p;
	int fd;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "lost"))) {
		fprintf(stderr, "usage: lost_dirty DIR [lost]\n");
		return 2;
	}
	lost = argc == 3;

	xps_begin(&c, "lost-dirty-ro-file-clean");
	snprintf(path, sizeof(path), "%s/lost_dirty.ro", argv[1]);
	if (!make_file(&c, path, PAGES, 11)) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			XPS_DIE(&c, "open %s read-only: %s", path, strerror(errno));
		p = map_or_die(&c, fd, PROT_READ, MAP_SHARED, "shared");
		d = zap_and_count(&c, "shared read-only mapping", p, PAGES, false);
		if (d > 0)
			xps_bad(&c, "%ld of %d pages, opened read-only, mapped shared: dirty",
				d, PAGES);
		munmap(p, len);
		p = map_or_die(&c, fd, PROT_READ, MAP_PRIVATE, "private");
		d = zap_and_count(&c, "private read-only mapping", p, PAGES, true);
		if (d > 0)
			xps_bad(&c, "%ld of %d pages, opened read-only, mapped private: dirty",
				d, PAGES);
		close(fd);
	}
	unlink(path);
	xps_end(&c);

	xps_begin(&c, "lost-dirty-writeback-file-clean");
	snprintf(path, sizeof(path), "%s/lost_dirty.rw", argv[1]);
	if (!make_file(&c, path, PAGES, 12)) {
		fd = open(path, O_RDWR);
		if (fd < 0)
			XPS_DIE(&c, "open %s: %s", path, strerror(errno));
		p = map_or_die(&c, fd, PROT_READ | PROT_WRITE, MAP_SHARED, "shared writable");
		xps_fill(p, len, 13, 0);
		/* Writes back and write-protects: read-only, clean entries. */
		if (msync(p, len, MS_SYNC))
			XPS_DIE(&c, "msync: %s", strerror(errno));
		d = zap_and_count(&c, "written-back shared mapping", p, PAGES, false);
		if (d > 0)
			xps_bad(&c, "%ld of %d written-back pages, mapped shared: dirty",
				d, PAGES);
		munmap(p, len);
		close(fd);
	}
	unlink(path);
	xps_end(&c);

	xps_begin(&c, "lost-dirty-shmem");
	fd = memfd_create("lost_dirty", 0);
	if (fd < 0 || ftruncate(fd, len))
		XPS_DIE(&c, "memfd: %s", strerror(errno));
	p = map_or_die(&c, fd, PROT_READ | PROT_WRITE, MAP_SHARED, "memfd");
	/* Read faults: writable, clean entries; then read-only, clean. */
	for (size_t i = 0; i < PAGES; i++)
		(void)*(volatile char *)(p + i * ps);
	if (mprotect(p, len, PROT_READ))
		XPS_DIE(&c, "mprotect: %s", strerror(errno));
	d = zap_and_count(&c, "read-only shmem mapping", p, PAGES, false);
	if (d >= 0 && lost && d != PAGES)
		xps_bad(&c, "%ld of %d read-only shmem pages dirty, old values lost (want all)",
			d, PAGES);
	else if (d > 0 && !lost)
		xps_bad(&c, "%ld of %d clean shmem pages dirty (want none)",
			d, PAGES);
	munmap(p, len);
	close(fd);
	xps_end(&c);
	return xps_exit_status();
}
