# SPDX-License-Identifier: GPL-2.0
#
# vmx: out-of-tree build of vmx.ko and the entry points of the project.
#
#   make                 build vmx.ko for KDIR (default: the running kernel's
#                        build tree if installed, else the newest 6.12 headers)
#   make all-kernels     also build build/<kver>/vmx.ko for every installed
#                        Debian 6.1 and 6.12 header tree
#   make check           W=1 + sparse (C=2) builds, warnings are errors
#   make demo            main job: boot a guest, load vmx, attach XDP, traffic
#   make test            make check, then the whole test suite in guests
#                        (tools/run-tests.sh; a check warning is a failure)
#   make test-extra      the heavier tier (8 vCPUs, DKMS package on 6.12/6.1,
#                        every test on the test device, test device on taps,
#                        the in-tree vmxnet3 on the test device)
#   make deb             the vmx-dkms Debian package (build/deb/)
#   make bench           the benchmark (not a test)
#   make coverage        which lines of vmx_*.c the tests run, on 6.12: the
#                        6.12 groups of make test under the vmxcount TCG
#                        plugin, then per-file and per-function figures
#                        (tools/coverage; COVERAGE_GROUPS picks groups)
#   make kernels         the debug 6.12 kernel (tools/kernels; not in make test)
#   make modules-debug   build/<kver>/vmx.ko against the cached debug kernel
#   make check-debug     W=1 + sparse against the cached debug kernel
#   make test-debug      on the debug kernel (KASAN, lockdep, kmemleak,
#                        DMA-API debug, fault injection): check-debug, then
#                        the core and XDP suites and the fault-injection
#                        test (run-tests.sh groups debug xdpdebug faultsdebug
#                        dmadebug tdevdebug tdevdebug2 hotplugdebug pmdebug); needs make
#                        kernels first; not in make test
#   make kernel-newest   the newest kernel Debian ships as source (7.x,
#                        trixie-backports; tools/kernels/newest.sh)
#   make modules-newest  build/<kver>/vmx.ko against the cached newest kernel
#   make check-newest    W=1 + sparse against the cached newest kernel
#   make test-newest     check-newest, then run-tests.sh group newest
#   make sabotage        each driver sabotage of tools/sabotage/*.patch
#                        applied to a scratch copy (build/sabotage/NAME),
#                        built, and the tests its header names run: every
#                        one must fail (tools/sabotage/README.md; about
#                        40 minutes for all of them when no one else waits
#                        for the guest lock); SABOTAGE="a b" runs those

SRC := $(CURDIR)
KVER_RUNNING := $(shell uname -r)
KDIR_NEWEST := $(lastword $(sort $(wildcard /usr/src/linux-headers-6.12.*-amd64)))
ifneq ($(wildcard /lib/modules/$(KVER_RUNNING)/build/Makefile),)
KDIR ?= /lib/modules/$(KVER_RUNNING)/build
else
KDIR ?= $(KDIR_NEWEST)
endif
ALL_KDIRS := $(sort $(wildcard /usr/src/linux-headers-6.12.*-amd64) \
		    $(wildcard /usr/src/linux-headers-6.1.*-amd64))
# the debug 6.12 of tools/kernels once built (make kernels); empty if not
KDIR_DEBUG = $(shell $(SRC)/tools/kernels/build.sh --cached 2>/dev/null)
# the newest Debian source kernel (tools/kernels/newest.sh) once built
KDIR_NEWESTK = $(shell $(SRC)/tools/kernels/newest.sh --cached 2>/dev/null)
SOURCES := Kbuild VERSION vmx_drv.c vmx_irq.c vmx_stats.c vmx_rx.c vmx_tx.c \
	   vmx_xdp.c vmx_ethtool.c vmx.h vmx_defs.h vmx_compat.h

.PHONY: all modules all-kernels check clean demo test test-extra deb bench coverage setup kernels \
	modules-debug check-debug test-debug kernel-newest modules-newest check-newest \
	test-newest sabotage

all: modules

