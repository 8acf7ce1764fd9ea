// SPDX-License-Identifier: MIT
/*
 * smp_race - writers on one CPU while the other CPU zaps the same range
 * with MADV_DONTNEED in a loop (pinned with sched_setaffinity(); the two
 * swap CPUs every round), checked with checksums.
 *
 * Checks (2 MiB, 4 rounds each):
 *  smp-race-shared    memfd pages punched out, then PASSES passes over
 *                     them, each reading a page (a read fault after a zap
 *                     gives a writable, clean PTE) and then writing all of
 *                     it with that pass's data, while being zapped: the
 *                     checksum of pread() equals that of the last pass's
 *                     data, and again after the mapping was released and
 *                     the page cache dropped
 *  smp-race-private   private anonymous pages, the same passes: when the
 *                     dust settles each page is zeros up to some word (the
 *                     part a zap discarded) and exactly the last pass's
 *                     data from there on; nothing else, nothing stale
 * Usage: smp_race (no arguments).  Exit status 0 if every check passed.
 */
#include "xps_check.h"

#include <pthread.h>
#include <stdatomic.h>

#define MIB (1024 * 1024UL)
#define LEN (2 * MIB)
#define ROUNDS 4
#define CHUNK_PAGES 32
#define PASSES 3

static size_t psz, npages;
static long zaps_total;	/* chunks zapped while writers wrote */

struct zapper {
	unsigned char *p;
	int cpu;
	atomic_int stop;
	atomic_long zaps;
};

static void *zapper_main(void *arg)
{
	struct zapper *z = arg;
	size_t chunk = CHUNK_PAGES * psz;

	xps_pin(z->cpu);
	while (!atomic_load(&z->stop)) {
		for (size_t off = 0; off < LEN && !atomic_load(&z->stop); off += chunk) {
			if (madvise(z->p + off, chunk, MADV_DONTNEED))
				return (void *)1;
			atomic_fetch_add(&z->zaps, 1);
		}
	}
	return NULL;
}

/*
 * Start a zapper of @p on @cpu and wait until it has zapped once, so that
 * it is running when the caller writes; then the caller calls zap_stop().
 */
static void zap_start(struct xps_check *c, struct zapper *z, pthread_t *t,
		      unsigned char *p, int cpu)
{
	z->p = p;
	z->cpu = cpu;
	atomic_store(&z->zaps, 0);
	atomic_store(&z->stop, 0);
	if (pthread_create(t, NULL, zapper_main, z))
		XPS_DIE(c, "pthread_create failed");
	while (!atomic_load(&z->zaps))
		;
}

static void zap_stop(struct xps_check *c, struct zapper *z, pthread_t t)
{
	void *ret;

	atomic_store(&z->stop, 1);
	pthread_join(t, &ret);
	if (ret)
		XPS_DIE(c, "madvise(MADV_DONTNEED) failed in the zapper");
	zaps_total += atomic_load(&z->zaps);
}

/* The writer's passes: read each page, then write all of it. */
static void write_passes(unsigned char *p, uint64_t seed)
{
	volatile unsigned char sink = 0;

	for (uint64_t pass = 0; pass < PASSES; pass++)
		for (size_t i = 0; i < npages; i++) {
			sink += p[i * psz];
			xps_fill(p + i * psz, psz, seed + 1000 * (PASSES - 1 - pass),
				 i * xps_wpp());
		}
	(void)sink;
}

static void shared_memfd(void)
{
	struct xps_check c;
	unsigned char *p, *buf, *want;
	struct zapper z;
	pthread_t t;
	int fd, err;

	xps_begin(&c, "smp-race-shared");
	fd = xps_memfd(&c, "xps-smp-race", LEN);
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	buf = malloc(LEN);
	want = malloc(LEN);
	if (!buf || !want)
		XPS_DIE(&c, "malloc: out of memory");
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t seed = 1100 + (uint64_t)r, sum;
		volatile unsigned char sink = 0;

		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)LEN))
			XPS_DIE(&c, "fallocate(PUNCH_HOLE): %s", strerror(errno));
		xps_pin(r % 2);
		for (size_t off = 0; off < LEN; off += psz)
			sink += p[off];
		(void)sink;
		zap_start(&c, &z, &t, p, 1 - r % 2);
		write_passes(p, seed);
		zap_stop(&c, &z, t);
		xps_fill(want, LEN, seed, 0);
		sum = xps_sum(want, LEN);
		xps_pread(&c, fd, buf, LEN, 0);
		if (xps_sum(buf, LEN) != sum)
			xps_expect(&c, "pread checksum differs", buf, LEN, seed, 0);
		xps_madvise(&c, p, LEN, MADV_DONTNEED, "MADV_DONTNEED");
		err = xps_drop_caches();
		if (err)
			XPS_DIE(&c, "drop_caches: %s", strerror(-err));
		xps_pread(&c, fd, buf, LEN, 0);
		if (xps_sum(buf, LEN) != sum)
			xps_expect(&c, "checksum after drop_caches differs", buf, LEN, seed, 0);
		if (c.bad)
			break;
	}
	munmap(p, LEN);
	free(buf);
	free(want);
	close(fd);
	xps_end(&c);
}

static void private_anon(void)
{
	struct xps_check c;
	size_t wpp = xps_wpp(), partial = 0, zeroed = 0;
	unsigned char *p;
	struct zapper z;
	pthread_t t;

	xps_begin(&c, "smp-race-private");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	for (int r = 0; r < ROUNDS && !c.bad; r++) {
		uint64_t seed = 1200 + (uint64_t)r;

		xps_pin(r % 2);
		xps_fill(p, LEN, seed + 100, 0);	/* stale data a bug could expose */
		zap_start(&c, &z, &t, p, 1 - r % 2);
		write_passes(p, seed);
		zap_stop(&c, &z, t);
		for (size_t i = 0; i < npages; i++) {
			const volatile uint64_t *w = (const uint64_t *)(p + i * psz);
			size_t k = 0;

			while (k < wpp && w[k] == 0)
				k++;
			partial += k > 0 && k < wpp;
			zeroed += k == wpp;
			if (xps_cmp(p + i * psz + k * 8, (wpp - k) * 8, seed, i * wpp + k) >= 0) {
				xps_bad(&c,
					"round %d page %zu: after %zu zero words the data is not what was written",
					r, i, k);
				break;
			}
		}
	}
	fprintf(stderr,
		"smp_race: private: %zu pages zapped while their last pass wrote them, %zu after it, of %d; %ld chunks of %d pages zapped in all\n",
		partial, zeroed, ROUNDS * (int)npages, zaps_total, CHUNK_PAGES);
	munmap(p, LEN);
	xps_end(&c);
}

int main(void)
{
	struct xps_check c;

	xps_begin(&c, "smp-race-setup");
	xps_need_two_cpus(&c, xps_ncpus());
	psz = xps_page_size();
	npages = LEN / psz;
	shared_memfd();
	private_anon();
	return xps_exit_status();
}
