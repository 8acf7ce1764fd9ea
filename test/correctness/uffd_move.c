// SPDX-License-Identifier: MIT
/*
 * uffd_move - userfaultfd UFFDIO_MOVE of anonymous pages, pinned and not:
 * the fix site of test/linux-patch/7.3/0005.  On 7.3, move_present_ptes()
 * (mm/userfaultfd.c) moves a run of small anonymous folios in one lazy MMU
 * section: per page it clears the source entry with ptep_get_and_clear(),
 * then checks folio_maybe_dma_pinned() and, if the folio got pinned, puts
 * the entry back and fails with EBUSY.  GUP-fast pins first and re-reads
 * the entry after, so the clear must be in the page table before the
 * check; batched (Xen PV with xen_ptswap) it would still be queued, GUP-fast
 * on the other CPU could pin through the old entry and keep its pin, and
 * the pinned folio would be moved: then the pin holds a page that is at
 * B, and what the pinner checks at A is gone (uffd-move-race-pinned).
 * 6.12 moves one PTE per call (move_present_pte(), ptep_clear_flush(),
 * outside lazy MMU mode): the same guarantees, no batching.
 *
 * What the kernel guarantees, and all that is asserted (UFFDIO_MOVE's
 * kernel-doc, move_pages() in mm/userfaultfd.c, and the uapi header):
 *  - a move of present, exclusive, small anonymous pages into a range
 *    registered with this userfaultfd whose entries are none moves them:
 *    the ioctl returns 0 with .move = .len (or, stopped early, EAGAIN with
 *    the bytes moved, and the rest can be asked for again); the
 *    destination then holds the source's bytes and the source is a hole:
 *    not present in /proc/self/pagemap, a touch of it is a missing fault
 *    (with UFFD_FEATURE_SIGBUS: SIGBUS), a move from it fails ENOENT
 *  - a page whose folio is pinned (FOLL_PIN) when the move reaches it is
 *    not moved: that move fails EBUSY (.move = -EBUSY) at that page, and
 *    the page stays mapped where it was, same frame, same bytes; once
 *    unpinned it moves like any other
 *  - a pin that pin_user_pages_fast() returned for address X holds the
 *    folio mapped at X: while the pin is held no UFFDIO_MOVE moves it
 *    away, whenever the pin was taken (before or during a move)
 * Not asserted: the frame of a page that is not pinned (the kernel may
 * migrate it; whether the move kept it is only noted), EBUSY at pages
 * that are not pinned in the race (folio_maybe_dma_pinned() is a "maybe":
 * GUP-fast holds a pin for a moment before it backs off), how many pins
 * of the race overlapped a move (noted).
 *
 * Pins: io_uring's IORING_REGISTER_BUFFERS, which pins with
 * pin_user_pages_fast(FOLL_WRITE | FOLL_LONGTERM) and holds the pins until
 * IORING_UNREGISTER_BUFFERS: a FOLL_PIN pin through GUP-fast whose lifetime
 * the program controls (an O_DIRECT pin lasts only while its I/O is in
 * flight), with no filesystem or device needed.  Only the registration
 * syscalls are used, no rings are mapped.
 *
 * Areas: A and B, adjacent, 2 MiB-aligned (x86-64 PMDs), MADV_NOHUGEPAGE
 * (small folios only: a large folio is split or refused, not batched),
 * private anonymous, A written with a pattern, then both registered
 * with one userfaultfd (UFFDIO_REGISTER_MODE_MISSING, UFFD_FEATURE_MOVE and
 * UFFD_FEATURE_SIGBUS: a touch of a hole raises SIGBUS, and GUP on a hole
 * fails EFAULT, instead of waiting for a fault handler).
 *
 * Checks:
 *  uffd-move-contents      4096 pages (16 MiB) moved A to B in calls of
 *                          1 to 1024 pages (many straddle a PMD, most move
 *                          several PTEs per move_present_ptes() call),
 *                          then back B to A: each time every call moves
 *                          all it was asked to (or stops early with
 *                          EAGAIN, and the rest moves when asked again),
 *                          the destination holds the source's bytes, and
 *                          the source is a hole (pagemap, SIGBUS on 8
 *                          pages, ENOENT)
 *  uffd-move-pinned-ebusy  1024 pages, 19 of them (8 runs, at the start,
 *                          end and middle of move calls and across a PMD)
 *                          pinned, moved A to B in calls of up to 64 pages:
 *                          EBUSY exactly at the pinned pages, each still
 *                          at A with its frame and bytes, its B slot a
 *                          hole; every other page at B with its bytes,
 *                          its A slot a hole; after the unpin the 19 move
 *                          too (EBUSY retried for up to 2 s)
 *  uffd-move-race-pinned   RACE_SECONDS (default 10) of CPU 0 moving 512
 *                          pages A to B and back (calls of 16, 64 or 512
 *                          pages; the pages that failed EBUSY stay) while
 *                          CPU 1 pins 1 to 16 pages of A at a time, checks
 *                          them, waits for two more move calls (or 20 ms),
 *                          checks again and unpins: every successful pin's
 *                          pages are present at A (same frame at both
 *                          checks) and read their own bytes, and no move
 *                          moved a page pinned from before it started to
 *                          after it returned
 *  uffd-move-race-contents after the race every page moves back to A
 *                          (nothing pinned: EBUSY retried for up to 2 s),
 *                          no move call fails otherwise (ENOENT: a page
 *                          lost, EEXIST: one where none should be), and A
 *                          holds every page's bytes, B is a hole
 * Notes ("# ..."): whether pagemap shows frames (root), how many moved
 * pages kept their frame, the race's counts (move calls, pages moved,
 * EBUSY, pins taken, pins that found a page away).
 *
 * Usage: uffd_move [RACE_SECONDS].  Needs two CPUs (the race), root
 * (io_uring's pins are charged to RLIMIT_MEMLOCK otherwise; pagemap shows
 * frames only to root) and io_uring.  Exit status 0 if every check passed,
 * 1 if one failed, 77 if the kernel has no UFFDIO_MOVE (Linux before 6.8:
 * UFFDIO_API does not offer UFFD_FEATURE_MOVE): then it prints only
 * "# not applicable: <why>", no PASS (test/suites/correctness.sh reports
 * it as skipped).
 */
