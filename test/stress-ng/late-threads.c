// SPDX-License-Identifier: GPL-2.0
/*
 * late-threads.c - an LD_PRELOAD shim that opens, every time, the window
 * in which Debian 12's stress-ng (0.15.06) pthread stressor crashes on a
 * loaded machine.
 *
 * That stressor passes each new thread a pointer to one argument block on
 * its own stack and, when its timeout lands right after a pthread_create(),
 * leaves the creation loop without counting that thread, so it never joins
 * it: the stressor returns, its stack frame is reused, and a thread that
 * starts late reads its arguments from the reused frame (a general
 * protection fault in stress_pthread_func(), "ip:...2f2 ... in
 * stress-ng[2a32f2,...]", run status 2).  stress-ng fixed it upstream in
 * "stress-pthread: bail out of thread creation loop before creating next
 * pthread" (274ddf821, 2026-03-13) and "pthread, membarrier, sem: Fix race
 * in passing arguments to stressors" (b5c04fe4d, 2025-10-01).
 *
 * Under QEMU's software CPU, with the lab's niced background load, threads
 * start late enough for it to happen by chance.  This shim makes it happen
 * on any machine: every thread starts 300 ms late, the creating thread
 * sleeps 20 ms after each pthread_create() (where the timeout then lands),
 * and _exit() waits 600 ms, so that a thread nobody joined still runs.
 * No kernel, Xen or module takes part.  test/lab/selftest's
 * stress_ng_pthread check runs it (test/stress-ng/README).
 *
 * Build: gcc -O2 -Wall -shared -fPIC -o late-threads.so late-threads.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct late_start {
	void *(*fn)(void *arg);
	void *arg;
};

static void *late_start(void *p)
{
	struct late_start s = *(struct late_start *)p;

	free(p);
	usleep(300000);
	return s.fn(s.arg);
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *th, const pthread_attr_t *attr,
			   void *(*start)(void *arg), void *arg);
	struct late_start *s;
	int ret;

	if (!real)
		real = dlsym(RTLD_NEXT, "pthread_create");
	s = malloc(sizeof(*s));
	if (!s)
		return real(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	ret = real(th, attr, late_start, s);
	if (ret)
		free(s);
	usleep(20000);
	return ret;
}

void _exit(int status)
{
	static void (*real)(int status);

	if (!real)
		real = dlsym(RTLD_NEXT, "_exit");
	usleep(600000);
	real(status);
	for (;;)
		;
}
