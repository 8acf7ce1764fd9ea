// SPDX-License-Identifier: MIT
/*
 * dontneed - madvise(MADV_DONTNEED) on anonymous and shmem memory: the
 * zap_pte_range() path, whose clears the module defers or swaps.
 *
 * Checks (8 MiB each, the middle half released, 4 rounds):
 *  dontneed-private      private anonymous: released pages read as zero,
 *                        the others keep their data
 *  dontneed-shared-anon  MAP_SHARED|MAP_ANONYMOUS: every page keeps its data
 *  dontneed-memfd        memfd: every page keeps its data, pread() agrees
 *  dontneed-memfd-pte-dirty
 *                        memfd pages read-faulted first (writable, clean
 *                        PTEs), then written through the mapping (the CPU
 *                        sets the dirty bit, no fault), released, unmapped,
 *                        page cache dropped: pread() still returns the data,
 *                        so the dirty bit reached the page
 *  dontneed-memfd-clean-dropped
 *                        the detector behind the check above and shmem_race:
 *                        memfd pages only read-faulted, released and the
 *                        cache dropped are gone (mincore() says not
 *                        resident): a page whose dirty bit is lost is
 *                        dropped the same way and reads back as zero
 * Usage: dontneed (no arguments).  Exit status 0 if every check passed.
 */
#include "xps_check.h"

#define MIB (1024 * 1024UL)
#define LEN (8 * MIB)
#define ROUNDS 4

static void private_anon(void)
{
	struct xps_check c;
	size_t q = LEN / 4, qp = q / xps_page_size();
	unsigned char *p;

	xps_begin(&c, "dontneed-private");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	for (uint64_t r = 0; r < ROUNDS; r++) {
		xps_fill(p, LEN, 10 + r, 0);
		xps_madvise(&c, p + q, 2 * q, MADV_DONTNEED, "MADV_DONTNEED");
		xps_expect(&c, "kept first quarter", p, q, 10 + r, 0);
		xps_expect(&c, "kept last quarter", p + 3 * q, q, 10 + r, 3 * qp);
		if (!xps_is_zero(p + q, 2 * q))
			xps_bad(&c, "round %llu: released pages do not read as zero",
				(unsigned long long)r);
	}
	munmap(p, LEN);
	xps_end(&c);
}

/* Shared memory at @p (and the memfd @fd if >= 0) keeps its data. */
static void shared_rounds(struct xps_check *c, unsigned char *p, int fd, uint64_t seed0)
{
	size_t q = LEN / 4;
	unsigned char *buf = NULL;

	if (fd >= 0) {
		buf = malloc(LEN);
		if (!buf)
			XPS_DIE(c, "malloc: out of memory");
	}
	for (uint64_t r = 0; r < ROUNDS; r++) {
		xps_fill(p, LEN, seed0 + r, 0);
		xps_madvise(c, p + q, 2 * q, MADV_DONTNEED, "MADV_DONTNEED");
		xps_expect(c, "after MADV_DONTNEED", p, LEN, seed0 + r, 0);
		if (fd >= 0) {
			xps_madvise(c, p, LEN, MADV_DONTNEED, "MADV_DONTNEED");
			xps_pread(c, fd, buf, LEN, 0);
			xps_expect(c, "pread", buf, LEN, seed0 + r, 0);
		}
	}
	free(buf);
}

static void shared_anon(void)
{
	struct xps_check c;
	unsigned char *p;

	xps_begin(&c, "dontneed-shared-anon");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1);
	shared_rounds(&c, p, -1, 20);
	munmap(p, LEN);
	xps_end(&c);
}

static void memfd_keeps_data(void)
{
	struct xps_check c;
	unsigned char *p;
	int fd;

	xps_begin(&c, "dontneed-memfd");
	fd = xps_memfd(&c, "xps-dontneed", LEN);
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	shared_rounds(&c, p, fd, 30);
	munmap(p, LEN);
	close(fd);
	xps_end(&c);
}

static void read_fault(const unsigned char *p, size_t len)
{
	volatile unsigned char sink = 0;

	for (size_t off = 0; off < len; off += xps_page_size())
		sink += p[off];
	(void)sink;
}

static void memfd_pte_dirty(void)
{
	struct xps_check c;
	unsigned char *p, *buf;
	int fd, err;

	xps_begin(&c, "dontneed-memfd-pte-dirty");
	fd = xps_memfd(&c, "xps-dontneed-dirty", LEN);
	buf = malloc(LEN);
	if (!buf)
		XPS_DIE(&c, "malloc: out of memory");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	for (uint64_t r = 0; r < ROUNDS; r++) {
		/* Fresh pages each round: a punched hole, read-faulted. */
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)LEN))
			XPS_DIE(&c, "fallocate(PUNCH_HOLE): %s", strerror(errno));
		read_fault(p, LEN);
		xps_fill(p, LEN, 40 + r, 0);
		xps_madvise(&c, p, LEN, MADV_DONTNEED, "MADV_DONTNEED");
		err = xps_drop_caches();
		if (err)
			XPS_DIE(&c, "drop_caches: %s", strerror(-err));
		xps_pread(&c, fd, buf, LEN, 0);
		xps_expect(&c, "pread after drop_caches", buf, LEN, 40 + r, 0);
	}
	munmap(p, LEN);
	free(buf);
	close(fd);
	xps_end(&c);
}

static void memfd_clean_dropped(void)
{
	struct xps_check c;
	size_t psz = xps_page_size(), n = LEN / psz, resident = 0;
	unsigned char *p, *vec;
	int fd, err;

	xps_begin(&c, "dontneed-memfd-clean-dropped");
	fd = xps_memfd(&c, "xps-dontneed-clean", LEN);
	vec = malloc(n);
	if (!vec)
		XPS_DIE(&c, "malloc: out of memory");
	p = xps_map(&c, LEN, PROT_READ, MAP_SHARED, fd);
	read_fault(p, LEN);
	if (mincore(p, LEN, vec))
		XPS_DIE(&c, "mincore: %s", strerror(errno));
	for (size_t i = 0; i < n; i++)
		resident += vec[i] & 1;
	if (resident != n)
		xps_bad(&c, "only %zu of %zu read-faulted pages resident", resident, n);
	xps_madvise(&c, p, LEN, MADV_DONTNEED, "MADV_DONTNEED");
	err = xps_drop_caches();
	if (err)
		XPS_DIE(&c, "drop_caches: %s", strerror(-err));
	if (mincore(p, LEN, vec))
		XPS_DIE(&c, "mincore: %s", strerror(errno));
	resident = 0;
	for (size_t i = 0; i < n; i++)
		resident += vec[i] & 1;
	/*
	 * Pages still in a per-CPU LRU batch of another CPU, or the odd page
	 * reclaim holds, may stay; most must go or the detector is blind.
	 */
	if (resident > n / 8)
		xps_bad(&c,
			"%zu of %zu clean shmem pages still resident after drop_caches: lost dirty bits would not show as lost data",
			resident, n);
	munmap(p, LEN);
	free(vec);
	close(fd);
	xps_end(&c);
}

int main(void)
{
	private_anon();
	shared_anon();
	memfd_keeps_data();
	memfd_pte_dirty();
	memfd_clean_dropped();
	return xps_exit_status();
}