#include "xps_check.h"

#include <linux/io_uring.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>

/*
 * UFFDIO_MOVE is Linux 6.8's; Debian 12's headers (Linux 6.1's uapi) lack
 * it.  As in Linux 7.3's include/uapi/linux/userfaultfd.h.
 */
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE		0x10000	/* 1 << 16 */
#endif
#ifndef UFFDIO_MOVE
#define _UFFDIO_MOVE			(0x05)
#define UFFDIO_MOVE_MODE_DONTWAKE	((__u64)1 << 0)
#define UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES ((__u64)1 << 1)
struct uffdio_move {
	__u64 dst;
	__u64 src;
	__u64 len;
	__u64 mode;
	/* written by the ioctl: bytes moved, or -errno if none */
	__s64 move;
};

#define UFFDIO_MOVE			_IOWR(UFFDIO, _UFFDIO_MOVE, struct uffdio_move)
#endif

#define PMD_BYTES	(2 * 1024 * 1024UL)
#define MOVE_PAGES	4096
#define PIN_PAGES	1024
#define RACE_PAGES	512
#define SEED_CONTENTS	4100
#define SEED_PINNED	4200
#define SEED_RACE	4300

#define PM_PRESENT	0x8000000000000000ULL
#define PM_SWAP		0x4000000000000000ULL
#define PM_PFN_MASK	((1ULL << 55) - 1)

static size_t psz;
static int uffd = -1, pagemap = -1;
static int frames_visible;	/* pagemap shows PFNs (root) */

/* ------------------------------------------------------------ helpers */

/*
 * Open a userfaultfd and do the UFFDIO_API handshake asking for @features.
 * Returns the descriptor, or -1 with errno set (userfaultfd() or UFFDIO_API
 * failed); if @have is not NULL it gets the features the kernel offers.
 */
static int uffd_open(uint64_t features, uint64_t *have)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	int err;

	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api)) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	if (have)
		*have = api.features;
	return fd;
}

/*
 * UFFDIO_MOVE of @len bytes from @src to @dst (mode 0: wake, no holes).
 * Returns the bytes moved (> 0: all of @len, or fewer when the kernel
 * stopped early with EAGAIN), or -errno of a move that moved nothing
 * (EBUSY: the first page is pinned; EAGAIN: ask again).  An answer the
 * uapi does not allow (.move not matching the result) is a problem of @c,
 * and returns -EPROTO.
 */
static long uffd_move_range(struct xps_check *c, unsigned char *dst, unsigned char *src,
			    size_t len)
{
	struct uffdio_move m = {
		.dst = (uintptr_t)dst, .src = (uintptr_t)src, .len = len,
	};
	int err;

	if (ioctl(uffd, UFFDIO_MOVE, &m) == 0) {
		if (m.move == (__s64)len)
			return (long)len;
		xps_bad(c, "UFFDIO_MOVE of %zu bytes returned 0 with .move %lld", len,
			(long long)m.move);
		return -EPROTO;
	}
	err = errno;
	if (err == EAGAIN && m.move > 0 && m.move < (__s64)len && !(m.move % (__s64)psz))
		return (long)m.move;
	/* .move is not written by errors found before the move starts */
	if (m.move == -err || m.move == 0)
		return -err;
	xps_bad(c, "UFFDIO_MOVE of %zu bytes failed with %s but .move is %lld", len,
		strerror(err), (long long)m.move);
	return -EPROTO;
}

/*
 * Read the pagemap entries of the @n pages at @p into @pm.  Returns 0, or
 * -errno (no pagemap, short read).
 */
