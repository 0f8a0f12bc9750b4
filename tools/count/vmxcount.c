// SPDX-License-Identifier: GPL-2.0
/*
 * vmxcount - a QEMU TCG plugin of the vmx project that counts, per vCPU,
 * the guest instructions executed, and the MMIO reads and writes per
 * physical address and memory region, and writes the running totals to a
 * file every time the guest executes a marker (vmx-mark, see mark.c).
 *
 * Arguments (-plugin vmxcount.so,arg=value,...):
 *   out=FILE     where the marks go (default: vmxcount.out in QEMU's cwd)
 *   io=kernel|all|off
 *                count MMIO accesses of kernel-mode instructions (default),
 *                of every instruction, or none (faster)
 *   hist=N       also write, at every mark, the instructions vCPU N executed
 *                since the previous mark per translation-block start address
 *                (for a per-function breakdown against /proc/kallsyms)
 *   insns=on|off count instructions (default on; off: no callback on every
 *                block, for coverage runs; the counts read 0)
 *   cov=FILE     coverage: every translation block whose start address is
 *                in the coverage range, written once to FILE the first time
 *                it executes, with its bytes (tools/coverage/report.py maps
 *                them to the lines of vmx.ko)
 *   covrange=LO-HI  the coverage range, hex (default: x86-64 module space,
 *                0xffffffffc0000000-0xffffffffff000000)
 *
 * Output lines (all counts are totals since the guest started):
 *   mark SEQ ID VCPU insns C0 C1 ...        (VCPU: the one that made it)
 *   io SEQ REGION PHYS writes W reads R     (every address seen so far)
 *   hist SEQ VADDR INSNS                    (delta since the previous mark)
 *   end insns C0 C1 ...                     (at exit)
 * and in the cov= file, one line per distinct block executed:
 *   tb VADDR SIZE HEXBYTES                  (bytes as translated)
 *
 * Instructions are counted per translation block when it starts executing
 * (a block left early by an exception counts whole; in kernel code under
 * TCG that is rare). Built against the qemu-plugin.h of the QEMU that loads
 * it (tools/count/build.sh); API versions 1 (QEMU 7.2) to 4 (10.0).
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 64
/* the marker: nopl MAGIC|op<<8|byte(%rax), 0f 1f 80 + disp32 (mark.c) */
#define MARK_MAGIC 0x564d0000u
#define MARK_BEGIN 1
#define MARK_BYTE 2
#define MARK_COMMIT 3

struct tbinfo {
	uint64_t vaddr;
	uint64_t n;
	uint64_t execs[MAX_VCPUS];
	uint64_t prev; /* execs[hist_vcpu] at the previous mark */
};

struct iocount {
	const char *name;
	uint64_t phys;
	uint64_t w, r;
};

struct markstate {
	int active, nbytes;
	uint32_t id;
};

static uint64_t insns[MAX_VCPUS];
static struct markstate mstate[MAX_VCPUS];
static GMutex lock;
static GPtrArray *tbs;       /* struct tbinfo *, only with hist= */
static GHashTable *iotab;    /* phys -> struct iocount */
static FILE *out;
static uint64_t seq;
static int io_mode = 1;      /* 0 off, 1 kernel, 2 all */
static int hist_vcpu = -1;
/*
 * MMIO is counted from the first mark on. Before it the guest boots and
 * moves its PCI BARs, and Debian's QEMU 7.2 died (segfault, a vCPU thread,
 * 2 of 5 starts and once 3 in a row) in that phase with the memory
 * callback registered; the address of an I/O access is looked up there
 * through a memory section the BAR updates replace. Nothing before the
 * first mark is ever reported.
 */
static int io_on;
static int insns_on = 1;

/*
 * Coverage (cov=): one record per distinct block, keyed by address and
 * bytes, shared by every translation of it (a block is translated again
 * after a TB flush, or when its page was written: a module loaded at the
 * same address, a static key flipped). A record is written once, by the
 * first vCPU that executes it; a translation of a block already written
 * gets no callback at all, so the cost fades once the code has run.
 */
struct covtb {
	uint64_t vaddr;
	size_t size;
	int hit;
	unsigned char *bytes;
};