modules:
	@test -n "$(KDIR)" || { echo "no kernel headers: run tools/setup.sh"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(SRC) modules

# One copy of the sources per kernel, so objects never mix.
all-kernels: modules
	@set -e; for k in $(ALL_KDIRS); do \
		v=$${k#/usr/src/linux-headers-}; d=$(SRC)/build/$$v; \
		mkdir -p $$d; cp $(addprefix $(SRC)/,$(SOURCES)) $$d/; \
		$(MAKE) -C $$k M=$$d modules KCFLAGS="$(KCFLAGS)"; \
	done

# W=1 + sparse against every installed 6.1/6.12 tree (a warning fails), then
# the benchmark report's --check rules on synthetic lines (no guest)
check:
	@set -e; for k in $(ALL_KDIRS); do \
		v=$${k#/usr/src/linux-headers-}; d=$(SRC)/build/check-$$v; \
		rm -rf $$d; mkdir -p $$d; cp $(addprefix $(SRC)/,$(SOURCES)) $$d/; \
		echo "== W=1 C=2 against $$v"; \
		$(MAKE) -s -C $$k M=$$d W=1 C=2 KCFLAGS=-Werror modules 2>&1 | \
			tee $$d/log; \
		! grep -E "warning|error" $$d/log; \
	done
	@echo "== tools/bench_report_test.py (the benchmark report's --check rules, offline)"
	@mkdir -p $(SRC)/build; python3 tools/bench_report_test.py >$(SRC)/build/bench_report_test.log 2>&1 || \
		{ cat $(SRC)/build/bench_report_test.log; exit 1; }

# The debug kernel's tree is its own headers tree (tools/kernels/README.md).
modules-debug:
	@d="$(KDIR_DEBUG)"; test -n "$$d" || { echo "the debug kernel is not built: make kernels"; exit 1; }; \
	set -e; v=$$(cat $$d/kver); b=$(SRC)/build/$$v; \
	mkdir -p $$b; cp $(addprefix $(SRC)/,$(SOURCES)) $$b/; \
	$(MAKE) -C $$d/src M=$$b modules KCFLAGS="$(KCFLAGS)"

check-debug:
	@d="$(KDIR_DEBUG)"; test -n "$$d" || { echo "the debug kernel is not built: make kernels"; exit 1; }; \
	set -e; v=$$(cat $$d/kver); b=$(SRC)/build/check-$$v; \
	rm -rf $$b; mkdir -p $$b; cp $(addprefix $(SRC)/,$(SOURCES)) $$b/; \
	echo "== W=1 C=2 against $$v"; \
	$(MAKE) -s -C $$d/src M=$$b W=1 C=2 KCFLAGS=-Werror modules 2>&1 | tee $$b/log; \
	! grep -E "warning|error" $$b/log

# the debug groups of run-tests.sh (it builds and checks against the debug
# kernel itself when one of them is selected)
DEBUG_GROUPS := debug xdpdebug faultsdebug dmadebug tdevdebug tdevdebug2 hotplugdebug pmdebug
test-debug:
	tools/run-tests.sh $(DEBUG_GROUPS)

# The newest kernel's tree is its own headers tree, as the debug one's.
modules-newest:
	@d="$(KDIR_NEWESTK)"; test -n "$$d" || { echo "the newest kernel is not built: make kernel-newest"; exit 1; }; \
	set -e; v=$$(cat $$d/kver); b=$(SRC)/build/$$v; \
	mkdir -p $$b; cp $(addprefix $(SRC)/,$(SOURCES)) $$b/; \
	$(MAKE) -C $$d/src M=$$b modules KCFLAGS="$(KCFLAGS)"

check-newest:
	@d="$(KDIR_NEWESTK)"; test -n "$$d" || { echo "the newest kernel is not built: make kernel-newest"; exit 1; }; \
	set -e; v=$$(cat $$d/kver); b=$(SRC)/build/check-$$v; \
	rm -rf $$b; mkdir -p $$b; cp $(addprefix $(SRC)/,$(SOURCES)) $$b/; \
	echo "== W=1 C=2 against $$v"; \
	$(MAKE) -s -C $$d/src M=$$b W=1 C=2 KCFLAGS=-Werror modules 2>&1 | tee $$b/log; \
	! grep -E "warning|error" $$b/log

test-newest:
	tools/run-tests.sh newest xdpnewest ksftnewest ksftnewtd

setup:
	tools/setup.sh

# the driver sabotages (tools/sabotage): each must make its tests fail
sabotage:
	tools/sabotage/run.sh $(SABOTAGE)

demo:
	tools/demo.sh

test:
	tools/run-tests.sh

# the heavier tier: real hibernation on stock QEMU, 8 vCPUs, the DKMS package on both kernels, every test on
# the test device, the test device on taps, 32 queues in a 32-vCPU guest
EXTRA_GROUPS := pm smp8 dkms dkms61 tdevfull tdevtap tdevq32 tdevdma
test-extra: deb
	tools/run-tests.sh $(EXTRA_GROUPS)

deb:
	tools/build-deb.sh

bench:
	tools/bench.sh

# make coverage: the groups of make test; make coverage-all: those of make
# test, test-extra and test-debug (the debug kernel built first: make kernels)
coverage:
	tools/coverage/run.sh

coverage-all: deb
	tools/coverage/run.sh --default $(EXTRA_GROUPS) $(DEBUG_GROUPS)

# the debug 6.12 kernel (KASAN, lockdep, kmemleak, DMA-API debug, fault
# injection), cached in /var/cache/vmx-kernels; tools/vm.sh --kernel debug
kernels:
	tools/kernels/build.sh

# the newest kernel Debian ships as source (7.x), non-debug;
# tools/vm.sh --kernel newest
kernel-newest:
	tools/kernels/newest.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(SRC) clean
	rm -rf $(SRC)/build