static int pm_read(const unsigned char *p, size_t n, uint64_t *pm)
{
	off_t off = (off_t)((uintptr_t)p / psz * sizeof(*pm));
	ssize_t got;

	if (pagemap < 0)
		return -EBADF;
	got = pread(pagemap, pm, n * sizeof(*pm), off);
	if (got < 0)
		return -errno;
	return (size_t)got == n * sizeof(*pm) ? 0 : -EIO;
}

/*
 * Check that none of the @n pages at @p is present or swapped in pagemap
 * (a hole); reports the first one that is, as a problem of @c prefixed by
 * @what.  Returns the number that are not holes.
 */
static size_t expect_holes(struct xps_check *c, const char *what, const unsigned char *p,
			   size_t n, uint64_t *pm)
{
	size_t bad = 0;
	int err = pm_read(p, n, pm);

	if (err) {
		xps_bad(c, "%s: pagemap read: %s", what, strerror(-err));
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		if (!(pm[i] & (PM_PRESENT | PM_SWAP)))
			continue;
		if (!bad)
			xps_bad(c, "%s: page %zu is %s, not a hole (pagemap %#llx)", what, i,
				pm[i] & PM_PRESENT ? "present" : "swapped out",
				(unsigned long long)pm[i]);
		bad++;
	}
	return bad;
}

static __thread sigjmp_buf bus_env;
static __thread volatile sig_atomic_t bus_armed;

/*
 * SIGBUS handler: back to the armed probe_page() of this thread; unarmed,
 * the default action (the access faults again and the program dies).
 */
static void on_sigbus(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	if (bus_armed)
		siglongjmp(bus_env, 1);
	sigaction(sig, &dfl, NULL);
}

/*
 * Compare the page at @p with page @page of pattern @seed, reading it
 * under a SIGBUS guard.  Returns -2 if the read raised SIGBUS (a hole of a
 * registered range), -1 if the page holds the pattern, else the index of
 * the first wrong word.
 */
static long probe_page(const unsigned char *p, uint64_t seed, size_t page)
{
	long r;

	if (sigsetjmp(bus_env, 1)) {
		bus_armed = 0;
		return -2;
	}
	bus_armed = 1;
	r = xps_cmp(p, psz, seed, page * xps_wpp());
	bus_armed = 0;
	return r;
}

/*
 * An io_uring instance used only to register buffers (no rings mapped).
 * Returns its descriptor, or -errno of io_uring_setup().
 */
static int ring_open(void)
{
	struct io_uring_params p;
	int fd;

	memset(&p, 0, sizeof(p));
	fd = (int)syscall(SYS_io_uring_setup, 1, &p);
	return fd < 0 ? -errno : fd;
}

/*
 * Pin the @n buffers @iov as @ring's registered buffers (FOLL_PIN through
 * pin_user_pages_fast()).  Returns 0, or -errno (EFAULT: a page could not
 * be had, e.g. a hole of a SIGBUS userfaultfd range; nothing stays pinned).
 */
static int ring_pin(int ring, const struct iovec *iov, unsigned int n)
{
	return syscall(SYS_io_uring_register, ring, IORING_REGISTER_BUFFERS, iov, n) ? -errno : 0;
}

/* Unpin @ring's registered buffers.  Returns 0 or -errno. */
static int ring_unpin(int ring)
{
	return syscall(SYS_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0) ?
		-errno : 0;
}

/* Monotonic time in ms. */
static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* --------------------------------------------------------------- areas */

struct area {
	unsigned char *map;	/* what mmap() returned, alignment slack included */
	size_t maplen;
	unsigned char *a, *b;	/* A, and B right after it: npages each */
	size_t npages;
};

/*
 * Map areas A and B of @npages each into @ar (see the header), write A
 * with pattern @seed, and register both with the userfaultfd.  Failures
 * are fatal problems of @c ("cannot run").
 */
