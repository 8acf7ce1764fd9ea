// SPDX-License-Identifier: MIT
/*
 * xfs_pageout_race - madvise(MADV_COLD or MADV_PAGEOUT) splitting a large
 * page-cache folio of an XFS file while the other CPU punches a hole in,
 * zaps or truncates the pages it has just aged.
 *
 * Linux 6.1's madvise_cold_or_pageout_pte_range() walks a PTE table in
 * lazy MMU mode: a young entry is cleared and set again, old.  On Xen PV
 * both writes are queued in the lazy MMU multicall (the clear too when
 * xen_ptswap is loaded in batched mode and the entry is read-only).  At a
 * PTE-mapped large folio the loop drops the PTE lock and splits the
 * folio; without test/linux-patch/6.1/0004 it does so in lazy MMU mode, so the
 * queued writes are still pending while the lock is free.  A zap on the
 * other CPU then finds those entries still present (or already none),
 * zaps them and frees the pages, and when the queue lands the old entry
 * is back: a mapping of a freed page, or of one no longer in the file.
 *
 * Method, per round: write the file (MIB MiB of this round's pattern),
 * fsync(), drop its page cache; read the even 2 MiB chunks through a
 * POSIX_FADV_RANDOM descriptor (order-0 folios) and then the odd ones,
 * last first, each through a new descriptor (readahead gives large
 * folios, the first one at the chunk's start); map the file MAP_SHARED, PROT_READ,
 * MADV_HUGEPAGE, 1 MiB into a PMD (so no PMD maps a folio either) and
 * touch every page (every PTE young).  Window i's PTE table then maps the
 * last MiB of chunk 2i (order-0 pages) and the first MiB of chunk 2i+1,
 * which starts with a large folio.  For each window thread A (CPU 0)
 * calls MADV_COLD or MADV_PAGEOUT from the table's start to the first
 * page of that folio: it ages the small pages, queuing their updates, and
 * splits the folio, with -d MS making the split busy-wait MS first (the
 * debug kernel's test-only split_delay_ms; 0 again for everything else).
 * Thread B (CPU 1) polls /proc/kpageflags until the folio is locked (A is
 * in the split; without root or a delay it waits -w MS instead) and then
 * punches a hole in, zaps (MADV_DONTNEED), or both, the last TAIL bytes of
 * chunk 2i, the entries whose updates would still be queued; the last
 * window of every other round truncates the file there instead.  Then A
 * ages the whole mapping once more.
 *
 * Checks:
 *  xfs-pageout-race-pending  (with -d, as root) while A splits, B reads
 *                            /proc/self/pagemap: every entry A has just
 *                            aged is present (none = its clear issued, its
 *                            set still queued with the PTE lock free)
 *  xfs-pageout-race-mapping  every page of the mapping within the file's
 *                            size reads what pread() reads at that offset
 *                            (no SIGBUS either), and past a truncation the
 *                            first TAIL bytes raise SIGBUS: no stale or
 *                            freed page stayed mapped
 *  xfs-pageout-race-file     pread() reads the round's pattern, zeros in
 *                            the holes punched
 *  xfs-pageout-race-run      every system call the method needs worked
 * Notes ("# ..." lines): the folios of round 0 and how many windows had a
 * large folio after order-0 pages (/proc/self/pagemap and
 * /proc/kpageflags, as root; on Xen PV pagemap gives PFNs, which
 * kpageflags is indexed by), and in how many B saw A in the split.
 * The kernel log (Bad page map, page_table_check, Bad rss-counter) and
 * xen_ptswap's counters are test/suites/madv-race.sh's to check.
 *
 * Usage: xfs_pageout_race [-r ROUNDS] [-s MIB] [-d MS] [-w MS] [-k] FILE
 *   FILE on XFS (created, rewritten each round, left behind); ROUNDS
 *   default 20; MIB a multiple of 4, default 8 (MIB / 4 windows a round).
 *   When the pending check finds a none entry, B leaves that window
 *   alone, so that the run ends with a FAIL rather than a kernel BUG
 *   (DEBUG_VM: "VM_BUG_ON_FOLIO(folio_mapped(folio))" in the hole punch,
 *   then a hang); -k zaps anyway, to show what the bug does.
 *   Needs two CPUs.  Exit status 0 if every check passed.
 */
