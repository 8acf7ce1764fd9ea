// SPDX-License-Identifier: MIT
/*
 * shmem_race - the dirty-bit race.  Shmem pages that were only read-faulted
 * have writable, clean PTEs; a thread on one CPU writes them while a thread
 * on the other zaps them with MADV_DONTNEED.  If a clear reads an entry as
 * clean and the CPU sets its dirty bit before the clear lands (a deferred
 * clear of a writable clean entry would allow exactly that), the page ends
 * up holding the new data but clean, and dropping the page cache then
 * discards it: the write is lost.  The module must swap such entries
 * synchronously (MMU_PT_UPDATE_SWAP returns the bit).
 *
 * Method, per round: punch the memfd's pages out, read-fault them all,
 * then the zapper releases CHUNK pages at a time and, in lock step, the
 * writer writes one word into each page of that chunk with random short
 * pauses (about the time the zapper spends per page, measured first), so
 * writes land before, during and after the zap of their page.  Then every
 * mapping is released, the cache dropped (dontneed-memfd-clean-dropped in
 * dontneed.c shows clean shmem pages go) and pread() must return every
 * written word, the rest of each page zero.
 *
 * Check:
 *  shmem-dirty-race   ROUNDS rounds of PAGES pages (default 48 x 512):
 *                     no write lost
 * Usage: shmem_race [ROUNDS]   Exit status 0 if the check passed.
 */
#include "xps_check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define PAGES 512
#define CHUNK 16

static size_t psz, len;
static unsigned char *map;
/* Chunk sequence numbers, running over all rounds; -1 stops the writer. */
static atomic_long published, written;
static long pause_ns;
static uint64_t round_seed;

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void *writer_main(void *arg)
{
	unsigned int rnd = 12345;
	long seq = 0;

	(void)arg;
	xps_pin(0);
	for (;;) {
		long s;

		while ((s = atomic_load(&published)) == seq)
			;
		seq = s;
		if (s < 0)
			return NULL;
		/* Sequence number s is chunk (s - 1) % (PAGES / CHUNK) of its round. */
		size_t first = (size_t)((s - 1) % (PAGES / CHUNK)) * CHUNK;

		for (size_t i = first; i < first + CHUNK; i++) {
			long until;

			rnd = rnd * 1103515245 + 12345;
			until = now_ns() + (long)((rnd >> 8) % (unsigned int)(2 * pause_ns + 1));
			while (now_ns() < until)
				;
			*(volatile uint64_t *)(map + i * psz + (i % 8) * 64) =
				xps_word(round_seed, i);
		}
		atomic_store(&written, s);
	}
}

static void read_fault(void)
{
	volatile unsigned char sink = 0;

	for (size_t off = 0; off < len; off += psz)
		sink += map[off];
	(void)sink;
}

int main(int argc, char **argv)
{
	struct xps_check c;
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 48, lost = 0;
	unsigned char *buf;
	pthread_t t;
	long seq = 0, t0;
	int fd, err;

	xps_begin(&c, "shmem-dirty-race");
	if (rounds < 1) {
		fprintf(stderr, "usage: %s [ROUNDS]\n", argv[0]);
		return 2;
	}
	xps_need_two_cpus(&c, xps_ncpus());
	psz = xps_page_size();
	len = PAGES * psz;
	fd = xps_memfd(&c, "xps-shmem-race", len);
	map = xps_map(&c, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	buf = malloc(len);
	if (!buf)
		XPS_DIE(&c, "malloc: out of memory");
	if (xps_pin(1))
		XPS_DIE(&c, "cannot pin to CPU 1: %s", strerror(errno));

	/* How long the zapper spends per read-faulted page. */
	read_fault();
	t0 = now_ns();
	for (size_t off = 0; off < len; off += CHUNK * psz)
		xps_madvise(&c, map + off, CHUNK * psz, MADV_DONTNEED, "MADV_DONTNEED");
	pause_ns = (now_ns() - t0) / PAGES;
	fprintf(stderr, "shmem_race: %ld ns per zapped page; writer pauses 0..%ld ns\n",
		pause_ns, 2 * pause_ns);

	if (pthread_create(&t, NULL, writer_main, NULL))
		XPS_DIE(&c, "pthread_create failed");
	for (long r = 0; r < rounds; r++) {
		round_seed = 1000 + (uint64_t)r;
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)len))
			XPS_DIE(&c, "fallocate(PUNCH_HOLE): %s", strerror(errno));
		read_fault();
		for (size_t k = 0; k < PAGES / CHUNK; k++) {
			atomic_store(&published, ++seq);
			xps_madvise(&c, map + k * CHUNK * psz, CHUNK * psz, MADV_DONTNEED,
				    "MADV_DONTNEED");
			while (atomic_load(&written) != seq)
				;
		}
		xps_madvise(&c, map, len, MADV_DONTNEED, "MADV_DONTNEED");
		err = xps_drop_caches();
		if (err)
			XPS_DIE(&c, "drop_caches: %s", strerror(-err));
		xps_pread(&c, fd, buf, len, 0);
		for (size_t i = 0; i < PAGES; i++) {
			uint64_t *w = (uint64_t *)(buf + i * psz + (i % 8) * 64);
			uint64_t got = *w, want = xps_word(round_seed, i);

			*w = 0;
			if (got != want) {
				lost++;
				xps_bad(&c,
					"round %ld page %zu: the write of %#llx was lost (the page holds %#llx)",
					r, i, (unsigned long long)want, (unsigned long long)got);
			} else if (!xps_is_zero(buf + i * psz, psz)) {
				xps_bad(&c, "round %ld page %zu: bytes never written are not zero",
					r, i);
			}
			*w = got;
		}
	}
	atomic_store(&published, -1);
	pthread_join(t, NULL);
	if (lost)
		fprintf(stderr, "shmem_race: %ld of %ld writes lost\n", lost, rounds * PAGES);
	free(buf);
	munmap(map, len);
	close(fd);
	xps_end(&c);
	return xps_exit_status();
}