static void area_setup(struct xps_check *c, struct area *ar, size_t npages, uint64_t seed)
{
	size_t len = npages * psz;
	struct uffdio_register reg;
	uintptr_t start;

	ar->npages = npages;
	ar->maplen = 2 * len + PMD_BYTES;
	ar->map = xps_map(c, ar->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	start = ((uintptr_t)ar->map + PMD_BYTES - 1) & ~(PMD_BYTES - 1);
	ar->a = (unsigned char *)start;
	ar->b = ar->a + len;
	/* Fails only without THP, where there are no huge pages anyway. */
	madvise(ar->a, 2 * len, MADV_NOHUGEPAGE);
	/* Populated before registering: a write to a hole would be a SIGBUS. */
	xps_fill(ar->a, len, seed, 0);
	reg.range.start = start;
	reg.range.len = 2 * len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		XPS_DIE(c, "cannot run because UFFDIO_REGISTER(MISSING) failed: %s",
			strerror(errno));
	if (!(reg.ioctls & (1ULL << _UFFDIO_MOVE)))
		XPS_DIE(c,
			"cannot run because the registered range does not offer UFFDIO_MOVE (ioctls %#llx)",
			(unsigned long long)reg.ioctls);
}

/* Unregister and unmap @ar. */
static void area_free(struct area *ar)
{
	struct uffdio_range r = {
		.start = (uintptr_t)ar->a, .len = 2 * ar->npages * psz,
	};

	ioctl(uffd, UFFDIO_UNREGISTER, &r);
	munmap(ar->map, ar->maplen);
}

/* ------------------------------------------------- uffd-move-contents */

/*
 * Move the @n pages at @src to @dst, call k asking for runs[(k + @phase) %
 * @nruns] pages (fewer at the end); a short move (EAGAIN with a count) goes
 * on where it stopped.  Any failure is a problem of @c.  Returns the
 * number of move calls, or -1 after a failure.
 */
static long move_all(struct xps_check *c, unsigned char *dst, unsigned char *src, size_t n,
		     const size_t *runs, size_t nruns, size_t phase)
{
	long calls = 0, again = 0;
	size_t i = 0, k = phase;

	while (i < n) {
		size_t want = runs[k++ % nruns];
		long r;

		if (want > n - i)
			want = n - i;
		r = uffd_move_range(c, dst + i * psz, src + i * psz, want * psz);
		calls++;
		if (r > 0) {
			i += (size_t)r / psz;
		} else if (r == -EAGAIN && ++again < 1000) {
			k--;
		} else {
			if (r != -EPROTO)
				xps_bad(c, "UFFDIO_MOVE of pages %zu..%zu failed: %s", i,
					i + want - 1, strerror((int)-r));
			return -1;
		}
	}
	return calls;
}

/*
 * Check that the @n pages at @p are holes of a registered range: none in
 * pagemap, SIGBUS when 8 of them are read (and still none after), and a
 * move from the first fails ENOENT.  @pm: room for @n entries.  Problems
 * are @c's, prefixed by @what.
 */
static void expect_moved_out(struct xps_check *c, const char *what, unsigned char *p,
			     size_t n, uint64_t *pm)
{
	char msg[160];
	long r;

	for (size_t k = 0; k < 8; k++) {
		size_t i = k * (n - 1) / 7;

		r = probe_page(p + i * psz, 0, 0);
		if (r != -2)
			xps_bad(c, "%s: page %zu reads (%s) instead of raising SIGBUS", what, i,
				xps_is_zero(p + i * psz, psz) ? "zeros" : "data");
	}
	expect_holes(c, what, p, n, pm);
	/* The destination, page 1, is a hole too: only the source is wrong. */
	r = uffd_move_range(c, p + psz, p, psz);
	if (r != -ENOENT && r != -EPROTO) {
		snprintf(msg, sizeof(msg), "%s", r > 0 ? "it moved a page" : strerror((int)-r));
		xps_bad(c, "%s: UFFDIO_MOVE from page 0: %s, expected ENOENT", what, msg);
	}
}

/*
 * uffd-move-contents: move 4096 pages A to B and back (see the header).
 */
static void check_contents(void)
{
	static const size_t runs[] = { 64, 1, 100, 7, 512, 16, 300, 3, 1024, 2 };
	size_t n = MOVE_PAGES, len = n * psz;
	uint64_t *before = calloc(n, sizeof(*before)), *after = calloc(n, sizeof(*after));
	struct xps_check c;
	struct area ar;

	xps_begin(&c, "uffd-move-contents");
	if (!before || !after)
		XPS_DIE(&c, "calloc: out of memory");
	area_setup(&c, &ar, n, SEED_CONTENTS);
	for (int round = 0; round < 2 && !c.bad; round++) {
		unsigned char *from = round ? ar.b : ar.a, *to = round ? ar.a : ar.b;
		size_t kept = 0;
		long calls;

		if (pm_read(from, n, before))
			XPS_DIE(&c, "cannot run because /proc/self/pagemap cannot be read");
		calls = move_all(&c, to, from, n, runs, ARRAY_SIZE(runs), (size_t)round * 3);
		if (calls < 0)
			break;
		xps_expect(&c, round ? "A after moving back" : "B after the move", to, len,
			   SEED_CONTENTS, 0);
		expect_moved_out(&c, round ? "B after moving back" : "A after the move", from, n,
				 after);
		if (frames_visible && !pm_read(to, n, after)) {
			for (size_t i = 0; i < n; i++)
				kept += (before[i] & PM_PFN_MASK) == (after[i] & PM_PFN_MASK);
			printf("# %s: %ld move calls; %zu of %zu pages kept their frame\n",
			       round ? "B to A" : "A to B", calls, kept, n);
		} else {
			printf("# %s: %ld move calls\n", round ? "B to A" : "A to B", calls);
		}
	}
	area_free(&ar);
	free(before);
	free(after);
	xps_end(&c);
}

/* --------------------------------------------- uffd-move-pinned-ebusy */

/* The pinned runs of uffd-move-pinned-ebusy: first page, pages. */
static const struct {
	size_t first, n;
} pinned_runs[] = {
	{ 0, 1 },	/* the first page of a move call */
	{ 2, 2 },
	{ 63, 3 },	/* last of one call, first two of the next */
	{ 200, 1 },	/* in the middle of a call */
	{ 511, 2 },	/* across a PMD */
	{ 777, 1 },
	{ 1000, 8 },
	{ 1023, 1 },	/* the last page */
};

/*
 * Move pages [@i, @end) from @src to @dst in calls of up to 64 pages that
 * end at multiples of 64; a page that fails EBUSY is marked in @busy and
 * skipped, a short move goes on where it stopped.  Other failures are
 * problems of @c.  Returns 0, or -1 after a failure.
 */
static int move_skip_busy(struct xps_check *c, unsigned char *dst, unsigned char *src,
			  size_t i, size_t end, unsigned char *busy)
{
	long again = 0;

	while (i < end) {
		size_t want = 64 - i % 64;
		long r;

		if (want > end - i)
			want = end - i;
		r = uffd_move_range(c, dst + i * psz, src + i * psz, want * psz);
		if (r > 0) {
			i += (size_t)r / psz;
		} else if (r == -EBUSY) {
			busy[i++] = 1;
		} else if (r == -EAGAIN && ++again < 1000) {
			continue;
		} else {
			if (r != -EPROTO)
				xps_bad(c, "UFFDIO_MOVE of pages %zu..%zu failed: %s", i,
					i + want - 1, strerror((int)-r));
			return -1;
		}
	}
	return 0;
}

/*
 * After the move of uffd-move-pinned-ebusy: every page marked in @pinned
 * is still at A (present, the frame in @pm0, its bytes) and its B slot a
 * hole; every other page is at B with its bytes and its A slot a hole.
 * @pm: room for the area's entries.  Problems are @c's.
 */
static void pinned_after_move(struct xps_check *c, struct area *ar, const unsigned char *pinned,
			      const uint64_t *pm0, uint64_t *pm)
{
	size_t n = ar->npages;

	if (pm_read(ar->a, n, pm))
		XPS_DIE(c, "pagemap read failed");
	for (size_t i = 0; i < n; i++) {
		uint64_t f = pm[i] & PM_PFN_MASK, f0 = pm0[i] & PM_PFN_MASK;

		if (!pinned[i] && (pm[i] & PM_PRESENT))
			xps_bad(c, "page %zu was moved but is still present at A", i);
		if (!pinned[i])
			continue;
		if (!(pm[i] & PM_PRESENT))
			xps_bad(c, "pinned page %zu is not present at A after the move", i);
		else if (frames_visible && f != f0)
			xps_bad(c, "pinned page %zu: frame %#llx at A, was %#llx", i,
				(unsigned long long)f, (unsigned long long)f0);
		else if (probe_page(ar->a + i * psz, SEED_PINNED, i) != -1)
			xps_bad(c, "pinned page %zu at A: wrong data", i);
	}
	if (pm_read(ar->b, n, pm))
		XPS_DIE(c, "pagemap read failed");
	for (size_t i = 0; i < n; i++) {
		long w;

		if (pinned[i]) {
			if (pm[i] & (PM_PRESENT | PM_SWAP))
				xps_bad(c, "pinned page %zu: its B slot is no hole (%#llx)", i,
					(unsigned long long)pm[i]);
			continue;
		}
		w = probe_page(ar->b + i * psz, SEED_PINNED, i);
		if (w != -1)
			xps_bad(c, "page %zu at B after the move: %s", i,
				w == -2 ? "SIGBUS (a hole)" : "wrong data");
	}
}

/*
 * After the unpin of uffd-move-pinned-ebusy: move the pages marked in
 * @pinned from A to B (runs of them first, then one at a time), retrying
 * EBUSY for up to 2 s (an unpin need not be done when the unregister
 * returns).  Clears @pinned as pages move; @busy: scratch, a byte a page.
 * Problems are @c's.
 */
static void unpinned_move(struct xps_check *c, struct area *ar, unsigned char *pinned,
			  unsigned char *busy)
{
	size_t n = ar->npages, left = 0;

	for (int tries = 0; tries <= 100 && !c->bad; tries++) {
		size_t i = 0;

		if (tries)
			usleep(20000);
		memset(busy, 0, n);
		left = 0;
		while (i < n) {
			size_t end = i + 1;

			if (!pinned[i]) {
				i++;
				continue;
			}
			while (!tries && end < n && pinned[end])
				end++;
			if (move_skip_busy(c, ar->b, ar->a, i, end, busy))
				return;
			for (; i < end; i++) {
				pinned[i] = busy[i];
				left += busy[i];
			}
		}
		if (!left)
			return;
	}
	if (left)
		xps_bad(c, "%zu pages still fail EBUSY 2 s after the unpin", left);
}

/*
 * uffd-move-pinned-ebusy: pinned pages fail EBUSY and stay (see the
 * header).
 */
static void check_pinned(void)
{
	size_t n = PIN_PAGES, len = n * psz, npinned = 0;
	unsigned char *pinned = calloc(n, 1), *busy = calloc(n, 1);
	uint64_t *pm0 = calloc(n, sizeof(*pm0)), *pm = calloc(n, sizeof(*pm));
	struct iovec iov[ARRAY_SIZE(pinned_runs)];
	struct xps_check c;
	struct area ar;
	int ring, err;

	xps_begin(&c, "uffd-move-pinned-ebusy");
	if (!pinned || !busy || !pm0 || !pm)
		XPS_DIE(&c, "calloc: out of memory");
	area_setup(&c, &ar, n, SEED_PINNED);
	ring = ring_open();
	if (ring < 0)
		XPS_DIE(&c, "cannot run because io_uring_setup failed: %s", strerror(-ring));
	for (size_t r = 0; r < ARRAY_SIZE(pinned_runs); r++) {
		iov[r].iov_base = ar.a + pinned_runs[r].first * psz;
		iov[r].iov_len = pinned_runs[r].n * psz;
		for (size_t i = 0; i < pinned_runs[r].n; i++)
			pinned[pinned_runs[r].first + i] = 1;
		npinned += pinned_runs[r].n;
	}
	err = ring_pin(ring, iov, ARRAY_SIZE(iov));
	if (err)
		XPS_DIE(&c, "cannot run because IORING_REGISTER_BUFFERS failed: %s",
			strerror(-err));
	/* After the pin: a long-term pin may have migrated the pages. */
	if (pm_read(ar.a, n, pm0))
		XPS_DIE(&c, "cannot run because /proc/self/pagemap cannot be read");

	if (!move_skip_busy(&c, ar.b, ar.a, 0, n, busy)) {
		size_t wrong = 0;

		for (size_t i = 0; i < n; i++) {
			if (pinned[i] == busy[i])
				continue;
			if (!wrong)
				xps_bad(&c, "page %zu: %s", i, pinned[i] ?
					"pinned, but it was moved (no EBUSY)" :
					"not pinned, but its move failed EBUSY");
			wrong++;
		}
		if (wrong > 1)
			fprintf(stderr, "  %zu of %zu pages moved or not against their pin\n",
				wrong, n);
		pinned_after_move(&c, &ar, pinned, pm0, pm);
	}
	err = ring_unpin(ring);
	if (err)
		XPS_DIE(&c, "IORING_UNREGISTER_BUFFERS failed: %s", strerror(-err));
	close(ring);
	if (!c.bad) {
		unpinned_move(&c, &ar, pinned, busy);
		xps_expect(&c, "B after the unpinned pages moved", ar.b, len, SEED_PINNED, 0);
		expect_holes(&c, "A at the end", ar.a, n, pm);
	}
	printf("# pinned: %zu of %zu pages pinned in %zu runs\n", npinned, n,
	       ARRAY_SIZE(pinned_runs));
	area_free(&ar);
	free(pinned);
	free(busy);
	free(pm0);
	free(pm);
	xps_end(&c);
}

/* ----------------------------------------------------------- the race */

static struct {
	struct area ar;
	int ring;
	atomic_int stop;
	atomic_int failed;		/* a problem was reported into cp */
	/* odd while A's pages [pin_first, pin_first + pin_n) are pinned */
	atomic_long seq;
	atomic_size_t pin_first, pin_n;
	atomic_long calls;		/* the mover's UFFDIO_MOVE calls */
	long pins, missed;		/* the pinner's: pins taken, EFAULT */
	pthread_mutex_t lock;		/* serializes reports into cp */
	struct xps_check cp;		/* uffd-move-race-pinned */
} race = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Report a problem of uffd-move-race-pinned from either thread. */
__attribute__((format(printf, 1, 2)))
static void race_bad(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&race.lock);
	xps_bad(&race.cp, "%s", msg);
	atomic_store(&race.failed, 1);
	pthread_mutex_unlock(&race.lock);
}

