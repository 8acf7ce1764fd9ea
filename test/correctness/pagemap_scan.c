// SPDX-License-Identifier: MIT
/*
 * pagemap_scan - userfaultfd asynchronous write-protection used as a dirty
 * tracker through the PAGEMAP_SCAN ioctl of /proc/PID/pagemap (Linux 6.7
 * on), the way CRIU's pre-dump and a live migration's pre-copy use it: a
 * scan with PM_SCAN_WP_MATCHING reports the pages written since the
 * previous scan (category PAGE_IS_WRITTEN) and write-protects them again,
 * and a write to a protected page is resolved by the kernel at once
 * (UFFD_FEATURE_WP_ASYNC), which only clears the page's uffd-wp bit.
 *
 * The kernel path: pagemap_scan_pmd_entry() write-protects the entries of
 * one page table with make_uffd_wp_pte() (ptep_modify_prot_commit() for
 * present entries, set_pte_at() of a marker for empty ones) in lazy MMU
 * mode, where Xen PV queues them.  Linux 6.12 dropped the PTE lock before
 * leaving lazy MMU mode, so the queued updates could land after another
 * CPU had taken the lock, faulted the page in or zapped it: a write lost,
 * or a freed page mapped again (test/linux-patch/6.12/0007).
 *
 * Memory: one region of 2 x HALF pages, 2 MiB aligned, its first half
 * anonymous private memory (MADV_NOHUGEPAGE: page-table entries, not huge
 * pages), its second half a memfd mapped shared, both registered with one
 * userfaultfd in UFFDIO_REGISTER_MODE_WP.  Every scan covers both halves,
 * 8 page tables of 512 entries: each page table is one lazy MMU section.
 * Scans alternate between the kernel's three write-protecting loops: only
 * PAGE_IS_WRITTEN asked and returned; more categories returned (the
 * generic loop); an output array of 7 regions, so that one scan takes
 * many ioctls, each resuming at the walk_end the last one returned.  The
 * exact phase also uses a scan without output array (write-protect only).
 *
 * Checks:
 *  pagemap-scan-first-scan   the first scan reports every page (all
 *                            written, none protected yet); a second scan
 *                            right after it reports none
 *  pagemap-scan-exact-anon   8 steps, each writes one set of pages (all,
 *  pagemap-scan-exact-shmem  every third, a random quarter, the first and
 *                            last two entries of every page table, every
 *                            other page, none, one) and scans: the scan
 *                            reports exactly the pages written since the
 *                            previous scan, in the half named
 *  pagemap-scan-race-anon    a writer thread on CPU 1 writes word 0 of
 *  pagemap-scan-race-shmem   random pages (a new value each time; one
 *                            write in 16 zaps the page with MADV_DONTNEED
 *                            first) while this thread, on CPU 0, runs
 *                            ROUNDS scans and copies the pages each one
 *                            reports into a copy of the region; then the
 *                            writer stops and one more scan runs.  Both
 *                            guarantees below hold in the half named
 *  pagemap-scan-contents     at the end every page holds what was written
 *                            last (read through the mapping, and for the
 *                            memfd with pread() too)
 *
 * What the race check relies on, and nothing more.  Scans are numbered
 * 1, 2, ... in the order they start (one at a time, this thread); the
 * writer reads the number of the latest scan started just before its
 * store (n) and again just after it, behind a full fence (n2).  A scan
 * reads and write-protects each page's entry once, under the page
 * table's lock, between its start and its return.  The first scan that
 * does so after the store finds the entry not protected (only the write,
 * or its fault, cleared the bit, and nothing but a scan sets it), so
 * it reports the page; that scan is not before scan n (scan n - 1 had
 * returned before the store) and not after scan n2 + 1 (it started after
 * the store).  So:
 *  (a) every write is reported by at least one of scans n .. n2 + 1
 *      (usually n2 == n: "by scan n or by scan n + 1"); a page may also
 *      be reported without having been written (not checked in the race:
 *      a zapped page reads back as a fresh one), and
 *  (b) pre-copy converges: the copy, which takes every page a scan
 *      reported after that scan returned, equals memory after the last
 *      scan, which ran after the writer had stopped.  A write that no
 *      scan reported, or whose data the copy after its scan missed, is
 *      a write lost to the tracker.
 * The exact steps have no writer running, so there the report must be
 * the written set exactly.  A queued update that lands after a fault or
 * zap on the other CPU shows as a lost write (pagemap-scan-contents: a
 * marker over the page the fault mapped) or as a freed page mapped again,
 * which the kernel log shows (Bad rss-counter, Bad page state):
 * test/suites/correctness.sh checks it after each program.
 *
 * Usage: pagemap_scan [-d US] [ROUNDS]   (race scans, default 300)
 * -d US: the lab's 6.12 debug kernel's test-only xen_lazy_leave_delay_us
 * (test/lab/linux-test-patch/6.12/0004-*.patch): for the race, this
 * program writes US there and marks its scanning thread in
 * /proc/thread-self/make-it-fail, so that each of the scans' lazy MMU
 * sections busy-waits US microseconds before its queued updates are
 * issued; a kernel that drops the PTE lock before that (6.12 without
 * test/linux-patch/6.12/0007) then leaves the writer's zaps and faults a
 * wide window to land in.  Both are put back to 0 after the race.
 * Exit status: 0 if every check passed, 1 if one failed, 77 (printing
 * only "# not applicable: <why>") if the kernel has no PAGEMAP_SCAN ioctl
 * (before Linux 6.7: ENOTTY, or EINVAL for another pm_scan_arg) or its
 * userfaultfd no UFFD_FEATURE_WP_ASYNC; test/suites/correctness.sh
 * reports that as skipped, not passed.
 */
