// SPDX-License-Identifier: GPL-2.0
/*
 * cmpxchg16b-flags - does the CPU keep RFLAGS other than ZF across
 * CMPXCHG16B?
 *
 * The SDM: CMPXCHG16B writes ZF and leaves CF, PF, AF, SF and OF as they
 * were; no instruction can set RFLAGS bits 22-63.  QEMU 7.2's software CPU
 * (TCG) emulates CMPXCHG16B (and CMPXCHG8B, with LOCK or without) with a
 * helper that computes the flags it keeps from env->cc_op without the
 * translator having stored its own, newer cc_op first; after a TB whose
 * last flag update left CC_OP_EFLAGS in env->cc_op, a CMP in the next TB
 * leaves its source operand in CC_SRC, and the helper returns that
 * operand as the flags.  QEMU 8.0 emits the instruction inline
 * ("target/i386: Inline cmpxchg16b"); 10.0 passes this probe.
 *
 * Each round: POPF (ends QEMU's TB with CC_OP_EFLAGS stored), CMP with a
 * source operand of bits 22-25, CMPXCHG16B on zeroed memory with RDX:RAX
 * zero (succeeds, ZF=1), PUSHF.  A CPU that follows the SDM shows ZF and
 * none of bits 22-25.
 *
 * Prints one line, "clean" or "corrupt: RFLAGS 0x... after CMPXCHG16B".
 * Exit status 0 clean, 1 corrupt, 2 CMPXCHG16B unavailable.
 */
#include <cpuid.h>
#include <stdio.h>

#define RESERVED_22_25	0x03c00000UL
#define X86_EFLAGS_ZF	0x40UL

static unsigned long round_flags(void)
{
	unsigned __int128 mem __attribute__((aligned(16))) = 0;
	unsigned long rax = 0, rdx = 0, flags;

	/*
	 * The stack pointer moves past the red zone (where the compiler may
	 * keep mem) before PUSH and PUSHF write below it, and mem is reached
	 * through a register; .p2align keeps the sequence inside one 32-byte
	 * block, so that no page boundary ends QEMU's TB between CMP and
	 * CMPXCHG16B (QEMU would store cc_op there).
	 */
	asm volatile(".p2align 5\n\t"
		     "leaq -128(%%rsp), %%rsp\n\t"
		     "pushq %[clean]\n\t"
		     "popfq\n\t"
		     "cmpq %[operand], %%rbx\n\t"
		     "cmpxchg16b (%[mem])\n\t"
		     "pushfq\n\t"
		     "popq %[flags]\n\t"
		     "leaq 128(%%rsp), %%rsp\n\t"
		     "testq %[flags], %[flags]\n\t"
		     : [flags] "=&r" (flags), "+a" (rax), "+d" (rdx)
		     : [mem] "r" (&mem), [clean] "r" (0x202UL),
		       [operand] "r" (RESERVED_22_25), "b" (1UL), "c" (0UL)
		     : "cc", "memory");
	return flags;
}

int main(void)
{
	unsigned int a, b, c, d, i;
	unsigned long flags;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_CMPXCHG16B)) {
		printf("no CMPXCHG16B\n");
		return 2;
	}
	for (i = 0; i < 16; i++) {
		flags = round_flags();
		if ((flags & RESERVED_22_25) || !(flags & X86_EFLAGS_ZF)) {
			printf("corrupt: RFLAGS 0x%lx after CMPXCHG16B\n", flags);
			return 1;
		}
	}
	printf("clean\n");
	return 0;
}