#include "xps_check.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>

#define MIB (1024 * 1024UL)
#define CHUNK (2 * MIB)
#define TAIL (256 * 1024UL)
#define SPLIT_DELAY "/sys/kernel/debug/xps_test/split_delay_ms"

#define KPF_LOCKED 0
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define PM_PRESENT 0x8000000000000000ULL
#define PM_PFN_MASK ((1ULL << 55) - 1)

enum action { ACT_PUNCH, ACT_DONTNEED, ACT_BOTH, ACT_TRUNCATE, ACT_STOP, ACT_KINDS };

static size_t psz, len, npages;
static unsigned char *map;	/* the file's mapping, 1 MiB into a PMD */
static const char *path;
static int fd, pagemap = -1, kflags = -1;
static unsigned char *hole;	/* per page: punched this round */
static long delay_ms = -1;	/* -d: split_delay_ms for the windows */
static long delay_saved = -1;	/* its value before, put back at exit */

/* The mailbox between A (main thread, CPU 0) and B (CPU 1). */
static pthread_mutex_t mb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mb_cond = PTHREAD_COND_INITIALIZER;
static long mb_posted, mb_done;
static enum action mb_act;
static off_t mb_off;
static long long mb_pfn;		/* the folio's head, -1 if unknown */
static long mb_round;
static size_t mb_win;
static atomic_int a_returned;		/* A's madvise of this window returned */
static long wait_ns;
static char b_error[256];
static long actions[ACT_KINDS], b_saw_split, b_polled, b_skipped;
static int zap_anyway;			/* -k */
static struct xps_check cp;		/* B's: xfs-pageout-race-pending */

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* ----------------------------------------------------- page flags */

/* PFN of the page mapped at @p, or -1 (not mapped, not root). */
static long long pfn_of(const unsigned char *p)
{
	uint64_t pm;

	if (pagemap < 0 ||
	    pread(pagemap, &pm, sizeof(pm), (off_t)((uintptr_t)p / psz * sizeof(pm))) !=
	    sizeof(pm) || !(pm & PM_PRESENT) || !(pm & PM_PFN_MASK))
		return -1;
	return (long long)(pm & PM_PFN_MASK);
}

/* kpageflags of PFN @pfn, or -1. */
static long long flags_of_pfn(long long pfn)
{
	uint64_t fl;

	if (pfn < 0 || kflags < 0 ||
	    pread(kflags, &fl, sizeof(fl), (off_t)pfn * (off_t)sizeof(fl)) != sizeof(fl))
		return -1;
	return (long long)fl;
}

static long long flags_of(const unsigned char *p)
{
	return flags_of_pfn(pfn_of(p));
}

static int is_compound(long long fl)
{
	return fl >= 0 && (fl & (1LL << KPF_COMPOUND_HEAD | 1LL << KPF_COMPOUND_TAIL));
}

/* ------------------------------------------------------ split delay */

