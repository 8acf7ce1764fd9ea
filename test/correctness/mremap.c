// SPDX-License-Identifier: MIT
/*
 * mremap - mremap() that moves pages: move_ptes() clears each old entry
 * with ptep_get_and_clear() and sets it at the new address in the same
 * lazy MMU section.  The contents must follow the move.
 *
 * Checks:
 *  mremap-move-anon      4 MiB private anonymous moved to a fixed new place:
 *                        the data is there, the old range is unmapped
 *  mremap-grow           grown in place blocked by a neighbour, so moved:
 *                        old data first, zeros after
 *  mremap-pingpong       4 MiB moved back and forth 40 times, written
 *                        anew every 8 moves: always the latest data
 *  mremap-shmem-clean    memfd pages only read-faulted (writable, clean
 *                        PTEs) moved, then written at the new place, the
 *                        mapping dropped and the cache dropped: pread()
 *                        returns the data (the dirty bit set after the
 *                        move counts)
 *  mremap-shmem-dirty    memfd pages written, moved, unmapped, cache
 *                        dropped: pread() returns the data
 * Usage: mremap (no arguments).  Exit status 0 if every check passed.
 */
#include "xps_check.h"

#define MIB (1024 * 1024UL)
#define LEN (4 * MIB)

/* A free, reserved range of @len bytes to move into. */
static unsigned char *reserve(struct xps_check *c, size_t len)
{
	return xps_map(c, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
}

static unsigned char *move(struct xps_check *c, void *from, size_t old_len, size_t new_len,
			   void *to)
{
	void *q = mremap(from, old_len, new_len, MREMAP_MAYMOVE | MREMAP_FIXED, to);

	if (q == MAP_FAILED)
		XPS_DIE(c, "mremap: %s", strerror(errno));
	if (q != to)
		XPS_DIE(c, "mremap returned %p, asked for %p", q, to);
	return q;
}

static void move_anon(void)
{
	struct xps_check c;
	unsigned char *p, *dst;

	xps_begin(&c, "mremap-move-anon");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	xps_fill(p, LEN, 500, 0);
	dst = reserve(&c, LEN);
	move(&c, p, LEN, LEN, dst);
	xps_expect(&c, "moved data", dst, LEN, 500, 0);
	if (xps_mapped(p, LEN))
		xps_bad(&c, "the old range is still mapped");
	munmap(dst, LEN);
	xps_end(&c);
}

static void move_grow(void)
{
	struct xps_check c;
	unsigned char *p, *q;
	size_t psz = xps_page_size();

	xps_begin(&c, "mremap-grow");
	/* [p, p+LEN) data, then one guard page that blocks growth in place. */
	p = reserve(&c, LEN + psz);
	if (mprotect(p, LEN, PROT_READ | PROT_WRITE))
		XPS_DIE(&c, "mprotect: %s", strerror(errno));
	xps_fill(p, LEN, 501, 0);
	q = mremap(p, LEN, 2 * LEN, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		XPS_DIE(&c, "mremap: %s", strerror(errno));
	if (q == p)
		xps_bad(&c, "grew in place over the guard page");
	xps_expect(&c, "moved data", q, LEN, 501, 0);
	if (!xps_is_zero(q + LEN, LEN))
		xps_bad(&c, "the grown part is not zero");
	munmap(q, 2 * LEN);
	munmap(p + LEN, psz);
	xps_end(&c);
}

static void move_pingpong(void)
{
	struct xps_check c;
	unsigned char *a, *b, *cur;
	uint64_t seed = 510;

	xps_begin(&c, "mremap-pingpong");
	a = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	b = reserve(&c, LEN);
	xps_fill(a, LEN, seed, 0);
	cur = a;
	for (int i = 0; i < 40 && !c.bad; i++) {
		unsigned char *to = cur == a ? b : a;

		cur = move(&c, cur, LEN, LEN, to);
		xps_expect(&c, "after a move", cur, LEN, seed, 0);
		if (i % 8 == 7)
			xps_fill(cur, LEN, ++seed, 0);
	}
	munmap(a, LEN);
	munmap(b, LEN);
	xps_end(&c);
}

static void shmem(const char *name, int clean, uint64_t seed)
{
	struct xps_check c;
	unsigned char *p, *dst, *buf;
	int fd, err;

	xps_begin(&c, name);
	fd = xps_memfd(&c, name, LEN);
	buf = malloc(LEN);
	if (!buf)
		XPS_DIE(&c, "malloc: out of memory");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	if (clean) {
		volatile unsigned char sink = 0;

		for (size_t off = 0; off < LEN; off += xps_page_size())
			sink += p[off];
		(void)sink;
	} else {
		xps_fill(p, LEN, seed, 0);
	}
	dst = reserve(&c, LEN);
	move(&c, p, LEN, LEN, dst);
	if (clean)
		xps_fill(dst, LEN, seed, 0);
	xps_expect(&c, "moved mapping", dst, LEN, seed, 0);
	if (munmap(dst, LEN))
		XPS_DIE(&c, "munmap: %s", strerror(errno));
	err = xps_drop_caches();
	if (err)
		XPS_DIE(&c, "drop_caches: %s", strerror(-err));
	xps_pread(&c, fd, buf, LEN, 0);
	xps_expect(&c, "pread after drop_caches", buf, LEN, seed, 0);
	free(buf);
	close(fd);
	xps_end(&c);
}

int main(void)
{
	move_anon();
	move_grow();
	move_pingpong();
	shmem("mremap-shmem-clean", 1, 520);
	shmem("mremap-shmem-dirty", 0, 521);
	return xps_exit_status();
}
