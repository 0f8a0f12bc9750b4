// SPDX-License-Identifier: GPL-2.0
/*
 * vmx-mark ID - make a marker the vmxcount TCG plugin recognises: a run of
 * multi-byte NOPs whose 32-bit displacements carry a magic value, an
 * operation and one byte of ID each (begin, four bytes, commit). The NOPs
 * do nothing on any x86 CPU, so the program is harmless without the plugin.
 * It pins itself to the CPU it runs on so the whole sequence executes on one
 * vCPU (the plugin follows it per vCPU). ID: 0 .. 4294967295.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define MAGIC 0x564d0000
#define NOP(op, b) __asm__ volatile("nopl %c0(%%rax)" :: "i"(MAGIC | (op) << 8 | (b)))

static void byte(unsigned int b)
{
	switch (b) {
#define C(n) case n: NOP(2, n); break;
#define C4(n) C(n) C(n + 1) C(n + 2) C(n + 3)
#define C16(n) C4(n) C4(n + 4) C4(n + 8) C4(n + 12)
#define C64(n) C16(n) C16(n + 16) C16(n + 32) C16(n + 48)
	C64(0) C64(64) C64(128) C64(192)
	}
}

int main(int argc, char **argv)
{
	cpu_set_t set;
	unsigned long id;
	char *end;
	int cpu;

	if (argc != 2) {
		fprintf(stderr, "usage: vmx-mark ID\n");
		return 2;
	}
	id = strtoul(argv[1], &end, 0);
	if (*end || id > 0xffffffffUL) {
		fprintf(stderr, "vmx-mark: bad ID %s\n", argv[1]);
		return 2;
	}
	cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (cpu < 0 || sched_setaffinity(0, sizeof(set), &set)) {
		perror("vmx-mark: sched_setaffinity");
		return 1;
	}
	NOP(1, 0);
	byte(id >> 24 & 0xff);
	byte(id >> 16 & 0xff);
	byte(id >> 8 & 0xff);
	byte(id & 0xff);
	NOP(3, 0);
	return 0;
}
