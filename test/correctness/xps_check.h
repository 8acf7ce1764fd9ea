/* SPDX-License-Identifier: MIT */
/*
 * xps_check.h - helpers shared by the test/correctness/ programs.
 *
 * Every program checks one PTE-clearing caller path of the kernel and
 * prints one line per check on stdout, as test/suites/ expects:
 *   PASS: <check>
 *   FAIL: <check>: <reason>
 * A check is opened with xps_begin(), may report any number of problems
 * with xps_bad() (the first becomes the FAIL line, later ones go to
 * stderr), and is closed with xps_end(), which prints PASS if nothing was
 * bad.  xps_exit_status() is 0 if every check passed, 1 otherwise.
 *
 * Data patterns: word i of a pattern with seed s is xps_word(s, i), never
 * zero, so a page the kernel replaced by a fresh zero page, or one that
 * holds another round's data, is told apart from the expected contents.
 * Header-only (static functions): each program is one source file plus
 * this header, built with `gcc -O2 -Wall -Wextra -Werror -pthread`.
 */
#ifndef XPS_CHECK_H
#define XPS_CHECK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Elements of array @a (the kernel's ARRAY_SIZE(), without its type check). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ results */

struct xps_check {
	const char *name;
	int bad;		/* problems reported so far */
};

static int xps_checks_failed;

static inline void xps_begin(struct xps_check *c, const char *name)
{
	c->name = name;
	c->bad = 0;
}

/* Report a problem of check @c: the first one is its FAIL line. */
__attribute__((format(printf, 2, 3)))
static inline void xps_bad(struct xps_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!c->bad) {
		printf("FAIL: %s: ", c->name);
		vprintf(fmt, ap);
		printf("\n");
		fflush(stdout);
		xps_checks_failed++;
	} else {
		fprintf(stderr, "  %s, also: ", c->name);
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "\n");
	}
	va_end(ap);
	c->bad++;
}

/* Close check @c: PASS if nothing was bad; returns 0 if it passed. */
static inline int xps_end(struct xps_check *c)
{
	if (c->bad) {
		if (c->bad > 1)
			fprintf(stderr, "  %s: %d problems in all\n", c->name, c->bad);
		return -1;
	}
	printf("PASS: %s\n", c->name);
	fflush(stdout);
	return 0;
}

static inline int xps_exit_status(void)
{
	return xps_checks_failed ? 1 : 0;
}

/* A system call the check cannot do without failed: FAIL it and exit. */
#define XPS_DIE(c, ...) do {			\
	xps_bad((c), __VA_ARGS__);		\
	exit(1);				\
} while (0)

/* ------------------------------------------------------------ patterns */

static inline uint64_t xps_word(uint64_t seed, uint64_t i)
{
	/* splitmix64 of (seed, i); bit 0 forced so that it is never 0. */
	uint64_t z = seed * 0x9e3779b97f4a7c15ULL + i + 1;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31)) | 1;
}

static inline size_t xps_page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Words per page. */
static inline size_t xps_wpp(void)
{
	return xps_page_size() / sizeof(uint64_t);
}

/* Fill @len bytes at @p with words @first.. of pattern @seed. */
static inline void xps_fill(void *p, size_t len, uint64_t seed, uint64_t first)
{
	volatile uint64_t *w = p;

	for (size_t i = 0; i < len / sizeof(*w); i++)
		w[i] = xps_word(seed, first + i);
}

/*
 * Compare @len bytes at @p with words @first.. of pattern @seed.
 * Returns -1 if they match, else the index of the first wrong word.
 */
static inline long xps_cmp(const void *p, size_t len, uint64_t seed, uint64_t first)
{
	const volatile uint64_t *w = p;

	for (size_t i = 0; i < len / sizeof(*w); i++)
		if (w[i] != xps_word(seed, first + i))
			return (long)i;
	return -1;
}

static inline int xps_is_zero(const void *p, size_t len)
{
	const volatile uint64_t *w = p;

	for (size_t i = 0; i < len / sizeof(*w); i++)
		if (w[i])
			return 0;
	return 1;
}

/*
 * Check that the pages at @p hold pattern @seed, page @first_page on;
 * reports the first wrong word (with what it held) as a problem of @c,
 * prefixed by @what.  Returns the number of wrong pages.
 */
