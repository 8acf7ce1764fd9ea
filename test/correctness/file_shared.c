// SPDX-License-Identifier: MIT
/*
 * file_shared - MAP_SHARED writes to a file on a disk filesystem, the
 * mapping released by MADV_DONTNEED or munmap(), the page cache dropped,
 * the data read back with read(): the file-backed zap_pte_range() path.
 *
 * Usage: file_shared DIR          write and check (DIR on ext4 or the like)
 *        file_shared DIR verify   check the files again, e.g. after the
 *                                 filesystem was unmounted and mounted
 * Checks:
 *  file-shared-dontneed  8 MiB file, half its pages read-faulted first,
 *                        all written through a shared mapping, released
 *                        with MADV_DONTNEED (4 rounds, new data each),
 *                        fsync(), cache dropped: read() returns the data
 *  file-shared-munmap    the same, released by munmap()
 *  file-shared-verify    (verify) both files hold their last data
 * Exit status 0 if every check passed.
 */
#include "xps_check.h"

#include <limits.h>

#define MIB (1024 * 1024UL)
#define LEN (8 * MIB)
#define ROUNDS 4

static char path_dontneed[PATH_MAX], path_munmap[PATH_MAX];

/* Last seeds written, so that verify knows them. */
#define SEED_DONTNEED (100 + ROUNDS - 1)
#define SEED_MUNMAP (200 + ROUNDS - 1)

static void read_back(struct xps_check *c, const char *path, uint64_t seed)
{
	unsigned char *buf = malloc(LEN);
	size_t done = 0;
	int fd;

	if (!buf)
		XPS_DIE(c, "malloc: out of memory");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		XPS_DIE(c, "open %s: %s", path, strerror(errno));
	while (done < LEN) {
		ssize_t n = read(fd, buf + done, LEN - done);

		if (n <= 0)
			XPS_DIE(c, "read %s: %s", path, n < 0 ? strerror(errno) : "short file");
		done += (size_t)n;
	}
	close(fd);
	xps_expect(c, "read() after the cache was dropped", buf, LEN, seed, 0);
	free(buf);
}

static void drop(struct xps_check *c, int fd)
{
	int err;

	if (fsync(fd))
		XPS_DIE(c, "fsync: %s", strerror(errno));
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		XPS_DIE(c, "posix_fadvise(DONTNEED) failed");
	err = xps_drop_caches();
	if (err)
		XPS_DIE(c, "drop_caches: %s", strerror(-err));
}

static void run(const char *name, const char *path, int use_munmap, uint64_t seed0)
{
	struct xps_check c;
	volatile unsigned char sink = 0;
	unsigned char *p;
	int fd;

	xps_begin(&c, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		XPS_DIE(&c, "create %s: %s", path, strerror(errno));
	if (ftruncate(fd, LEN))
		XPS_DIE(&c, "ftruncate: %s", strerror(errno));
	for (uint64_t r = 0; r < ROUNDS; r++) {
		p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
		for (size_t off = 0; off < LEN; off += 2 * xps_page_size())
			sink += p[off];
		xps_fill(p, LEN, seed0 + r, 0);
		if (use_munmap) {
			if (munmap(p, LEN))
				XPS_DIE(&c, "munmap: %s", strerror(errno));
		} else {
			xps_madvise(&c, p, LEN, MADV_DONTNEED, "MADV_DONTNEED");
			if (!c.bad)
				xps_expect(&c, "mapping after MADV_DONTNEED", p, LEN, seed0 + r, 0);
			if (munmap(p, LEN))
				XPS_DIE(&c, "munmap: %s", strerror(errno));
		}
		drop(&c, fd);
		read_back(&c, path, seed0 + r);
	}
	(void)sink;
	close(fd);
	xps_end(&c);
}

int main(int argc, char **argv)
{
	struct xps_check c;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "verify"))) {
		fprintf(stderr, "usage: %s DIR [verify]\n", argv[0]);
		return 2;
	}
	snprintf(path_dontneed, sizeof(path_dontneed), "%s/xps-file-dontneed", argv[1]);
	snprintf(path_munmap, sizeof(path_munmap), "%s/xps-file-munmap", argv[1]);
	if (argc == 3) {
		xps_begin(&c, "file-shared-verify");
		read_back(&c, path_dontneed, SEED_DONTNEED);
		read_back(&c, path_munmap, SEED_MUNMAP);
		xps_end(&c);
		return xps_exit_status();
	}
	run("file-shared-dontneed", path_dontneed, 0, 100);
	run("file-shared-munmap", path_munmap, 1, 200);
	return xps_exit_status();
}
