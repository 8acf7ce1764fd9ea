// SPDX-License-Identifier: MIT
/*
 * madv_free - MADV_FREE (clear then set_pte of a clean, old entry in one
 * lazy MMU section), then reclaim with MADV_PAGEOUT (try_to_unmap():
 * ptep_clear_flush() of lazily freed pages, which are discarded only if
 * still clean).  Pages written after MADV_FREE must keep the new data;
 * pages left alone may read as zero once reclaimed.
 *
 * Checks (8 MiB of private anonymous memory, the process on one CPU):
 *  madv-free-rewrite-before-reclaim  pages rewritten between MADV_FREE and
 *                        reclaim keep the new data
 *  madv-free-untouched   pages not rewritten read as their old data or as
 *                        all zero, and reclaim discarded at least one
 *                        (else the path was not exercised)
 *  madv-free-rewrite-after-reclaim   pages rewritten after reclaim keep
 *                        the new data; the others do not change
 *  madv-free-race        a thread on the other CPU writes one word of each
 *                        freed page while this one reclaims the range in
 *                        chunks: every written word survives, the rest of
 *                        each page is its old data or all zero (4 rounds)
 * Usage: madv_free (no arguments).  Exit status 0 if every check passed.
 */
#include "xps_check.h"

#include <pthread.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define MIB (1024 * 1024UL)
#define LEN (8 * MIB)

static size_t psz, npages;
static int ncpu;	/* usable CPUs, counted before pinning */

/* State of an untouched page: 1 old data, 0 all zero, -1 anything else. */
static int page_state(const unsigned char *pg, uint64_t seed, size_t index)
{
	if (xps_cmp(pg, psz, seed, index * xps_wpp()) < 0)
		return 1;
	return xps_is_zero(pg, psz) ? 0 : -1;
}

static void sequential(void)
{
	struct xps_check before, untouched, after;
	unsigned char *p;
	signed char *state;
	size_t discarded = 0;

	xps_begin(&before, "madv-free-rewrite-before-reclaim");
	xps_begin(&untouched, "madv-free-untouched");
	xps_begin(&after, "madv-free-rewrite-after-reclaim");
	state = malloc(npages);
	if (!state)
		XPS_DIE(&before, "malloc: out of memory");
	p = xps_map(&before, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	xps_fill(p, LEN, 300, 0);
	xps_madvise(&before, p, LEN, MADV_FREE, "MADV_FREE");
	for (size_t i = 0; i < npages; i += 4)
		xps_fill(p + i * psz, psz, 301, i * xps_wpp());
	xps_madvise(&before, p, LEN, MADV_PAGEOUT, "MADV_PAGEOUT");

	for (size_t i = 0; i < npages; i++) {
		const unsigned char *pg = p + i * psz;

		if (i % 4 == 0) {
			if (xps_cmp(pg, psz, 301, i * xps_wpp()) >= 0)
				xps_bad(&before, "page %zu lost its new data%s", i,
					xps_is_zero(pg, psz) ? " (reads as zero)" : "");
			continue;
		}
		state[i] = (signed char)page_state(pg, 300, i);
		if (state[i] < 0)
			xps_bad(&untouched, "page %zu holds neither its old data nor zeros", i);
		discarded += state[i] == 0;
	}
	if (!discarded && !untouched.bad)
		xps_bad(&untouched,
			"MADV_PAGEOUT discarded none of %zu clean freed pages: the reclaim path was not exercised",
			npages - npages / 4);
	fprintf(stderr, "madv_free: reclaim discarded %zu of %zu untouched pages\n",
		discarded, npages - npages / 4);

	for (size_t i = 1; i < npages; i += 4)
		xps_fill(p + i * psz, psz, 302, i * xps_wpp());
	for (size_t i = 0; i < npages; i++) {
		const unsigned char *pg = p + i * psz;

		if (i % 4 == 0)
			continue;
		if (i % 4 == 1) {
			if (xps_cmp(pg, psz, 302, i * xps_wpp()) >= 0)
				xps_bad(&after, "page %zu lost its new data%s", i,
					xps_is_zero(pg, psz) ? " (reads as zero)" : "");
		} else if (state[i] >= 0 && page_state(pg, 300, i) != state[i]) {
			xps_bad(&after, "untouched page %zu changed after the rewrite", i);
		}
	}
	munmap(p, LEN);
	free(state);
	xps_end(&before);
	xps_end(&untouched);
	xps_end(&after);
}

struct writer {
	unsigned char *p;
	uint64_t seed;
	int cpu;
	volatile int done;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	xps_pin(w->cpu);
	for (size_t i = 0; i < npages; i++)
		*(volatile uint64_t *)(w->p + i * psz) = xps_word(w->seed, i);
	w->done = 1;
	return NULL;
}

static void reclaim_race(void)
{
	struct xps_check c;
	unsigned char *p;
	size_t chunk = 64 * psz, discarded = 0;

	xps_begin(&c, "madv-free-race");
	xps_need_two_cpus(&c, ncpu);
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	for (uint64_t r = 0; r < 4; r++) {
		struct writer w = { .p = p, .seed = 410 + r, .cpu = 1 };
		pthread_t t;

		xps_fill(p, LEN, 400 + r, 0);
		xps_madvise(&c, p, LEN, MADV_FREE, "MADV_FREE");
		if (pthread_create(&t, NULL, writer_main, &w))
			XPS_DIE(&c, "pthread_create failed");
		while (!w.done) {
			for (size_t off = 0; off < LEN && !w.done; off += chunk)
				xps_madvise(&c, p + off, chunk, MADV_PAGEOUT, "MADV_PAGEOUT");
		}
		pthread_join(t, NULL);
		for (size_t i = 0; i < npages; i++) {
			const unsigned char *pg = p + i * psz;
			uint64_t w0 = *(const volatile uint64_t *)pg;

			if (w0 != xps_word(410 + r, i)) {
				xps_bad(&c,
					"round %llu: page %zu: written word holds %#llx, expected %#llx",
					(unsigned long long)r, i, (unsigned long long)w0,
					(unsigned long long)xps_word(410 + r, i));
				continue;
			}
			if (xps_cmp(pg + 8, psz - 8, 400 + r, i * xps_wpp() + 1) < 0)
				continue;
			if (xps_is_zero(pg + 8, psz - 8))
				discarded++;
			else
				xps_bad(&c,
					"round %llu: page %zu: rest is neither old data nor zeros",
					(unsigned long long)r, i);
		}
	}
	fprintf(stderr, "madv_free: race: %zu pages were discarded before their write\n",
		discarded);
	munmap(p, LEN);
	xps_end(&c);
}

int main(void)
{
	struct xps_check c;

	psz = xps_page_size();
	npages = LEN / psz;
	ncpu = xps_ncpus();
	xps_begin(&c, "madv-free-setup");
	if (xps_pin(0))
		XPS_DIE(&c, "cannot pin to CPU 0: %s", strerror(errno));
	sequential();
	reclaim_race();
	return xps_exit_status();
}