/* Set split_delay_ms to @ms; -1 if that failed. */
static int set_delay(long ms)
{
	FILE *f = fopen(SPLIT_DELAY, "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%ld\n", ms) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static long get_delay(void)
{
	FILE *f = fopen(SPLIT_DELAY, "r");
	long ms = -1;

	if (f) {
		if (fscanf(f, "%ld", &ms) != 1)
			ms = -1;
		fclose(f);
	}
	return ms;
}

static void restore_delay(void)
{
	if (delay_saved >= 0)
		set_delay(delay_saved);
}

/* --------------------------------------------------------- thread B */

/**
 * b_act() - B's zap of [@off, @off + TAIL) of the file and the mapping
 * @act: what to do
 * @off: file offset (= offset in the mapping), page aligned
 *
 * Return: 0, or -1 with b_error set.
 */
static int b_act(enum action act, off_t off)
{
	if (act == ACT_TRUNCATE) {
		if (ftruncate(fd, off)) {
			snprintf(b_error, sizeof(b_error), "ftruncate to %lld: %s",
				 (long long)off, strerror(errno));
			return -1;
		}
		return 0;
	}
	if (act == ACT_DONTNEED || act == ACT_BOTH) {
		if (madvise(map + off, TAIL, MADV_DONTNEED)) {
			snprintf(b_error, sizeof(b_error), "madvise(MADV_DONTNEED) at %lld: %s",
				 (long long)off, strerror(errno));
			return -1;
		}
	}
	if (act == ACT_PUNCH || act == ACT_BOTH) {
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, TAIL)) {
			snprintf(b_error, sizeof(b_error), "fallocate(PUNCH_HOLE) at %lld: %s",
				 (long long)off, strerror(errno));
			return -1;
		}
		memset(hole + off / psz, 1, TAIL / psz);
	}
	return 0;
}

/*
 * Wait for A to be in the split: poll the folio's head (PFN @pfn) until
 * it is locked (madvise locks it before it splits), or until A's madvise
 * returned.  Without the PFN, or without a delay, just sleep WAIT.
 * Returns 1 if B saw the folio locked.
 */
static int b_wait_for_split(long long pfn)
{
	if (pfn < 0 || delay_ms <= 0) {
		if (wait_ns)
			sleep_ns(wait_ns);
		return 0;
	}
	b_polled++;
	while (!atomic_load(&a_returned)) {
		long long fl = flags_of_pfn(pfn);

		if (fl >= 0 && (fl & (1LL << KPF_LOCKED))) {
			b_saw_split++;
			return 1;
		}
		sleep_ns(200000);
	}
	return 0;
}

/*
 * While A splits, every page A has just aged, [@off, @off + TAIL), must
 * be mapped: madvise clears and sets each entry again under the PTE
 * lock, which it has dropped now.  A none entry is a clear issued with
 * its set still queued (in lazy MMU mode with the lock free): FAIL now,
 * before the zap that follows may take the kernel down.  Returns the
 * number of none entries.
 */
static size_t b_check_mapped(off_t off, long round, size_t win)
{
	uint64_t pm[TAIL / 4096];
	size_t n = TAIL / psz, none = 0, first = 0;

	if (n > ARRAY_SIZE(pm) ||
	    pread(pagemap, pm, n * sizeof(pm[0]),
		  (off_t)((uintptr_t)(map + off) / psz * sizeof(pm[0]))) !=
	    (ssize_t)(n * sizeof(pm[0])))
		return 0;
	for (size_t k = n; k-- > 0;) {
		if (pm[k] & PM_PRESENT)
			continue;
		none++;
		first = k;
	}
	if (none)
		xps_bad(&cp,
			"round %ld window %zu: %zu PTEs none during the split, first at %#zx%s",
			round, win, none, (size_t)off + first * psz,
			" (an update queued with the PTE lock free)");
	return none;
}