static FILE *cov_out;
static GHashTable *cov_tab;  /* struct covtb * -> itself */
static uint64_t cov_lo = 0xffffffffc0000000ull, cov_hi = 0xffffffffff000000ull;
static uint64_t cov_written;

static guint covtb_hash(gconstpointer p)
{
	const struct covtb *t = p;
	guint h = (guint)(t->vaddr ^ (t->vaddr >> 32)) ^ (guint)t->size * 2654435761u;
	size_t i;

	for (i = 0; i < t->size; i++)
		h = h * 31 + t->bytes[i];
	return h;
}

static gboolean covtb_equal(gconstpointer a, gconstpointer b)
{
	const struct covtb *x = a, *y = b;

	return x->vaddr == y->vaddr && x->size == y->size &&
	       !memcmp(x->bytes, y->bytes, x->size);
}

static void vcpu_cov_exec(unsigned int vcpu, void *udata)
{
	struct covtb *t = udata;
	size_t i;

	if (__atomic_load_n(&t->hit, __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&t->hit, 1, __ATOMIC_RELAXED))
		return;
	g_mutex_lock(&lock);
	if (cov_out) {
		fprintf(cov_out, "tb 0x%" PRIx64 " %zu ", t->vaddr, t->size);
		for (i = 0; i < t->size; i++)
			fprintf(cov_out, "%02x", t->bytes[i]);
		fputc('\n', cov_out);
		/* a guest killed by a timeout still leaves what it ran */
		fflush(cov_out);
		cov_written++;
	}
	g_mutex_unlock(&lock);
}

/* the block's record, created on its first translation */
static struct covtb *cov_record(struct qemu_plugin_tb *tb, size_t n)
{
	struct covtb key, *t;
	size_t i, size = 0, off = 0;

	for (i = 0; i < n; i++)
		size += qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, i));
	key.vaddr = qemu_plugin_tb_vaddr(tb);
	key.size = size;
	key.hit = 0;
	key.bytes = g_malloc(size ? size : 1);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		size_t len = qemu_plugin_insn_size(insn);

#if QEMU_PLUGIN_VERSION >= 3
		if (qemu_plugin_insn_data(insn, key.bytes + off, len) != len)
			memset(key.bytes + off, 0, len);
#else
		memcpy(key.bytes + off, qemu_plugin_insn_data(insn), len);
#endif
		off += len;
	}
	g_mutex_lock(&lock);
	t = g_hash_table_lookup(cov_tab, &key);
	if (t) {
		g_free(key.bytes);
	} else {
		t = g_memdup2(&key, sizeof(key));
		g_hash_table_add(cov_tab, t);
	}
	g_mutex_unlock(&lock);
	return t;
}

static void vcpu_tb_exec(unsigned int vcpu, void *udata)
{
	struct tbinfo *t = udata;

	if (vcpu >= MAX_VCPUS)
		return;
	insns[vcpu] += t->n;
	t->execs[vcpu]++;
}

static void vcpu_tb_count(unsigned int vcpu, void *udata)
{
	if (vcpu < MAX_VCPUS)
		insns[vcpu] += (uintptr_t)udata;
}

static void vcpu_mem(unsigned int vcpu, qemu_plugin_meminfo_t info,
		     uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw;
	struct iocount *c;
	uint64_t phys;

	if (!__atomic_load_n(&io_on, __ATOMIC_RELAXED))
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || !qemu_plugin_hwaddr_is_io(hw))
		return;
	phys = qemu_plugin_hwaddr_phys_addr(hw);
	g_mutex_lock(&lock);
	c = g_hash_table_lookup(iotab, &phys);
	if (!c) {
		c = g_new0(struct iocount, 1);
		c->phys = phys;
		c->name = qemu_plugin_hwaddr_device_name(hw);
		g_hash_table_insert(iotab, &c->phys, c);
	}
	if (qemu_plugin_mem_is_store(info))
		c->w++;
	else
		c->r++;
	g_mutex_unlock(&lock);
}