#include "xps_check.h"

#include <linux/fs.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>

/*
 * What Debian 12's headers (Linux 6.1) lack, defined as Linux 6.12's
 * include/uapi/linux/fs.h (PAGEMAP_SCAN and its structures) and
 * include/uapi/linux/userfaultfd.h (the feature bits) define it.
 */
#ifndef PROCFS_IOCTL_MAGIC
#define PROCFS_IOCTL_MAGIC 'f'
#endif
#ifndef PAGEMAP_SCAN
/* One output region of PAGEMAP_SCAN: pages [start, end), their categories. */
struct page_region {
	uint64_t start;
	uint64_t end;
	uint64_t categories;
};

/* The ioctl's argument; the kernel writes only walk_end back. */
struct pm_scan_arg {
	uint64_t size;			/* sizeof(struct pm_scan_arg) */
	uint64_t flags;			/* PM_SCAN_* */
	uint64_t start;			/* first address, page aligned */
	uint64_t end;			/* end address (exclusive) */
	uint64_t walk_end;		/* where the walk stopped (== end: done) */
	uint64_t vec;			/* struct page_region array, or 0 */
	uint64_t vec_len;		/* its length */
	uint64_t max_pages;		/* at most this many pages (0: no limit) */
	uint64_t category_inverted;	/* categories that match when clear */
	uint64_t category_mask;		/* all of these must match */
	uint64_t category_anyof_mask;	/* one of these must match (0: none) */
	uint64_t return_mask;		/* categories reported in the regions */
};

#define PAGEMAP_SCAN		_IOWR(PROCFS_IOCTL_MAGIC, 16, struct pm_scan_arg)
#define PAGE_IS_WPALLOWED	0x01
#define PAGE_IS_WRITTEN		0x02
#define PAGE_IS_FILE		0x04
#define PAGE_IS_PRESENT		0x08
#define PAGE_IS_SWAPPED		0x10
#define PM_SCAN_WP_MATCHING	0x01	/* write-protect what matched */
#define PM_SCAN_CHECK_WPASYNC	0x02	/* EPERM on a VMA without WP_ASYNC */
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED	0x2000	/* markers on empty entries too */
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC		0x8000	/* the kernel resolves WP faults */
#endif

#define EXIT_NOT_APPLICABLE	77
#define HALF			2048	/* pages per half: 8 MiB, 4 page tables */
#define PT_ENTRIES		512	/* entries per page table (x86-64) */
#define DEFAULT_ROUNDS		300
#define RACE_SECONDS		30	/* the race ends after this, rounds or not */
#define SMALL_VEC		7	/* regions per ioctl of a SCAN_SMALL_VEC */
/*
 * Regions per ioctl of the other scans: no more than the kernel's bounce
 * buffer (PAGEMAP_WALK_SIZE >> PAGE_SHIFT, 512), which then never fills
 * before the caller's array does.  With a larger array the kernel
 * restarts its walk inside the ioctl when the bounce buffer fills, and
 * returns as walk_end the last restart point even when the walk went on
 * to the end (seen on Linux 6.18; 6.12's and 7.3's do_pagemap_scan() are
 * the same): a caller that resumes at walk_end scans part of the range
 * twice.
 */
