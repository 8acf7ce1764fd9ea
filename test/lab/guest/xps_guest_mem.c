// SPDX-License-Identifier: MIT
/*
 * xps_guest_mem - the lab's PV DomU workload: fill most of the guest's
 * memory with a known pattern, keep rewriting part of it, and check all of
 * it, forever, saying so on the console.  Built static on the host by
 * test/lab/run and started by the guest's /init (test/lab/guest/init).
 *
 * Memory: MIB MiB (argument 1) in 4 KiB pages, touched once so the guest
 * really owns them.  Page i holds its generation gen[i] in word 0 and
 * word(seed, gen[i], i, j) in word j; the table gen[] lives in memory too.
 * A writer pass bumps the generation of WRITE_PCT % of the pages (a
 * rolling window) between checks, so a live migration always has dirty
 * pages to send again; a check reads every page and compares it with gen[].
 * A page that save/restore or migration lost or mixed up (a stale copy,
 * another page's frame, zeroes) fails the check.
 *
 * Console lines (hvc0), all starting "XPS-GUEST:":
 *   "filled MIB MiB, PAGES pages"                  once, when ready
 *   "check N ok PAGES pages gen G"                 after each good check
 *   "check N BAD page P: word W is X, want Y"      and exits 1
 * Usage: xps_guest_mem MIB [WRITE_PCT (default 5)] [PERIOD_MS (default 1000)]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define WPP (PAGE / sizeof(uint64_t))

static uint64_t word(uint64_t gen, uint64_t page, uint64_t j)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ (gen << 40) ^ (page << 9) ^ j;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static void fill(uint64_t *p, uint64_t gen, uint64_t page)
{
	p[0] = gen;
	for (uint64_t j = 1; j < WPP; j++)
		p[j] = word(gen, page, j);
}

/* Check page @page against generation @g; print and return 1 if wrong. */
static int bad_page(uint64_t round, const uint64_t *p, uint64_t g, uint64_t page)
{
	for (uint64_t j = 0; j < WPP; j++) {
		uint64_t want = j ? word(g, page, j) : g;

		if (p[j] == want)
			continue;
		printf("XPS-GUEST: check %llu BAD page %llu: word %llu is %#llx, want %#llx\n",
		       (unsigned long long)round, (unsigned long long)page,
		       (unsigned long long)j, (unsigned long long)p[j],
		       (unsigned long long)want);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;
	unsigned long pct = argc > 2 ? strtoul(argv[2], NULL, 0) : 5;
	unsigned long period = argc > 3 ? strtoul(argv[3], NULL, 0) : 1000;
	uint64_t pages, *gen, next = 0, round = 0, maxgen = 0;
	unsigned char *mem;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!mib || pct > 100) {
		fprintf(stderr, "usage: %s MIB [WRITE_PCT] [PERIOD_MS]\n", argv[0]);
		return 2;
	}
	pages = mib * (1024 * 1024 / PAGE);
	mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	gen = calloc(pages, sizeof(*gen));
	if (mem == MAP_FAILED || !gen) {
		printf("XPS-GUEST: cannot allocate %lu MiB\n", mib);
		return 1;
	}
	for (uint64_t i = 0; i < pages; i++)
		fill((uint64_t *)(mem + i * PAGE), 0, i);
	printf("XPS-GUEST: filled %lu MiB, %llu pages\n", mib,
	       (unsigned long long)pages);

	for (;;) {
		struct timespec ts = {
			.tv_sec = period / 1000,
			.tv_nsec = (period % 1000) * 1000000L,
		};
		uint64_t n = pages * pct / 100;

		for (uint64_t k = 0; k < n; k++, next = (next + 1) % pages) {
			gen[next]++;
			if (gen[next] > maxgen)
				maxgen = gen[next];
			fill((uint64_t *)(mem + next * PAGE), gen[next], next);
		}
		round++;
		for (uint64_t i = 0; i < pages; i++)
			if (bad_page(round, (const uint64_t *)(mem + i * PAGE), gen[i], i))
				return 1;
		printf("XPS-GUEST: check %llu ok %llu pages gen %llu\n",
		       (unsigned long long)round, (unsigned long long)pages,
		       (unsigned long long)maxgen);
		nanosleep(&ts, NULL);
	}
}
