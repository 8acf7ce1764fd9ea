// SPDX-License-Identifier: MIT
/*
 * exec_args - execve() with large argument and environment pages: the
 * kernel copies them into the new stack, then setup_arg_pages() moves
 * that stack with shift_arg_pages() (move_page_tables(): a clear and a set
 * per PTE, on the new mm's pinned page tables).  The child regenerates
 * every string and compares it byte for byte.
 *
 * Check:
 *  exec-args   3 rounds, each 40 arguments and 16 environment strings of
 *              24 KiB (about 1.3 MiB of argument pages): the child exits 0
 *              only if every string is exactly what the parent passed
 * Usage: exec_args                       (the parent)
 *        exec_args child SEED NARGS NENV (run by the parent)
 * Exit status 0 if the check passed.
 */
#include "xps_check.h"

#include <sys/wait.h>

#define NARGS 40
#define NENV 16
#define STRLEN (24 * 1024)
#define ENV_PREFIX "XPS_EXEC_"

/* String @k of round @seed: printable bytes derived from the pattern. */
static void make_string(char *s, uint64_t seed, size_t k)
{
	for (size_t i = 0; i < STRLEN; i++)
		s[i] = (char)('!' + xps_word(seed, k * STRLEN + i) % 90);
	s[STRLEN] = '\0';
}

static int child_main(int argc, char **argv)
{
	uint64_t seed = strtoull(argv[2], NULL, 10);
	long nargs = strtol(argv[3], NULL, 10), nenv = strtol(argv[4], NULL, 10);
	char *want = malloc(STRLEN + sizeof(ENV_PREFIX) + 16);
	char name[64];

	if (!want)
		return 3;
	if (argc != 5 + nargs) {
		fprintf(stderr, "exec_args child: %d arguments, expected %ld\n", argc, 5 + nargs);
		return 1;
	}
	for (long k = 0; k < nargs; k++) {
		make_string(want, seed, (size_t)k);
		if (strcmp(argv[5 + k], want)) {
			fprintf(stderr, "exec_args child: argument %ld differs\n", k);
			return 1;
		}
	}
	for (long k = 0; k < nenv; k++) {
		const char *v;

		snprintf(name, sizeof(name), ENV_PREFIX "%ld", k);
		v = getenv(name);
		make_string(want, seed, (size_t)(nargs + k));
		if (!v || strcmp(v, want)) {
			fprintf(stderr, "exec_args child: environment %s %s\n", name,
				v ? "differs" : "missing");
			return 1;
		}
	}
	free(want);
	return 0;
}

int main(int argc, char **argv)
{
	struct xps_check c;

	if (argc >= 2 && !strcmp(argv[1], "child")) {
		if (argc < 5)
			return 2;
		return child_main(argc, argv);
	}
	xps_begin(&c, "exec-args");
	for (uint64_t r = 0; r < 3 && !c.bad; r++) {
		uint64_t seed = 600 + r;
		char *args[5 + NARGS + 1], *envs[NENV + 1], num[3][24];
		int status;
		pid_t pid;

		snprintf(num[0], sizeof(num[0]), "%llu", (unsigned long long)seed);
		snprintf(num[1], sizeof(num[1]), "%d", NARGS);
		snprintf(num[2], sizeof(num[2]), "%d", NENV);
		args[0] = argv[0];
		args[1] = "child";
		args[2] = num[0];
		args[3] = num[1];
		args[4] = num[2];
		for (int k = 0; k < NARGS; k++) {
			args[5 + k] = malloc(STRLEN + 1);
			if (!args[5 + k])
				XPS_DIE(&c, "malloc: out of memory");
			make_string(args[5 + k], seed, (size_t)k);
		}
		args[5 + NARGS] = NULL;
		for (int k = 0; k < NENV; k++) {
			int n;

			envs[k] = malloc(STRLEN + sizeof(ENV_PREFIX) + 16);
			if (!envs[k])
				XPS_DIE(&c, "malloc: out of memory");
			n = snprintf(envs[k], 32, ENV_PREFIX "%d=", k);
			make_string(envs[k] + n, seed, (size_t)(NARGS + k));
		}
		envs[NENV] = NULL;

		pid = fork();
		if (pid < 0)
			XPS_DIE(&c, "fork: %s", strerror(errno));
		if (pid == 0) {
			execve("/proc/self/exe", args, envs);
			fprintf(stderr, "exec_args: execve: %s\n", strerror(errno));
			_exit(4);
		}
		if (waitpid(pid, &status, 0) != pid)
			XPS_DIE(&c, "waitpid: %s", strerror(errno));
		if (!WIFEXITED(status))
			xps_bad(&c, "round %llu: child killed by signal %d", (unsigned long long)r,
				WTERMSIG(status));
		else if (WEXITSTATUS(status) == 4)
			xps_bad(&c, "round %llu: execve failed", (unsigned long long)r);
		else if (WEXITSTATUS(status))
			xps_bad(&c,
				"round %llu: child found the arguments or environment changed (exit status %d)",
				(unsigned long long)r, WEXITSTATUS(status));
		for (int k = 0; k < NARGS; k++)
			free(args[5 + k]);
		for (int k = 0; k < NENV; k++)
			free(envs[k]);
	}
	xps_end(&c);
	return xps_exit_status();
}