#define VEC_MAX			512
#define SEED			0x5ca1
#define LOG_CAP			(1024UL * 1024)	/* writer log entries */

/* Which of the kernel's write-protecting loops a scan goes through. */
enum scan_kind {
	SCAN_WRITTEN,		/* only PAGE_IS_WRITTEN asked and returned */
	SCAN_GENERIC,		/* PRESENT and FILE returned too */
	SCAN_SMALL_VEC,		/* as SCAN_WRITTEN, SMALL_VEC regions an ioctl */
	SCAN_WP_ONLY,		/* no output array: protect, report nothing */
};

static const char *const kind_name[] = {
	"written-only", "generic", "small-vec", "wp-only",
};

/* One store of the writer: page, and the latest scan started before/after. */
struct wlog {
	uint32_t page;
	uint32_t n;
	uint32_t n2;
};

static size_t psz, wpp, npages, len;
static unsigned char *base;	/* the region: anon half, then memfd half */
static unsigned char *shadow;	/* the pre-copy of the race */
static unsigned char *rep;	/* rep[p]: the last scan reported page p */
static unsigned char *zapped;	/* zapped[p]: anon page p zapped (reads 0) */
static uint64_t *cur0;		/* word 0 of every page, as last written */
static uint64_t *hist;		/* bit b: scan (K - b) reported the page */
static uint32_t *wcount;	/* the writer's stores per page */
static struct page_region *vec;
static int memfd, pagemap_fd, uffd;

static struct wlog *wlog;
static atomic_ulong log_head;	/* entries the writer published */
static atomic_ulong log_tail;	/* entries this thread consumed */
static atomic_uint started;	/* number of the latest scan started */
static atomic_int stop_writer;
static atomic_int writer_exited;
static unsigned long zaps;	/* the writer's, read after the join */
static int writer_errno;
static long delay_us;		/* -d: xen_lazy_leave_delay_us for the race */

#define LEAVE_DELAY "/sys/kernel/debug/xen_lazy_leave_delay_us"

/* With -d: set the delay and mark (@on) or unmark this thread. */
static void leave_delay(struct xps_check *c, int on)
{
	if (!delay_us)
		return;
	if (xps_write_long("/proc/thread-self/make-it-fail", on))
		XPS_DIE(c, "write /proc/thread-self/make-it-fail: %s (no CONFIG_FAULT_INJECTION?)",
			strerror(errno));
	if (xps_write_long(LEAVE_DELAY, on ? delay_us : 0))
		XPS_DIE(c, "write %s: %s (not the lab's 6.12 debug kernel?)", LEAVE_DELAY,
			strerror(errno));
	if (on)
		printf("# scans busy-wait %ld us before their queued updates are issued\n",
		       delay_us);
}

/* Page index @p's half, for messages: "anon" or "shmem". */
static const char *half_name(size_t p)
{
	return p < HALF ? "anon" : "shmem";
}

/* Address of page @p of the region. */
static unsigned char *page_at(size_t p)
{
	return base + p * psz;
}

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Print "# not applicable: <@why>" and exit with EXIT_NOT_APPLICABLE:
 * the kernel lacks what the checks test, so none of them passes.
 */