/* Thread B: on CPU 1, one action per window A posts. */
static void *b_main(void *arg)
{
	long seen = 0;

	(void)arg;
	if (xps_pin(1))
		snprintf(b_error, sizeof(b_error), "cannot pin B to CPU 1: %s", strerror(errno));
	for (;;) {
		enum action act;
		long long pfn;
		long round;
		size_t win;
		off_t off;
		int err = 0;

		pthread_mutex_lock(&mb_lock);
		while (mb_posted == seen)
			pthread_cond_wait(&mb_cond, &mb_lock);
		seen = mb_posted;
		act = mb_act;
		off = mb_off;
		pfn = mb_pfn;
		round = mb_round;
		win = mb_win;
		pthread_mutex_unlock(&mb_lock);
		if (act == ACT_STOP)
			return NULL;
		if (b_wait_for_split(pfn) && b_check_mapped(off, round, win) && !zap_anyway) {
			/* The zap would hit the queued update: a kernel BUG or worse. */
			b_skipped++;
		} else if (!b_error[0]) {
			err = b_act(act, off);
		}
		pthread_mutex_lock(&mb_lock);
		if (!err)
			actions[act]++;
		mb_done = seen;
		pthread_cond_broadcast(&mb_cond);
		pthread_mutex_unlock(&mb_lock);
	}
}

/* Hand B an action; returns at once (A then races it). */
static void b_post(enum action act, off_t off, long long pfn, long round, size_t win)
{
	pthread_mutex_lock(&mb_lock);
	mb_act = act;
	mb_off = off;
	mb_pfn = pfn;
	mb_round = round;
	mb_win = win;
	atomic_store(&a_returned, 0);
	mb_posted++;
	pthread_cond_broadcast(&mb_cond);
	pthread_mutex_unlock(&mb_lock);
}

/* Wait until B has done what was posted last; XPS_DIE if it failed. */
static void b_wait(struct xps_check *c)
{
	atomic_store(&a_returned, 1);
	pthread_mutex_lock(&mb_lock);
	while (mb_done != mb_posted)
		pthread_cond_wait(&mb_cond, &mb_lock);
	pthread_mutex_unlock(&mb_lock);
	if (b_error[0])
		XPS_DIE(c, "thread B: %s", b_error);
}

/* ------------------------------------------------ large folio census */

static int unarmed_told;

/* Per 2 MiB chunk: "large folios/pages in them", for the notes. */
static char layout[2048];

/*
 * Windows armed: window i has a large folio's head at the start of chunk
 * 2i+1 and an order-0 page before it.  With @all, also count the large
 * folios of the whole mapping into @heads and their pages into @in_large
 * (and per chunk into layout).  Returns the windows armed, or -1 if page
 * flags are unknown.
 */
static long census(size_t windows, int all, long *heads, long *in_large)
{
	size_t at = 0, ppc = CHUNK / psz;
	long armed = 0, h0 = 0, l0 = 0;

	for (size_t i = 0; i < windows; i++) {
		long long head = flags_of(map + (2 * i + 1) * CHUNK);
		long long small = flags_of(map + (2 * i + 1) * CHUNK - psz);

		if (head < 0 || small < 0)
			return -1;
		if ((head & (1LL << KPF_COMPOUND_HEAD)) && !is_compound(small))
			armed++;
		else if (!unarmed_told++)
			printf("# first unarmed window %zu: kpageflags %#llx, then %#llx\n",
			       i, small, head);
	}
	if (!all)
		return armed;
	*heads = 0;
	*in_large = 0;
	for (size_t pg = 0; pg < npages; pg++) {
		long long fl = flags_of(map + pg * psz);

		if (fl >= 0 && (fl & (1LL << KPF_COMPOUND_HEAD)))
			++*heads;
		if (is_compound(fl))
			++*in_large;
		if (pg % ppc != ppc - 1)
			continue;
		if (at < sizeof(layout))
			at += (size_t)snprintf(layout + at, sizeof(layout) - at, " %ld/%ld",
					       *heads - h0, *in_large - l0);
		h0 = *heads;
		l0 = *in_large;
	}
	return armed;
}

/* The "# ..." notes of round 0's census. */
static void report_census(long armed, long heads, long in_large, size_t windows)
{
	if (armed < 0) {
		printf("# large folios: unknown (pagemap PFNs and kpageflags need root)\n");
	} else {
		printf("# round 0: %ld large folios holding %ld of %zu pages\n",
		       heads, in_large, npages);
		printf("# round 0: per 2 MiB chunk, large folios/pages in them:%s\n", layout);
		printf("# round 0: %ld of %zu windows armed (a large folio after order-0 pages)\n",
		       armed, windows);
	}
	fflush(stdout);
}