/*
 * The pinner's check of pinned pages [@k, @k + @m) of A: present, same
 * frame as in @pfn if @again (else their frames go into @pfn), reading
 * their own bytes.  Returns the number of problems (reported).
 */
static int pinned_check(size_t k, size_t m, uint64_t *pfn, int again)
{
	const char *when = again ? "before the unpin" : "after the pin";
	uint64_t pm[16];
	int bad = 0;

	if (pm_read(race.ar.a + k * psz, m, pm)) {
		race_bad("pagemap read failed");
		return 1;
	}
	for (size_t i = 0; i < m; i++) {
		uint64_t f = pm[i] & PM_PFN_MASK;
		long w;

		if (!(pm[i] & PM_PRESENT)) {
			race_bad("pinned page %zu of A is not present %s: a pinned page was moved",
				 k + i, when);
			bad++;
			continue;
		}
		if (again && frames_visible && f != pfn[i]) {
			race_bad("pinned page %zu of A: frame %#llx %s, %#llx after the pin",
				 k + i, (unsigned long long)f, when, (unsigned long long)pfn[i]);
			bad++;
		}
		pfn[i] = f;
		w = probe_page(race.ar.a + (k + i) * psz, SEED_RACE, k + i);
		if (w != -1) {
			race_bad("pinned page %zu of A %s: %s", k + i, when,
				 w == -2 ? "SIGBUS (a hole: the pinned page was moved)" :
				 "wrong data");
			bad++;
		}
	}
	return bad;
}