__attribute__((format(printf, 1, 2), noreturn))
static void not_applicable(const char *fmt, ...)
{
	va_list ap;

	printf("# not applicable: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(EXIT_NOT_APPLICABLE);
}

/*
 * Exit through not_applicable() if the kernel has no PAGEMAP_SCAN (an
 * empty scan of /proc/self/pagemap gives ENOTTY or EINVAL) or its
 * userfaultfd no UFFD_FEATURE_WP_ASYNC; FAIL @c and exit if it cannot
 * tell (pagemap or userfaultfd() missing).  Leaves pagemap_fd open.
 */
static void probe(struct xps_check *c)
{
	struct pm_scan_arg a = { .size = sizeof(a) };
	struct uffdio_api api = { .api = UFFD_API };
	int fd;

	pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pagemap_fd < 0)
		XPS_DIE(c, "cannot run because /proc/self/pagemap cannot be opened: %s",
			strerror(errno));
	if (ioctl(pagemap_fd, PAGEMAP_SCAN, &a) < 0) {
		if (errno == ENOTTY || errno == EINVAL)
			not_applicable("no PAGEMAP_SCAN ioctl (Linux 6.7 has it): %s",
				       strerror(errno));
		XPS_DIE(c, "an empty PAGEMAP_SCAN failed: %s", strerror(errno));
	}
	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (fd < 0)
		XPS_DIE(c, "cannot run because userfaultfd() failed: %s", strerror(errno));
	if (ioctl(fd, UFFDIO_API, &api))
		XPS_DIE(c, "cannot run because UFFDIO_API failed: %s", strerror(errno));
	close(fd);
	if (!(api.features & UFFD_FEATURE_WP_ASYNC))
		not_applicable("userfaultfd offers no UFFD_FEATURE_WP_ASYNC (features %#llx)",
			       (unsigned long long)api.features);
}

/*
 * Map the region (anon half, memfd half, 2 MiB aligned), fill it with
 * pattern SEED, register it with a new userfaultfd for asynchronous
 * write-protection, and allocate the bookkeeping.  Dies through @c on any
 * failure.
 */