static void write_insns(void)
{
	int i, last = 0;

	for (i = 0; i < MAX_VCPUS; i++)
		if (insns[i])
			last = i;
	for (i = 0; i <= last; i++)
		fprintf(out, " %" PRIu64, insns[i]);
	fputc('\n', out);
}

static gint io_cmp(gconstpointer a, gconstpointer b)
{
	const struct iocount *x = *(struct iocount * const *)a;
	const struct iocount *y = *(struct iocount * const *)b;

	return x->phys < y->phys ? -1 : x->phys > y->phys;
}

/* called with lock held */
static void report(uint32_t id, unsigned int vcpu)
{
	GPtrArray *ios;
	GHashTableIter it;
	gpointer v;
	guint i;

	seq++;
	__atomic_store_n(&io_on, 1, __ATOMIC_RELAXED);
	fprintf(out, "mark %" PRIu64 " %" PRIu32 " %u insns", seq, id, vcpu);
	write_insns();
	ios = g_ptr_array_new();
	g_hash_table_iter_init(&it, iotab);
	while (g_hash_table_iter_next(&it, NULL, &v))
		g_ptr_array_add(ios, v);
	g_ptr_array_sort(ios, io_cmp);
	for (i = 0; i < ios->len; i++) {
		struct iocount *c = g_ptr_array_index(ios, i);

		fprintf(out, "io %" PRIu64 " %s 0x%" PRIx64 " writes %" PRIu64
			" reads %" PRIu64 "\n", seq, c->name, c->phys, c->w, c->r);
	}
	g_ptr_array_free(ios, TRUE);
	if (hist_vcpu >= 0) {
		for (i = 0; i < tbs->len; i++) {
			struct tbinfo *t = g_ptr_array_index(tbs, i);
			uint64_t e = t->execs[hist_vcpu];

			if (e != t->prev)
				fprintf(out, "hist %" PRIu64 " 0x%" PRIx64 " %" PRIu64 "\n",
					seq, t->vaddr, (e - t->prev) * t->n);
			t->prev = e;
		}
	}
	fflush(out);
}

static void vcpu_mark(unsigned int vcpu, void *udata)
{
	uint32_t disp = (uintptr_t)udata;
	unsigned int op = (disp >> 8) & 0xff;
	struct markstate *m;

	if (vcpu >= MAX_VCPUS)
		return;
	m = &mstate[vcpu];
	switch (op) {
	case MARK_BEGIN:
		m->active = 1;
		m->nbytes = 0;
		m->id = 0;
		break;
	case MARK_BYTE:
		if (m->active && m->nbytes < 4) {
			m->id = m->id << 8 | (disp & 0xff);
			m->nbytes++;
		} else {
			m->active = 0;
		}
		break;
	case MARK_COMMIT:
		if (m->active && m->nbytes == 4) {
			g_mutex_lock(&lock);
			report(m->id, vcpu);
			g_mutex_unlock(&lock);
		}
		m->active = 0;
		break;
	default:
		m->active = 0;
	}
}