/*
 * The pinner, on CPU 1 (@arg unused): pin 1 to 16 pages of A, check them,
 * wait for two move calls or 20 ms, check again, unpin; until stop.
 * Returns NULL.
 */
static void *pinner_main(void *arg)
{
	uint64_t rnd = 0x9e3779b97f4a7c15ULL, pfn[16];
	size_t n = race.ar.npages;

	(void)arg;
	xps_pin(1);
	printf("# race: pinner is thread %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	while (!atomic_load(&race.stop)) {
		size_t m, k;
		struct iovec iov;
		long calls, t0;
		int err;

		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		m = 1 + rnd % 16;
		k = (size_t)(rnd >> 8) % (n - m + 1);
		iov.iov_base = race.ar.a + k * psz;
		iov.iov_len = m * psz;
		err = ring_pin(race.ring, &iov, 1);
		if (err == -EFAULT) {
			/* A page of the range was at B: GUP met a hole. */
			race.missed++;
			continue;
		}
		if (err) {
			race_bad("IORING_REGISTER_BUFFERS: %s", strerror(-err));
			break;
		}
		atomic_store(&race.pin_first, k);
		atomic_store(&race.pin_n, m);
		atomic_fetch_add(&race.seq, 1);
		race.pins++;
		pinned_check(k, m, pfn, 0);
		calls = atomic_load(&race.calls);
		t0 = now_ms();
		while (atomic_load(&race.calls) < calls + 2 && now_ms() - t0 < 20 &&
		       !atomic_load(&race.stop))
			sched_yield();
		pinned_check(k, m, pfn, 1);
		atomic_fetch_add(&race.seq, 1);
		err = ring_unpin(race.ring);
		if (err) {
			race_bad("IORING_UNREGISTER_BUFFERS: %s", strerror(-err));
			break;
		}
	}
	return NULL;
}