static void setup(struct xps_check *c)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED |
			    UFFD_FEATURE_WP_HUGETLBFS_SHMEM,
	};
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	size_t align = PT_ENTRIES * psz;
	unsigned char *resv;

	resv = xps_map(c, len + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
	base = resv + (align - (uintptr_t)resv % align) % align;
	if (mmap(base, HALF * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		XPS_DIE(c, "mmap of the anonymous half: %s", strerror(errno));
	xps_madvise(c, base, HALF * psz, MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE");
	memfd = xps_memfd(c, "xps-pagemap-scan", HALF * psz);
	if (mmap(base + HALF * psz, HALF * psz, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, memfd, 0) == MAP_FAILED)
		XPS_DIE(c, "mmap of the memfd half: %s", strerror(errno));
	xps_fill(base, len, SEED, 0);

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (uffd < 0)
		XPS_DIE(c, "cannot run because userfaultfd() failed: %s", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		XPS_DIE(c,
			"cannot run because UFFDIO_API(WP_ASYNC | WP_HUGETLBFS_SHMEM) failed: %s",
			strerror(errno));
	reg.range.start = (uintptr_t)base;
	reg.range.len = len;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		XPS_DIE(c, "cannot run because UFFDIO_REGISTER(WP) of both halves failed: %s",
			strerror(errno));

	shadow = malloc(len);
	rep = calloc(npages, 1);
	zapped = calloc(npages, 1);
	cur0 = calloc(npages, sizeof(*cur0));
	hist = calloc(npages, sizeof(*hist));
	wcount = calloc(npages, sizeof(*wcount));
	vec = calloc(VEC_MAX, sizeof(*vec));
	wlog = calloc(LOG_CAP, sizeof(*wlog));
	if (!shadow || !rep || !zapped || !cur0 || !hist || !wcount || !vec || !wlog)
		XPS_DIE(c, "out of memory");
	for (size_t p = 0; p < npages; p++)
		cur0[p] = xps_word(SEED, p * wpp);
}

/*
 * One scan of the whole region: PAGEMAP_SCAN with PM_SCAN_WP_MATCHING |
 * PM_SCAN_CHECK_WPASYNC for category PAGE_IS_WRITTEN, through the loop
 * @kind names, ioctl after ioctl from walk_end until the region is done.
 * Sets rep[p] to 1 for each page reported, 0 for the others.  Returns the
 * number of pages reported (0 for SCAN_WP_ONLY), or -1 with a problem of
 * @c reported if a region is outside the region, unaligned, reported
 * twice or lacks PAGE_IS_WRITTEN, or walk_end goes backwards; dies
 * through @c if the ioctl fails.
 */
static long scan_region(struct xps_check *c, enum scan_kind kind)
{
	uint64_t start = (uintptr_t)base, end = start + len, at = start;
	long pages = 0;
	int calls = 0;

	memset(rep, 0, npages);
	while (at < end) {
		struct pm_scan_arg a = {
			.size = sizeof(a),
			.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
			.start = at,
			.end = end,
			.vec = (uintptr_t)vec,
			.vec_len = kind == SCAN_SMALL_VEC ? SMALL_VEC : VEC_MAX,
			.category_mask = PAGE_IS_WRITTEN,
			.return_mask = PAGE_IS_WRITTEN,
		};
		long n;

		if (kind == SCAN_GENERIC)
			a.return_mask |= PAGE_IS_PRESENT | PAGE_IS_FILE;
		if (kind == SCAN_WP_ONLY) {
			a.vec = 0;
			a.vec_len = 0;
		}
		n = ioctl(pagemap_fd, PAGEMAP_SCAN, &a);
		calls++;
		if (n < 0)
			XPS_DIE(c, "PAGEMAP_SCAN (%s) of [%#llx, %#llx) failed: %s",
				kind_name[kind], (unsigned long long)at,
				(unsigned long long)end, strerror(errno));
		for (long i = 0; i < n; i++) {
			struct page_region *r = &vec[i];

			if (r->start < at || r->end > end || r->start >= r->end ||
			    (r->start | r->end) % psz || !(r->categories & PAGE_IS_WRITTEN)) {
				xps_bad(c,
					"%s scan: region [%#llx, %#llx) categories %#llx is not a written part of [%#llx, %#llx)",
					kind_name[kind], (unsigned long long)r->start,
					(unsigned long long)r->end,
					(unsigned long long)r->categories,
					(unsigned long long)at, (unsigned long long)end);
				return -1;
			}
			for (uint64_t va = r->start; va < r->end; va += psz) {
				size_t p = (size_t)(va - start) / psz;

				if (rep[p]++) {
					xps_bad(c, "%s scan: page %zu reported twice",
						kind_name[kind], p);
					return -1;
				}
				pages++;
			}
		}
		if (a.walk_end <= at || a.walk_end > end) {
			xps_bad(c, "%s scan: walk_end %#llx after a scan from %#llx to %#llx",
				kind_name[kind], (unsigned long long)a.walk_end,
				(unsigned long long)at, (unsigned long long)end);
			return -1;
		}
		at = a.walk_end;
		if (calls > (int)npages + 1) {
			xps_bad(c, "%s scan: no end after %d ioctls", kind_name[kind], calls);
			return -1;
		}
	}
	return pages;
}

/* --------------------------------------------------------- exact phase */

/* The write sets of the exact phase, and the scan that follows each. */
static const struct {
	const char *name;
	enum scan_kind kind;
} steps[] = {
	{ "all", SCAN_WP_ONLY },	/* then nothing reported for it: */
	{ "every third", SCAN_WRITTEN },
	{ "a random quarter", SCAN_GENERIC },
	{ "page-table edges", SCAN_WRITTEN },
	{ "every other", SCAN_SMALL_VEC },
	{ "none", SCAN_GENERIC },
	{ "one", SCAN_SMALL_VEC },
	{ "all", SCAN_GENERIC },
};

/* 1 if step @s of the exact phase writes page @p, else 0. */
static int step_writes(size_t s, size_t p)
{
	size_t e = p % PT_ENTRIES;

	switch (s) {
	case 0: case 7: return 1;
	case 1: return p % 3 == 0;
	case 2: return (xps_word(SEED + 2, p) & 0x30) == 0;
	case 3: return e < 2 || e >= PT_ENTRIES - 2;
	case 4: return p % 2 == 1;
	case 6: return p == HALF + HALF / 2 + 5;
	default: return 0;
	}
}

/*
 * Compare the last scan's report (rep[]) with @want[] in each half: FAIL
 * the half's check @ec[0] (anon) or @ec[1] (shmem) on a written page not
 * reported or a reported page not written, naming step @s.
 */
static void compare(struct xps_check ec[2], size_t s, const unsigned char *want)
{
	for (int h = 0; h < 2; h++) {
		size_t missed = 0, extra = 0, first_m = 0, first_e = 0;

		for (size_t p = (size_t)h * HALF; p < (size_t)(h + 1) * HALF; p++) {
			if (want[p] && !rep[p] && !missed++)
				first_m = p;
			if (!want[p] && rep[p] && !extra++)
				first_e = p;
		}
		if (missed)
			xps_bad(&ec[h],
				"step %zu (%s written, %s scan): %zu written pages not reported, the first page %zu",
				s, steps[s].name, kind_name[steps[s].kind], missed, first_m);
		if (extra)
			xps_bad(&ec[h],
				"step %zu (%s written, %s scan): %zu pages reported that were not written, the first page %zu",
				s, steps[s].name, kind_name[steps[s].kind], extra, first_e);
	}
}

/*
 * Checks pagemap-scan-first-scan and pagemap-scan-exact-anon/-shmem (see
 * the top of the file).  Leaves every page write-protected, nothing
 * written since the last scan.
 */
static void exact_phase(void)
{
	struct xps_check first, ec[2];
	unsigned char *want = calloc(npages, 1);
	double t0 = now_s();
	long n;

	xps_begin(&first, "pagemap-scan-first-scan");
	if (!want)
		XPS_DIE(&first, "out of memory");
	n = scan_region(&first, SCAN_WRITTEN);
	if (n >= 0 && (size_t)n != npages)
		xps_bad(&first,
			"the first scan reported %ld of %zu pages: all were written, none protected yet",
			n, npages);
	n = scan_region(&first, SCAN_GENERIC);
	if (n > 0)
		xps_bad(&first,
			"a scan right after the first reported %ld pages, none written in between (the first is page %zu)",
			n, (size_t)((unsigned char *)memchr(rep, 1, npages) - rep));
	xps_end(&first);

	xps_begin(&ec[0], "pagemap-scan-exact-anon");
	xps_begin(&ec[1], "pagemap-scan-exact-shmem");
	for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
		for (size_t p = 0; p < npages; p++) {
			want[p] = (unsigned char)step_writes(s, p);
			if (!want[p])
				continue;
			cur0[p] = xps_word(SEED + 100 + s, p);
			*(volatile uint64_t *)page_at(p) = cur0[p];
		}
		if (scan_region(&ec[0], steps[s].kind) < 0)
			break;
		if (steps[s].kind != SCAN_WP_ONLY)
			compare(ec, s, want);
	}
	xps_end(&ec[0]);
	xps_end(&ec[1]);
	printf("# exact: %zu steps over %zu pages in %.1f s\n", ARRAY_SIZE(steps), npages,
	       now_s() - t0);
	free(want);
}

/* ---------------------------------------------------------- race phase */

/* The value the writer's @count-th store writes into word 0 of page @p. */
static uint64_t race_word(size_t p, uint32_t count)
{
	return xps_word(SEED + 1000 + p, count);
}

/*
 * The writer thread (@arg unused; returns NULL): on CPU 1, until
 * stop_writer, stores a new value into word 0 of a random page (one time
 * in 16 after zapping the page with MADV_DONTNEED) and logs the page and
 * the scan numbers read before and after the store.  Waits while the log
 * is full.  Sets writer_errno if a madvise() fails, and stops; sets
 * writer_exited when it stops.
 */
static void *writer_main(void *arg)
{
	uint64_t rnd = SEED;
	unsigned long head = 0;

	(void)arg;
	xps_pin(1);
	while (!atomic_load_explicit(&stop_writer, memory_order_relaxed)) {
		struct wlog e;
		size_t p;

		if (head - atomic_load_explicit(&log_tail, memory_order_acquire) >= LOG_CAP)
			continue;
		rnd = xps_word(rnd, head);
		p = (size_t)(rnd % npages);
		if ((rnd >> 40) % 16 == 0) {
			if (madvise(page_at(p), psz, MADV_DONTNEED)) {
				writer_errno = errno;
				break;
			}
			if (p < HALF)
				zapped[p] = 1;
			zaps++;
		}
		cur0[p] = race_word(p, ++wcount[p]);
		e.page = (uint32_t)p;
		e.n = atomic_load(&started);
		*(volatile uint64_t *)page_at(p) = cur0[p];
		atomic_thread_fence(memory_order_seq_cst);
		e.n2 = atomic_load(&started);
		wlog[head % LOG_CAP] = e;
		atomic_store_explicit(&log_head, ++head, memory_order_release);
	}
	atomic_store(&writer_exited, 1);
	return NULL;
}

/*
 * Check every logged store whose last possible scan (n2 + 1) is scan @k
 * or earlier (the last @k of the race: all): some scan in n .. n2 + 1
 * must have reported its page (hist[]), else FAIL the page's half in
 * @rc.  Counts the stores checked into *@checked, and into *@unchecked
 * those not reported by the scans of lo .. hi that hist[] still holds
 * (the last 64) when it does not hold them all.
 */
static void drain(struct xps_check rc[2], uint32_t k, unsigned long *checked,
		  unsigned long *unchecked)
{
	unsigned long tail = atomic_load_explicit(&log_tail, memory_order_relaxed);
	unsigned long head = atomic_load_explicit(&log_head, memory_order_acquire);

	for (; tail < head; tail++) {
		struct wlog e = wlog[tail % LOG_CAP];
		uint32_t lo = e.n ? e.n : 1, hi = e.n2 + 1, seen;
		uint64_t width, mask;

		if (hi > k)
			break;	/* n2 never decreases: so do all later ones */
		(*checked)++;
		/* hist[] holds scans k - 63 .. k: look at that part of lo .. hi. */
		seen = k - lo >= 64 ? k - 63 : lo;
		width = hi - seen + 1;
		mask = (width >= 64 ? ~0ULL : (1ULL << width) - 1) << (k - hi);
		if (hist[e.page] & mask)
			continue;
		if (seen != lo)
			(*unchecked)++;
		else
			xps_bad(&rc[e.page >= HALF],
				"page %u: a write made after scan %u started and before scan %u started was reported by none of scans %u..%u",
				e.page, e.n, e.n2 + 1, lo, hi);
	}
	atomic_store_explicit(&log_tail, tail, memory_order_release);
}

/*
 * Checks pagemap-scan-race-anon/-shmem with @rounds scans under the
 * writer, then one with the writer stopped (see the top of the file).
 */
static void race_phase(long rounds)
{
	struct xps_check rc[2];
	unsigned long checked = 0, unchecked = 0, reported = 0;
	uint32_t last = (uint32_t)rounds + 1;
	unsigned long seen_head = 0;
	double t0 = now_s();
	pthread_t t;

	xps_begin(&rc[0], "pagemap-scan-race-anon");
	xps_begin(&rc[1], "pagemap-scan-race-shmem");
	xps_need_two_cpus(&rc[0], xps_ncpus());
	if (xps_pin(0))
		XPS_DIE(&rc[0], "cannot pin to CPU 0: %s", strerror(errno));
	/* Every page is protected and unwritten since the last scan. */
	memcpy(shadow, base, len);
	if (pthread_create(&t, NULL, writer_main, NULL))
		XPS_DIE(&rc[0], "pthread_create failed");
	leave_delay(&rc[0], 1);
	for (uint32_t k = 1; k <= last; k++) {
		enum scan_kind kind = (enum scan_kind)(k % 3);
		long n;

		if (k < last && now_s() - t0 > RACE_SECONDS)
			last = k;
		/*
		 * Scan only after the writer wrote again (unless it waits for
		 * log space): so the scans overlap its writes.
		 */
		while (k < last && atomic_load(&log_head) == seen_head &&
		       seen_head - atomic_load(&log_tail) < LOG_CAP &&
		       !atomic_load(&writer_exited))
			;
		seen_head = atomic_load(&log_head);
		if (k == last || atomic_load(&writer_exited)) {
			last = k;
			atomic_store(&stop_writer, 1);
			pthread_join(t, NULL);
			if (writer_errno)
				XPS_DIE(&rc[0], "the writer's madvise(MADV_DONTNEED) failed: %s",
					strerror(writer_errno));
		}
		atomic_store(&started, k);
		n = scan_region(&rc[0], kind);
		if (n < 0) {
			atomic_store(&stop_writer, 1);
			if (k < last)
				pthread_join(t, NULL);
			break;
		}
		reported += (unsigned long)n;
		for (size_t p = 0; p < npages; p++) {
			hist[p] = (hist[p] << 1) | rep[p];
			if (rep[p])
				memcpy(shadow + p * psz, page_at(p), psz);
		}
		drain(rc, k, &checked, &unchecked);
	}
	leave_delay(&rc[0], 0);
	if (!rc[0].bad) {
		unsigned long head = atomic_load(&log_head);

		if (atomic_load(&log_tail) != head)
			xps_bad(&rc[0], "%lu logged writes were never checked",
				head - atomic_load(&log_tail));
		for (size_t p = 0; p < npages; p++) {
			const uint64_t *copy = (const uint64_t *)(shadow + p * psz);
			const volatile uint64_t *mem = (const volatile uint64_t *)page_at(p);
			size_t i = 0;

			while (i < wpp && copy[i] == mem[i])
				i++;
			if (i == wpp)
				continue;
			xps_bad(&rc[p >= HALF],
				"page %zu: the pre-copy differs from memory after the last scan (word %zu: copy %#llx, memory %#llx): a write no scan reported",
				p, i, (unsigned long long)copy[i], (unsigned long long)mem[i]);
		}
	}
	if (last <= (uint32_t)rounds)
		printf("# race: stopped after %u of %ld scans: over %d s\n", last - 1, rounds,
		       RACE_SECONDS);
	printf("# race: %u scans with the writer running, %.1f s: ", last - 1, now_s() - t0);
	printf("%lu writes checked (%lu after a zap), %lu too old to check, %lu pages reported\n",
	       checked, zaps, unchecked, reported);
	xps_end(&rc[0]);
	xps_end(&rc[1]);
}

/* ------------------------------------------------------------ contents */

/*
 * FAIL @c unless page @p's copy at @got holds word 0 as last written and
 * the rest of pattern SEED (zeros for a zapped anonymous page); @what
 * names the copy.  Returns 1 if the page is wrong, else 0.
 */
static int expect_page(struct xps_check *c, const char *what, const unsigned char *got,
		       size_t p)
{
	const volatile uint64_t *w = (const volatile uint64_t *)got;

	if (w[0] != cur0[p]) {
		xps_bad(c, "%s: page %zu (%s) word 0 holds %#llx, last written %#llx",
			what, p, half_name(p), (unsigned long long)w[0],
			(unsigned long long)cur0[p]);
		return 1;
	}
	for (size_t i = 1; i < wpp; i++) {
		uint64_t want = zapped[p] ? 0 : xps_word(SEED, p * wpp + i);

		if (w[i] != want) {
			xps_bad(c, "%s: page %zu (%s) word %zu holds %#llx, expected %#llx",
				what, p, half_name(p), i, (unsigned long long)w[i],
				(unsigned long long)want);
			return 1;
		}
	}
	return 0;
}

/* Check pagemap-scan-contents (see the top of the file). */
static void check_contents(void)
{
	struct xps_check c;
	unsigned char *buf = malloc(HALF * psz);
	size_t wrong = 0;

	xps_begin(&c, "pagemap-scan-contents");
	if (!buf)
		XPS_DIE(&c, "out of memory");
	for (size_t p = 0; p < npages; p++)
		wrong += (size_t)expect_page(&c, "mapping", page_at(p), p);
	xps_pread(&c, memfd, buf, HALF * psz, 0);
	for (size_t p = HALF; p < npages; p++)
		wrong += (size_t)expect_page(&c, "pread of the memfd", buf + (p - HALF) * psz, p);
	if (wrong > 1)
		fprintf(stderr, "  %s: %zu pages wrong\n", c.name, wrong);
	free(buf);
	xps_end(&c);
}

/*
 * Takes an optional race round count (argv[1], at least 1); returns the
 * exit status (see the top of the file), 2 on a bad argument.
 */
int main(int argc, char **argv)
{
	struct xps_check c;
	long rounds = DEFAULT_ROUNDS;
	int a = 1;

	if (a + 1 < argc && !strcmp(argv[a], "-d")) {
		delay_us = strtol(argv[a + 1], NULL, 10);
		a += 2;
	}
	if (a < argc)
		rounds = strtol(argv[a++], NULL, 10);
	if (a < argc || rounds < 1 || rounds > 1000000 || delay_us < 0 || delay_us > 100000) {
		fprintf(stderr, "usage: %s [-d US] [ROUNDS]   (race scans, default %d)\n",
			argv[0], DEFAULT_ROUNDS);
		return 2;
	}
	psz = xps_page_size();
	wpp = xps_wpp();
	npages = 2 * HALF;
	len = npages * psz;
	xps_begin(&c, "pagemap-scan-first-scan");
	probe(&c);
	setup(&c);
	exact_phase();
	race_phase(rounds);
	check_contents();
	return xps_exit_status();
}