/* the marker's displacement if insn is one, else 0 */
static uint32_t mark_disp(struct qemu_plugin_insn *insn)
{
	unsigned char b[7];
	uint32_t disp;

	if (qemu_plugin_insn_size(insn) != sizeof(b))
		return 0;
#if QEMU_PLUGIN_VERSION >= 3
	if (qemu_plugin_insn_data(insn, b, sizeof(b)) != sizeof(b))
		return 0;
#else
	memcpy(b, qemu_plugin_insn_data(insn), sizeof(b));
#endif
	if (b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return 0;
	disp = b[3] | b[4] << 8 | b[5] << 16 | (uint32_t)b[6] << 24;
	return (disp & 0xffff0000u) == MARK_MAGIC ? disp : 0;
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	if (cov_out) {
		uint64_t va = qemu_plugin_tb_vaddr(tb);

		if (va >= cov_lo && va < cov_hi) {
			struct covtb *c = cov_record(tb, n);

			if (!__atomic_load_n(&c->hit, __ATOMIC_RELAXED))
				qemu_plugin_register_vcpu_tb_exec_cb(tb, vcpu_cov_exec,
					QEMU_PLUGIN_CB_NO_REGS, c);
		}
	}
	if (hist_vcpu >= 0) {
		struct tbinfo *t = g_new0(struct tbinfo, 1);

		t->vaddr = qemu_plugin_tb_vaddr(tb);
		t->n = n;
		g_mutex_lock(&lock);
		g_ptr_array_add(tbs, t);
		g_mutex_unlock(&lock);
		qemu_plugin_register_vcpu_tb_exec_cb(tb, vcpu_tb_exec,
						     QEMU_PLUGIN_CB_NO_REGS, t);
	} else if (insns_on) {
		qemu_plugin_register_vcpu_tb_exec_cb(tb, vcpu_tb_count,
						     QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)n);
	}
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		uint32_t disp = mark_disp(insn);

		if (disp)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_mark,
				QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)disp);
		if (io_mode == 2 || (io_mode == 1 && (va >> 63)))
			qemu_plugin_register_vcpu_mem_cb(insn, vcpu_mem,
				QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
	}
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
	g_mutex_lock(&lock);
	fprintf(out, "end insns");
	write_insns();
	fclose(out);
	out = NULL;
	if (cov_out) {
		fprintf(cov_out, "# end: %" PRIu64 " blocks\n", cov_written);
		fclose(cov_out);
		cov_out = NULL;
	}
	g_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = "vmxcount.out", *cov_path = NULL;
	int i;

	if (!info->system_emulation) {
		fprintf(stderr, "vmxcount: system emulation only\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq) {
			fprintf(stderr, "vmxcount: argument without '=': %s\n", argv[i]);
			return -1;
		}
		if (!strncmp(argv[i], "out=", 4)) {
			path = eq + 1;
		} else if (!strncmp(argv[i], "io=", 3)) {
			if (!strcmp(eq + 1, "off"))
				io_mode = 0;
			else if (!strcmp(eq + 1, "kernel"))
				io_mode = 1;
			else if (!strcmp(eq + 1, "all"))
				io_mode = 2;
			else {
				fprintf(stderr, "vmxcount: io=off|kernel|all\n");
				return -1;
			}
		} else if (!strncmp(argv[i], "hist=", 5)) {
			hist_vcpu = atoi(eq + 1);
			if (hist_vcpu < 0 || hist_vcpu >= MAX_VCPUS) {
				fprintf(stderr, "vmxcount: hist=0..%d\n", MAX_VCPUS - 1);
				return -1;
			}
		} else if (!strncmp(argv[i], "insns=", 6)) {
			if (!strcmp(eq + 1, "on"))
				insns_on = 1;
			else if (!strcmp(eq + 1, "off"))
				insns_on = 0;
			else {
				fprintf(stderr, "vmxcount: insns=on|off\n");
				return -1;
			}
		} else if (!strncmp(argv[i], "cov=", 4)) {
			cov_path = eq + 1;
		} else if (!strncmp(argv[i], "covrange=", 9)) {
			char *end;

			cov_lo = strtoull(eq + 1, &end, 16);
			if (*end != '-' || (cov_hi = strtoull(end + 1, &end, 16), *end) ||
			    cov_lo >= cov_hi) {
				fprintf(stderr, "vmxcount: covrange=LO-HI (hex)\n");
				return -1;
			}
		} else {
			fprintf(stderr, "vmxcount: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return -1;
	}
	if (cov_path) {
		cov_out = fopen(cov_path, "w");
		if (!cov_out) {
			perror(cov_path);
			return -1;
		}
		cov_tab = g_hash_table_new(covtb_hash, covtb_equal);
		fprintf(cov_out, "# vmxcount cov: qemu %s, plugin api %d, range 0x%" PRIx64
			"-0x%" PRIx64 "\n", info->target_name, QEMU_PLUGIN_VERSION,
			cov_lo, cov_hi);
		fflush(cov_out);
	}
	iotab = g_hash_table_new(g_int64_hash, g_int64_equal);
	tbs = g_ptr_array_new();
	fprintf(out, "# vmxcount: qemu %s, plugin api %d, io=%d hist=%d\n",
		info->target_name, QEMU_PLUGIN_VERSION, io_mode, hist_vcpu);
	fflush(out);
	qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	return 0;
}