/* ----------------------------------------------------- verification */

static sigjmp_buf bus_env;
static volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig)
{
	if (!bus_armed) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	bus_armed = 0;
	siglongjmp(bus_env, 1);
}

/* Copy @n bytes of the mapping at @src; -1 if that raised SIGBUS. */
static int copy_mapped(void *dst, const unsigned char *src, size_t n)
{
	if (sigsetjmp(bus_env, 1))
		return -1;
	bus_armed = 1;
	memcpy(dst, src, n);
	bus_armed = 0;
	return 0;
}

static const char *what_it_holds(const unsigned char *pg, uint64_t seed, size_t page)
{
	if (xps_is_zero(pg, psz))
		return "zeros";
	if (xps_cmp(pg, psz, seed, page * xps_wpp()) < 0)
		return "this round's data";
	return "something else";
}

/*
 * Check page @page of round @round: pread() read @f, which must be the
 * round's data (@seed) or zeros in a hole, and the mapping must read the
 * same (into @mbuf).  Returns 1 if the mapping was wrong, else 0.
 */
static int check_page(struct xps_check *cm, struct xps_check *cf, long round,
		      uint64_t seed, size_t page, const unsigned char *f,
		      unsigned char *mbuf)
{
	size_t off = page * psz;

	if (hole[page] ? !xps_is_zero(f, psz) : xps_cmp(f, psz, seed, page * xps_wpp()) >= 0)
		xps_bad(cf, "round %ld offset %#zx: pread() reads %s, expected %s",
			round, off, what_it_holds(f, seed, page),
			hole[page] ? "zeros (a hole)" : "this round's data");
	if (copy_mapped(mbuf, map + off, psz)) {
		xps_bad(cm, "round %ld offset %#zx: SIGBUS within the file's size",
			round, off);
		return 1;
	}
	if (!memcmp(mbuf, f, psz))
		return 0;
	xps_bad(cm, "round %ld offset %#zx: page content wrong: mapping %s, pread() %s%s",
		round, off, what_it_holds(mbuf, seed, page), what_it_holds(f, seed, page),
		" (a stale or freed page mapped)");
	return 1;
}

/*
 * Compare the mapping with pread() and pread() with what the file should
 * hold, over the file's current size @size.  Returns the pages wrong.
 */
static long verify(struct xps_check *cm, struct xps_check *cf, long round, uint64_t seed,
		   off_t size, unsigned char *fbuf, unsigned char *mbuf)
{
	long wrong = 0;

	for (off_t blk = 0; blk < size; blk += (off_t)MIB) {
		size_t n = (size_t)(size - blk) < MIB ? (size_t)(size - blk) : MIB;

		xps_pread(cf, fd, fbuf, n, blk);
		for (size_t o = 0; o < n; o += psz)
			wrong += check_page(cm, cf, round, seed, ((size_t)blk + o) / psz,
					    fbuf + o, mbuf);
	}
	/* Past a truncation the pages A aged last must be gone: SIGBUS. */
	for (size_t off = (size_t)size; off < len && off < (size_t)size + TAIL; off += psz) {
		if (copy_mapped(mbuf, map + off, psz))
			continue;
		xps_bad(cm, "round %ld offset %#zx: past EOF (%#llx) the mapping reads %s%s",
			round, off, (unsigned long long)size,
			what_it_holds(mbuf, seed, off / psz), ", not SIGBUS (a stale page mapped)");
		wrong++;
	}
	return wrong;
}

/* --------------------------------------------------------- one round */

