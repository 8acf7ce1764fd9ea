// SPDX-License-Identifier: MIT
/*
 * munmap - munmap() of written memory: zap_pte_range() clears every PTE.
 *
 * Checks:
 *  munmap-anon-partial   8 MiB of private anonymous memory written with a
 *                        pattern; the middle 4 MiB unmapped: the two ends
 *                        keep their data, the hole is unmapped (mincore()
 *                        fails with ENOMEM) and a new mapping there is zero
 *  munmap-anon-vmas      256 one-page mappings written and unmapped one by
 *                        one, every other first: survivors keep their data
 *  munmap-shmem          a memfd mapped shared, half its pages read-faulted
 *                        (writable clean PTEs), all then written, unmapped,
 *                        mapped again: the data is there and pread() agrees,
 *                        also after the page cache was dropped
 * Usage: munmap (no arguments).  Exit status 0 if every check passed.
 */
#include "xps_check.h"

#define MIB (1024 * 1024UL)

static void anon_partial(void)
{
	struct xps_check c;
	size_t len = 8 * MIB, q = len / 4;
	unsigned char *p, *n;

	xps_begin(&c, "munmap-anon-partial");
	p = xps_map(&c, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	xps_fill(p, len, 1, 0);
	if (munmap(p + q, 2 * q))
		XPS_DIE(&c, "munmap of the middle: %s", strerror(errno));
	xps_expect(&c, "first quarter", p, q, 1, 0);
	xps_expect(&c, "last quarter", p + 3 * q, q, 1, 3 * q / xps_page_size());
	if (xps_mapped(p + q, 2 * q))
		xps_bad(&c, "the unmapped middle is still mapped (mincore succeeds)");
	n = mmap(p + q, 2 * q, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (n == MAP_FAILED)
		xps_bad(&c, "new mapping in the hole: %s", strerror(errno));
	else if (!xps_is_zero(n, 2 * q))
		xps_bad(&c, "a new mapping in the hole is not all zero");
	munmap(p, len);
	xps_end(&c);
}

static void anon_vmas(void)
{
	struct xps_check c;
	size_t psz = xps_page_size();
	enum { N = 256 };
	unsigned char *v[N];

	xps_begin(&c, "munmap-anon-vmas");
	for (int i = 0; i < N; i++) {
		v[i] = xps_map(&c, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
		xps_fill(v[i], psz, 2, (uint64_t)i * xps_wpp());
	}
	for (int i = 0; i < N; i += 2)
		if (munmap(v[i], psz))
			XPS_DIE(&c, "munmap: %s", strerror(errno));
	for (int i = 1; i < N; i += 2) {
		char what[32];

		snprintf(what, sizeof(what), "mapping %d", i);
		xps_expect(&c, what, v[i], psz, 2, (size_t)i);
		if (munmap(v[i], psz))
			XPS_DIE(&c, "munmap: %s", strerror(errno));
	}
	for (int i = 0; i < N; i++)
		if (xps_mapped(v[i], psz)) {
			xps_bad(&c, "mapping %d still mapped after munmap", i);
			break;
		}
	xps_end(&c);
}

static void shmem_remap(void)
{
	struct xps_check c;
	size_t len = 8 * MIB, psz = xps_page_size();
	volatile unsigned char sink = 0;
	unsigned char *p, *buf;
	int fd, err;

	xps_begin(&c, "munmap-shmem");
	fd = xps_memfd(&c, "xps-munmap", len);
	p = xps_map(&c, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	for (size_t off = 0; off < len; off += 2 * psz)
		sink += p[off];		/* read fault: writable, clean PTE */
	(void)sink;
	xps_fill(p, len, 3, 0);
	if (munmap(p, len))
		XPS_DIE(&c, "munmap: %s", strerror(errno));
	p = xps_map(&c, len, PROT_READ, MAP_SHARED, fd);
	xps_expect(&c, "mapped again", p, len, 3, 0);
	munmap(p, len);
	err = xps_drop_caches();
	if (err)
		XPS_DIE(&c, "drop_caches: %s", strerror(-err));
	buf = malloc(len);
	if (!buf)
		XPS_DIE(&c, "malloc: out of memory");
	xps_pread(&c, fd, buf, len, 0);
	xps_expect(&c, "pread after drop_caches", buf, len, 3, 0);
	free(buf);
	close(fd);
	xps_end(&c);
}

int main(void)
{
	anon_partial();
	anon_vmas();
	shmem_remap();
	return xps_exit_status();
}