/*
 * One pass of the mover: every page whose @loc is @from (0: A, 1: B) is
 * moved to the other area in calls of up to @run pages (a run of such
 * pages, within the area); a page that fails EBUSY stays.  In the A to B
 * direction a moved page that was pinned from before the call to after it
 * is a problem of uffd-move-race-pinned.  Adds to @moved and @busy.
 * Returns 0, or -1 after a failure (reported into @c).
 */
static int mover_pass(struct xps_check *c, unsigned char *loc, int from, size_t run,
		      long *moved, long *busy)
{
	unsigned char *src = from ? race.ar.b : race.ar.a, *dst = from ? race.ar.a : race.ar.b;
	size_t n = race.ar.npages, i = 0;
	long again = 0;

	while (i < n) {
		size_t j = i, k, m;
		long s1, s2, r;

		if (loc[i] != from) {
			i++;
			continue;
		}
		while (j < n && j - i < run && loc[j] == from)
			j++;
		s1 = atomic_load(&race.seq);
		k = atomic_load(&race.pin_first);
		m = atomic_load(&race.pin_n);
		r = uffd_move_range(c, dst + i * psz, src + i * psz, (j - i) * psz);
		s2 = atomic_load(&race.seq);
		atomic_fetch_add(&race.calls, 1);
		if (r > 0) {
			size_t got = (size_t)r / psz;

			for (size_t p = i; p < i + got; p++) {
				loc[p] = !from;
				if (!from && s1 == s2 && (s1 & 1) && p >= k && p < k + m)
					race_bad("page %zu moved to B, pinned all through the call",
						 p);
			}
			*moved += (long)got;
			i += got;
		} else if (r == -EBUSY) {
			(*busy)++;
			i++;
		} else if (r == -EAGAIN && ++again < 100000) {
			continue;
		} else {
			if (r != -EPROTO)
				xps_bad(c, "UFFDIO_MOVE of pages %zu..%zu %s failed: %s%s", i,
					j - 1, from ? "B to A" : "A to B", strerror((int)-r),
					r == -ENOENT ? " (a page the mover left is gone)" :
					r == -EEXIST ? " (a page where the mover left none)" : "");
			return -1;
		}
	}
	return 0;
}

/*
 * uffd-move-race-pinned and uffd-move-race-contents (see the header),
 * for @secs seconds; @ncpus: CPUs usable (two needed).
 */