/* Write @seed's pattern over the whole file, fsync() it, drop its cache. */
static void write_file(struct xps_check *c, uint64_t seed, unsigned char *buf)
{
	if (ftruncate(fd, 0))
		XPS_DIE(c, "ftruncate to 0: %s", strerror(errno));
	for (size_t off = 0; off < len; off += MIB) {
		xps_fill(buf, MIB, seed, off / sizeof(uint64_t));
		if (pwrite(fd, buf, MIB, (off_t)off) != (ssize_t)MIB)
			XPS_DIE(c, "pwrite at %zu: %s", off, strerror(errno));
	}
	if (fsync(fd))
		XPS_DIE(c, "fsync: %s", strerror(errno));
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		XPS_DIE(c, "posix_fadvise(DONTNEED) failed");
}

/* Pages of the mapping in the page cache (mincore()). */
static size_t cached_pages(unsigned char *vec)
{
	size_t n = 0;

	if (mincore(map, len, vec))
		return 0;
	for (size_t pg = 0; pg < npages; pg++)
		n += vec[pg] & 1;
	return n;
}

/* The per-CPU LRU batches drained, so that every page is PageLRU. */
static void drain_lru(void)
{
	static char page[1 << 16] __attribute__((aligned(1 << 16)));

	page[0] = 1;
	if (mlock(page, sizeof(page)) == 0)
		munlock(page, sizeof(page));
}

/*
 * Order-0 folios for the even chunks (read through @rfd, which is
 * POSIX_FADV_RANDOM), large ones for the odd chunks (readahead), every
 * page mapped and young.
 */
static void populate(struct xps_check *c, int rfd, unsigned char *buf, size_t windows)
{
	volatile unsigned char sink = 0;

	for (size_t i = 0; i < windows; i++)
		xps_pread(c, rfd, buf, CHUNK, (off_t)(2 * i * CHUNK));
	/*
	 * Last first: readahead of chunk 2i+1 then stops at chunk 2i+2.  Each
	 * through a new descriptor: readahead state carried over from an
	 * earlier read could start the window off a folio boundary.
	 */
	for (size_t i = windows; i-- > 0;) {
		int ofd = open(path, O_RDONLY);

		if (ofd < 0)
			XPS_DIE(c, "open %s: %s", path, strerror(errno));
		xps_pread(c, ofd, buf, CHUNK, (off_t)((2 * i + 1) * CHUNK));
		close(ofd);
	}
	xps_madvise(c, map, len, MADV_HUGEPAGE, "MADV_HUGEPAGE");
	for (size_t off = 0; off < len; off += psz)
		sink += map[off];
	(void)sink;
	drain_lru();
}