static inline size_t xps_expect(struct xps_check *c, const char *what, const void *p,
				size_t len, uint64_t seed, size_t first_page)
{
	size_t psz = xps_page_size(), wpp = xps_wpp(), wrong = 0;
	const unsigned char *b = p;

	for (size_t pg = 0; pg < len / psz; pg++) {
		uint64_t first = (first_page + pg) * wpp;
		long i = xps_cmp(b + pg * psz, psz, seed, first);

		if (i < 0)
			continue;
		if (!wrong)
			xps_bad(c, "%s: page %zu word %ld holds %#llx, expected %#llx%s",
				what, pg, i,
				(unsigned long long)((const volatile uint64_t *)(b + pg * psz))[i],
				(unsigned long long)xps_word(seed, first + (uint64_t)i),
				xps_is_zero(b + pg * psz, psz) ? " (page reads as all zero)" : "");
		wrong++;
	}
	if (wrong > 1)
		fprintf(stderr, "  %s: %s: %zu of %zu pages wrong\n",
			c->name, what, wrong, len / psz);
	return wrong;
}

/* 64-bit FNV-1a over the words of a buffer: a checksum. */
static inline uint64_t xps_sum(const void *p, size_t len)
{
	const volatile uint64_t *w = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len / sizeof(*w); i++)
		h = (h ^ w[i]) * 0x100000001b3ULL;
	return h;
}

/* ------------------------------------------------------------ system */

static inline void *xps_map(struct xps_check *c, size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		XPS_DIE(c, "mmap of %zu bytes: %s", len, strerror(errno));
	return p;
}

static inline int xps_memfd(struct xps_check *c, const char *name, size_t len)
{
	int fd = memfd_create(name, 0);

	if (fd < 0)
		XPS_DIE(c, "memfd_create: %s", strerror(errno));
	if (ftruncate(fd, (off_t)len))
		XPS_DIE(c, "ftruncate of the memfd to %zu bytes: %s", len, strerror(errno));
	return fd;
}

static inline void xps_madvise(struct xps_check *c, void *p, size_t len, int advice,
			       const char *name)
{
	if (madvise(p, len, advice))
		XPS_DIE(c, "madvise(%s) of %zu bytes: %s", name, len, strerror(errno));
}

/* pread exactly @len bytes at @off, or die. */
static inline void xps_pread(struct xps_check *c, int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);

		if (n <= 0)
			XPS_DIE(c, "pread at offset %lld: %s", (long long)(off + (off_t)done),
				n < 0 ? strerror(errno) : "end of file");
		done += (size_t)n;
	}
}

/* 1 if any page of [@p, @p+@len) is mapped, 0 if none is (mincore ENOMEM). */
static inline int xps_mapped(void *p, size_t len)
{
	unsigned char vec[64];
	size_t psz = xps_page_size();

	for (size_t off = 0; off < len; off += psz) {
		if (mincore((char *)p + off, psz, vec) == 0)
			return 1;
	}
	return 0;
}

/*
 * Drop clean page cache (shmem included): drain the per-CPU LRU batches
 * first (mlock() does lru_add_drain_all()), since a page still sitting in
 * one holds an extra reference and would not be dropped.  Then a page that
 * was written through a PTE whose dirty bit got lost is dropped too and
 * reads back as zeros: this is what turns a lost dirty bit into a visible
 * data loss.  Only clean pages go: callers fsync() files first.  Returns
 * 0, or -errno of the write to drop_caches.
 */
static inline int xps_drop_caches(void)
{
	static char page[1 << 16] __attribute__((aligned(1 << 16)));
	int fd, err = 0;

	page[0] = 1;
	if (mlock(page, sizeof(page)) == 0)
		munlock(page, sizeof(page));
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, "1\n", 2) != 2)
		err = -errno;
	close(fd);
	return err;
}

/* Write @val in decimal to the file @path; 0, or -1 with errno set. */
static inline int xps_write_long(const char *path, long val)
{
	char buf[32];
	int fd = open(path, O_WRONLY), n, ok;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld", val);
	ok = write(fd, buf, n) == n;
	close(fd);
	return ok ? 0 : -1;
}

/* Run the calling thread on @cpu only; 0 or -errno. */
static inline int xps_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* CPUs this process may run on, 1 if unknown; count it before xps_pin(). */
static inline int xps_ncpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
}

/*
 * For a check that races two CPUs: FAIL check @c and exit, saying why,
 * unless @ncpus (xps_ncpus(), counted before any xps_pin()) is 2 or more.
 */
static inline void xps_need_two_cpus(struct xps_check *c, int ncpus)
{
	if (ncpus < 2)
		XPS_DIE(c, "cannot run because only %d CPU is usable", ncpus);
}

#endif /* XPS_CHECK_H */