static void check_race(int ncpus, long secs)
{
	static const size_t runs[] = { 64, 16, 512 };
	size_t n = RACE_PAGES, len = n * psz;
	unsigned char *loc = calloc(n, 1);
	uint64_t *pm = calloc(n, sizeof(*pm));
	long moved = 0, busy = 0, cycles = 0, t_start, t_end;
	struct xps_check cc;
	pthread_t t;

	xps_begin(&race.cp, "uffd-move-race-pinned");
	xps_begin(&cc, "uffd-move-race-contents");
	xps_need_two_cpus(&race.cp, ncpus);
	if (!loc || !pm)
		XPS_DIE(&race.cp, "calloc: out of memory");
	area_setup(&race.cp, &race.ar, n, SEED_RACE);
	race.ring = ring_open();
	if (race.ring < 0)
		XPS_DIE(&race.cp, "cannot run because io_uring_setup failed: %s",
			strerror(-race.ring));
	xps_pin(0);
	/*
	 * Thread ids first, flushed: a kernel report names a PID, and a
	 * hang that ends in SIGKILL loses what stdout still buffers.
	 */
	printf("# race: mover is thread %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	if (pthread_create(&t, NULL, pinner_main, NULL))
		XPS_DIE(&race.cp, "pthread_create failed");
	t_start = now_ms();
	t_end = t_start + secs * 1000;
	while (now_ms() < t_end && !atomic_load(&race.failed) && !cc.bad) {
		size_t run = runs[cycles % ARRAY_SIZE(runs)];

		if (mover_pass(&cc, loc, 0, run, &moved, &busy) ||
		    mover_pass(&cc, loc, 1, run, &moved, &busy))
			break;
		cycles++;
	}
	atomic_store(&race.stop, 1);
	pthread_join(t, NULL);
	close(race.ring);
	printf("# race: %ld ms, %ld cycles, %ld move calls, %ld pages moved, %ld EBUSY;",
	       now_ms() - t_start, cycles, atomic_load(&race.calls), moved, busy);
	printf(" %ld pins, %ld pin attempts met a page away\n", race.pins, race.missed);
	if (!cc.bad && (!moved || !race.pins))
		xps_bad(&race.cp,
			"cannot run because the race did not happen (%ld pages moved, %ld pins)",
			moved, race.pins);

	/* Everything back to A; nothing is pinned now. */
	for (int tries = 0; !cc.bad; tries++) {
		long left = 0, b = 0;

		if (mover_pass(&cc, loc, 1, 512, &moved, &b))
			break;
		for (size_t i = 0; i < n; i++)
			left += loc[i];
		if (!left)
			break;
		if (tries == 100) {
			xps_bad(&cc, "%ld pages at B still fail EBUSY 2 s after the race",
				left);
			break;
		}
		usleep(20000);
	}
	if (!cc.bad) {
		xps_expect(&cc, "A after the race", race.ar.a, len, SEED_RACE, 0);
		expect_holes(&cc, "B after the race", race.ar.b, n, pm);
	}
	area_free(&race.ar);
	free(loc);
	free(pm);
	xps_end(&race.cp);
	xps_end(&cc);
}

/* ----------------------------------------------------------------- main */

/*
 * Probe UFFDIO_MOVE (exit 77 without it), open the userfaultfd and run the
 * checks.  Returns the exit status (see the header).
 */
int main(int argc, char **argv)
{
	int ncpus = xps_ncpus();
	long secs = argc > 1 ? atol(argv[1]) : 10;
	struct sigaction sa;
	struct xps_check c;
	struct utsname u;
	uint64_t have = 0, pm;
	int fd;

	psz = xps_page_size();
	xps_begin(&c, "uffd-move-contents");
	if (secs <= 0)
		XPS_DIE(&c, "usage: uffd_move [RACE_SECONDS > 0]");
	fd = uffd_open(0, &have);
	if (fd < 0)
		XPS_DIE(&c, "cannot run because userfaultfd()/UFFDIO_API failed: %s",
			strerror(errno));
	close(fd);
	if (!(have & UFFD_FEATURE_MOVE)) {
		uname(&u);
		printf("# not applicable: Linux %s has no UFFDIO_MOVE ", u.release);
		printf("(UFFDIO_API does not offer UFFD_FEATURE_MOVE; it came with Linux 6.8)\n");
		return 77;
	}
	if (!(have & UFFD_FEATURE_SIGBUS))
		XPS_DIE(&c, "cannot run because UFFDIO_API does not offer UFFD_FEATURE_SIGBUS");
	uffd = uffd_open(UFFD_FEATURE_MOVE | UFFD_FEATURE_SIGBUS, NULL);
	if (uffd < 0)
		XPS_DIE(&c, "cannot run because UFFDIO_API(MOVE | SIGBUS) failed: %s",
			strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		XPS_DIE(&c, "sigaction: %s", strerror(errno));
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	frames_visible = pm_read((const unsigned char *)&have, 1, &pm) == 0 &&
			 (pm & PM_PRESENT) && (pm & PM_PFN_MASK);
	printf("# pagemap %s frame numbers\n", frames_visible ? "shows" : "does not show");

	check_contents();
	check_pinned();
	check_race(ncpus, secs);
	close(uffd);
	return xps_exit_status();
}