/* munmap() the file, then put the reservation back in its place. */
static void unmap(struct xps_check *c)
{
	if (munmap(map, len))
		XPS_DIE(c, "munmap: %s", strerror(errno));
	if (mmap(map, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
	    MAP_FAILED)
		XPS_DIE(c, "mmap of the reservation again: %s", strerror(errno));
}

/* Window @i of round @r: A ages and splits while B zaps. */
static void race_window(struct xps_check *c, long r, size_t i, size_t windows)
{
	unsigned char *pmd = map + (4 * i + 1) * MIB;
	off_t tail = (off_t)((2 * i + 1) * CHUNK - TAIL);
	enum action act = (enum action)((r * (long)windows + (long)i) % 3);
	int pageout = (r + (long)i) % 2;

	if (i == windows - 1 && r % 2)
		act = ACT_TRUNCATE;
	if (delay_ms >= 0 && set_delay(delay_ms))
		XPS_DIE(c, "cannot write %s: %s", SPLIT_DELAY, strerror(errno));
	b_post(act, tail, pfn_of(map + (2 * i + 1) * CHUNK), r, i);
	/* From the PTE table's start to the large folio's first page. */
	if (madvise(pmd, MIB + psz, pageout ? MADV_PAGEOUT : MADV_COLD))
		XPS_DIE(c, "madvise(%s) of window %zu: %s",
			pageout ? "MADV_PAGEOUT" : "MADV_COLD", i, strerror(errno));
	b_wait(c);
	if (delay_ms >= 0 && set_delay(0))
		XPS_DIE(c, "cannot write %s: %s", SPLIT_DELAY, strerror(errno));
}

int main(int argc, char **argv)
{
	struct xps_check c, cm, cf;
	long rounds = 20, mib = 8, wait_ms = -1, armed_total = 0, wrong = 0, t0;
	long heads = 0, in_large = 0, cached0 = 0;
	size_t windows;
	unsigned char *buf, *mbuf, *vec, *res;
	int opt, rfd;
	struct sigaction sa;
	pthread_t b;

	while ((opt = getopt(argc, argv, "r:s:d:w:k")) != -1) {
		switch (opt) {
		case 'k':
			zap_anyway = 1;
			break;
		case 'r':
			rounds = strtol(optarg, NULL, 10);
			break;
		case 's':
			mib = strtol(optarg, NULL, 10);
			break;
		case 'd':
			delay_ms = strtol(optarg, NULL, 10);
			break;
		case 'w':
			wait_ms = strtol(optarg, NULL, 10);
			break;
		default:
			rounds = 0;
		}
	}
	if (optind != argc - 1 || rounds < 1 || mib < 4 || mib % 4 || mib > 1024) {
		fprintf(stderr, "usage: %s [-r ROUNDS] [-s MIB] [-d MS] [-w MS] [-k] FILE\n",
			argv[0]);
		return 2;
	}
	xps_begin(&c, "xfs-pageout-race-run");
	xps_need_two_cpus(&c, xps_ncpus());
	psz = xps_page_size();
	len = (size_t)mib * MIB;
	npages = len / psz;
	windows = len / (2 * CHUNK);

	if (delay_ms >= 0) {
		delay_saved = get_delay();
		if (delay_saved < 0)
			XPS_DIE(&c, "-d needs %s (the lab's debug kernel, as root)", SPLIT_DELAY);
		atexit(restore_delay);
		if (set_delay(0))
			XPS_DIE(&c, "cannot write %s: %s", SPLIT_DELAY, strerror(errno));
	}
	if (wait_ms < 0)
		wait_ms = delay_ms > 0 ? delay_ms / 2 : 0;
	wait_ns = wait_ms * 1000000L;

	path = argv[optind];
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		XPS_DIE(&c, "open %s: %s", path, strerror(errno));
	rfd = open(path, O_RDONLY);
	if (rfd < 0)
		XPS_DIE(&c, "open %s: %s", path, strerror(errno));
	if (posix_fadvise(rfd, 0, 0, POSIX_FADV_RANDOM))
		XPS_DIE(&c, "posix_fadvise(RANDOM) failed");
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	kflags = open("/proc/kpageflags", O_RDONLY);

	buf = malloc(CHUNK);
	mbuf = malloc(psz);
	vec = malloc(npages);
	hole = malloc(npages);
	if (!buf || !mbuf || !vec || !hole)
		XPS_DIE(&c, "malloc: out of memory");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		XPS_DIE(&c, "sigaction(SIGBUS): %s", strerror(errno));

	/*
	 * A PROT_NONE reservation, kept all along (between rounds too, see
	 * unmap()), so that the mapping can start 1 MiB into a PMD and
	 * nothing else lands there.
	 */
	res = xps_map(&c, len + 2 * CHUNK, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	map = (unsigned char *)(((uintptr_t)res + CHUNK - 1) / CHUNK * CHUNK + MIB);

	if (pthread_create(&b, NULL, b_main, NULL))
		XPS_DIE(&c, "pthread_create failed");
	if (xps_pin(0))
		XPS_DIE(&c, "cannot pin A to CPU 0: %s", strerror(errno));
	printf("# %ld rounds of %ld MiB, %zu windows each; split delay %ld ms%s, B %s\n",
	       rounds, mib, windows, delay_ms > 0 ? delay_ms : 0,
	       delay_ms < 0 ? " (no -d)" : "",
	       delay_ms > 0 && kflags >= 0 ? "polls the folio lock" : "sleeps -w");
	fflush(stdout);

	xps_begin(&cm, "xfs-pageout-race-mapping");
	xps_begin(&cf, "xfs-pageout-race-file");
	xps_begin(&cp, "xfs-pageout-race-pending");
	t0 = now_ms();
	for (long r = 0; r < rounds; r++) {
		uint64_t seed = 7000 + (uint64_t)r;
		long armed, ph[5];
		struct stat st;
		void *p;

		ph[0] = now_ms();
		write_file(&c, seed, buf);
		memset(hole, 0, npages);
		p = mmap(map, len, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
		if (p == MAP_FAILED)
			XPS_DIE(&c, "mmap of %zu bytes at %p: %s", len, (void *)map,
				strerror(errno));
		if (cached_pages(vec)) {
			int err = xps_drop_caches();

			cached0 += !r;
			if (err)
				XPS_DIE(&c, "drop_caches: %s", strerror(-err));
		}
		ph[1] = now_ms();
		populate(&c, rfd, buf, windows);
		ph[2] = now_ms();
		armed = census(windows, r == 0, &heads, &in_large);
		if (r == 0)
			report_census(armed, heads, in_large, windows);
		armed_total = armed < 0 || armed_total < 0 ? -1 : armed_total + armed;

		for (size_t i = 0; i < windows; i++) {
			race_window(&c, r, i, windows);
			if (i == windows - 1 && r % 2)
				break;
		}
		/* And the whole mapping once more, the other way. */
		xps_madvise(&c, map, len, r % 2 ? MADV_COLD : MADV_PAGEOUT,
			    r % 2 ? "MADV_COLD" : "MADV_PAGEOUT");

		if (fstat(fd, &st))
			XPS_DIE(&c, "fstat: %s", strerror(errno));
		ph[3] = now_ms();
		wrong += verify(&cm, &cf, r, seed, st.st_size, buf, mbuf);
		ph[4] = now_ms();
		if (r == 0)
			printf("# round 0: write %ld, populate %ld, race %ld, verify %ld ms%s\n",
			       ph[1] - ph[0], ph[2] - ph[1], ph[3] - ph[2], ph[4] - ph[3],
			       cached0 ? " (cache dropped with drop_caches)" : "");
		fflush(stdout);
		unmap(&c);
	}
	b_post(ACT_STOP, 0, -1, 0, 0);
	pthread_join(b, NULL);

	printf("# %ld rounds in %ld ms; B: %ld punch, %ld dontneed, %ld both, %ld truncate\n",
	       rounds, now_ms() - t0, actions[ACT_PUNCH], actions[ACT_DONTNEED],
	       actions[ACT_BOTH], actions[ACT_TRUNCATE]);
	if (armed_total >= 0)
		printf("# windows armed in all: %ld of %ld\n", armed_total, rounds * (long)windows);
	if (b_polled)
		printf("# B saw A in the split (folio locked) in %ld of %ld windows\n",
		       b_saw_split, b_polled);
	if (b_skipped)
		printf("# B did not zap in %ld windows with a PTE none (-k zaps anyway)\n",
		       b_skipped);
	if (wrong)
		printf("# %ld pages of the mapping wrong in all\n", wrong);
	fflush(stdout);
	if (b_saw_split)
		xps_end(&cp);
	else if (b_polled)
		xps_bad(&cp, "B never saw a split (no large folio after order-0 pages?)");
	else
		printf("# xfs-pageout-race-pending not checked: it needs -d and root\n");
	xps_end(&cm);
	xps_end(&cf);
	xps_end(&c);
	close(rfd);
	close(fd);
	free(buf);
	free(mbuf);
	free(vec);
	free(hole);
	return xps_exit_status();
}
