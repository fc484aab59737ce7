# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# ibpd: out-of-tree kernel module (Kbuild), libibpd (rdma-core provider
# and DV library), selftests, test VM.
#
#   make                 the Debian packages the build needs (install-deps
#                        --build), then the module (for the default test
#                        kernel), provider + DV library for the system's
#                        libibverbs, tool, tests
#   make check           Debian packages it needs (scripts/build/install-deps),
#                        then all tests, in the test VM
#   make check-quick     static checks and one kernel's kselftests (KERNEL)
#   make vm-test TEST="PROG [ARGS]"
#                        one test program in the test VM (KERNEL; PACKAGES=1:
#                        with the bridge's packages installed there)
#   make verbs-tests     the verbs tests (selftests/verbs), built
#   make verbs-check     the verbs tests in the test VM, every libibverbs
#   make bench           the cost of the PD verbs, as ratios, in the test VM
#   make soak [SOAK_MINUTES=60]
#                        the long robustness run on the debug kernel:
#                        out/soak/{soak.json,soak.png}
#   make module KDIR=/lib/modules/$(uname -r)/build   build for your kernel
#   make install [PREFIX=/usr/local] [DESTDIR=] [KDIR=]
#                        library, provider link, ibpd.driver, DV header,
#                        tool, man pages, module (+depmod)
#   make deb             Debian packages (debian/, dkms): out/deb/*.deb
#   make bridge          the three below: the packages that make rxe and siw
#                        import on Debian's stock kernels: out/bridge/
#   make bridge-rxe      rdma_rxe and siw that import, for DKMS on Debian's
#                        kernels (packaging/ibpd-rdma-sw): out/bridge/rxe/
#   make bridge-rdma-core
#                        the series' base rdma-core with the series
#                        (patches/rdma-core; scripts/matrix.conf names the
#                        base), Debian packages for bookworm:
#                        out/bridge/rdma-core/
#   make bridge-ibpd     libibpd1, libibpd-dev, ibpd-tools for them (the
#                        series' provider ABI): out/bridge/ibpd/
#
# check, check-quick, vm-test, verbs-check, bench, soak and upstream-proof
# run scripts/tests/check (their sections: scripts/tests/check --list),
# which builds what each section needs, once a run (the module for its
# kernel, the tests, ...): they build nothing themselves.
# The kernels, rdma-core versions and VM modules: scripts/matrix.conf
# (KERNEL defaults to its default-kernel, for make vm-test to vm-test-kernel).

VERSION    := 2.0.2
include scripts/matrix.conf
KERNEL     ?= $(default-kernel)
IBPD_CACHE := $(shell scripts/build/cache-dir)
export IBPD_CACHE

# The test kernel (image, headers, source) comes from Debian packages, or
# is built (KERNEL=debug: scripts/build/kernel-build).
# Looked up once, on first use only (lib and install do not need a kernel);
# a kernel that cannot be had stops make with kernel-dir's error.
KCACHE = $(eval KCACHE := $$(or $$(shell scripts/build/kernel-dir $$(KERNEL)),$$(error \
	 no test kernel '$$(KERNEL)' (scripts/build/kernel-dir's error above))))$(KCACHE)
KDIR  ?= $(KCACHE)/build
KSRC  ?= $(KCACHE)/source
KVER   = $(eval KVER := $$(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' \
	   $$(KDIR)/include/generated/utsrelease.h))$(KVER)
# One build directory per kernel: the sources are linked in, kbuild's
# objects stay out of the tree.
KMOD   = $(CURDIR)/$(B)/kmod/$(KVER)

CC      ?= gcc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror=implicit-function-declaration \
	   -Wno-unused-parameter -Wno-missing-field-initializers
UCFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -fPIC -D_GNU_SOURCE \
	   -Iuser -Iuapi -fvisibility=default
B       := build

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
# libibverbs reads its driver files from /etc/libibverbs.d whatever the
# prefix; ibpd.driver names the provider by its absolute path.
SYSCONFDIR ?= /etc
PROVIDERDIR ?= $(LIBDIR)/libibverbs

# make install puts the module of KDIR when given; else of the running
# kernel when its build tree is installed; else of the test kernel.
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
ifeq ($(origin KDIR),file)
INSTALL_KDIR = $(if $(wildcard $(RUNNING_KDIR)/Makefile),$(RUNNING_KDIR),$(KDIR))
else
INSTALL_KDIR = $(KDIR)
endif

# The header's "make" is all, whatever the included file's first rule.
.DEFAULT_GOAL := all
include user/provider/provider.mk

.PHONY: all build-deps deps module lib selftests verbs-tests verbs-check check check-quick \
	vm-test bench soak demo stage-upstream \
	upstream-proof clean install deb bridge bridge-rxe bridge-rdma-core \
	bridge-ibpd \
	install-lib install-man modules_install modules_install_built FORCE

# Plain make on a fresh machine: the Debian packages the build needs
# first (as root or through sudo; else named, and make stops), before
# anything is downloaded.
all: build-deps
	$(MAKE) --no-print-directory module lib selftests

build-deps:
	scripts/build/install-deps --build

# The module's directory: its source tree as scripts/build/module-tree
# makes it for every build (kernel/Makefile, the object list, beside the
# sources, compat/ and uapi/ under it), each file linked: kbuild writes
# its objects beside the links, not into the checkout. Two builds for one
# kernel (make check's lanes) take turns, links included.
module:
	@mkdir -p $(KMOD) && flock $(KMOD).lock sh -ec '\
	scripts/build/module-tree --link $(KMOD); \
	$(MAKE) -C $(KDIR) M=$(KMOD) modules'

lib: provider $(B)/libibpd.pc $(B)/ibpd $(B)/ibpd-demo

# The library of the system's provider ABI, as the tool and bench link it.
SYSLIB := $(B)/provider/abi$(provider-sys-abi)
DVFLAGS := -I$(B)/provider/include -L$(SYSLIB) -libpd -libverbs

# The tool (user/tool/, a file a job as iproute2's rdma/), each file
# compiled once, into build/tool/.
TOOL_OBJS := $(addprefix $(B)/tool/,options.o json.o devices.o pds.o demo.o)
$(B)/tool/%.o: user/tool/%.c user/tool/tool.h \
		$(B)/provider/include/infiniband/ibpddv.h
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -I$(B)/provider/include -c -o $@ $<
$(B)/tool/demo.o: user/scm_rights.h

# ibpd: every command, on libibpd. The one in build/ runs from there
# (rpath), the installed one has none.
$(B)/ibpd $(B)/install/ibpd: $(B)/tool/ibpd_tool.o $(TOOL_OBJS) \
		$(SYSLIB)/libibpd.so.1
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -o $@ $(filter %.o,$^) $(DVFLAGS) \
		$(if $(findstring install,$@),,-Wl,-rpath,'$$ORIGIN/provider/abi$(provider-sys-abi)')

# ibpd-demo: the demo alone, linked with the distribution's libibverbs
# only (no libibpd, no rpath): an unmodified verbs program, as the bridge's
# packages must run it (ibpd.1: the demo).
$(B)/ibpd-demo: $(B)/tool/ibpd_demo.o $(B)/tool/options.o $(B)/tool/demo.o
	$(CC) $(UCFLAGS) -o $@ $^ -libverbs

# Paths relative to $(LIBDIR)/pkgconfig; remade every time, as PREFIX,
# LIBDIR and INCDIR may differ from the last make.
PCREL = $(shell realpath -m --relative-to=$(LIBDIR)/pkgconfig $(1))
$(B)/libibpd.pc: user/libibpd.pc.in FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX_REL@|$(call PCREL,$(PREFIX))|' \
	    -e 's|@LIBDIR_REL@|$(call PCREL,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR_REL@|$(call PCREL,$(INCDIR))|' \
	    -e 's|@VERSION@|$(VERSION)|' $< > $@

FORCE:

# The kselftests (selftests/Makefile, kselftest's lib.mk of the test
# kernel's source): raw uverbs ioctls, they link nothing but libc.
# Installed with the runner of KSRC into build/ksft (run_kselftest.sh),
# where selftests/vm/run_vm.sh and run_debug.sh run them.
selftests: verbs-tests
	$(MAKE) -C selftests OUTPUT=$(CURDIR)/$(B)/selftests KSRC=$(KSRC) \
		KSFT_INSTALL=$(CURDIR)/$(B)/ksft ksft-install

# The verbs tests (selftests/verbs/Makefile), on the same harness: the DV
# ones against the provider of the system's libibverbs; into
# build/provider, where selftests/vm/run_verbs.sh finds them.
verbs-tests: $(B)/provider/include/infiniband/ibpddv.h $(SYSLIB)/libibpd.so.1
	$(MAKE) -C selftests/verbs OUTPUT=$(CURDIR)/$(B)/provider KSRC=$(KSRC) \
		IBPD_CFLAGS=-I$(CURDIR)/$(B)/provider/include \
		IBPD_LIBS="-L$(CURDIR)/$(SYSLIB) -libpd"

# The verbs tests in the test VM, on ibpd0 and rxe0, with the system
# libibverbs and each rdma-core of the matrix (the section builds them).
verbs-check: build-deps
	KERNEL=$(KERNEL) scripts/tests/check verbs

$(B)/bench/ibpd_bench: bench/ibpd_bench.c selftests/lib/ibpd_debugfs.h \
		selftests/lib/ibpd_uverbs.h \
		$(B)/provider/include/infiniband/ibpddv.h $(SYSLIB)/libibpd.so.1
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -o $@ $< $(DVFLAGS) \
		-Wl,-rpath,'$$ORIGIN/../provider/abi$(provider-sys-abi)'

# make check and make demo install what they need first (Debian packages,
# through sudo when not root), then build with them.
deps:
	scripts/build/install-deps

check: deps
	scripts/tests/check

# The fast tier: the static checks, one kernel's kselftests and verbs tests.
check-quick: build-deps
	KERNELS="$(or $(KERNELS),$(KERNEL))" scripts/tests/check --quick

# One test in the test VM, the inner loop (a name of build/selftests/,
# selftests/ or the verbs tests, or a path), on the matrix's
# vm-test-kernel unless KERNEL is given: the tests are built with the
# harness of the kernel they are made for, and 6.1's has no test
# selection. PACKAGES=1: after apt installs make bridge's packages in the
# VM, rxe0 and siw0 up (Documentation/testing.rst, "One test").
# DIST=NAME: the job's root is the matrix's userland NAME (trixie), made
# on first use (scripts/build/dist-root), instead of the host's.
#   make vm-test TEST="ibpd_test -r pd.alloc_dealloc" [KERNEL=6.12]
#   make vm-test PACKAGES=1 TEST="ibpd --device rxe0 demo" KERNEL=6.1
#   make vm-test DIST=trixie KERNEL=6.12 TEST=ibpd_tool_test.sh
VMTEST_KERNEL := $(if $(filter file,$(origin KERNEL)),$(vm-test-kernel),$(KERNEL))
vm-test:
	@[ -n "$(TEST)" ] || { echo 'make vm-test TEST="PROG [ARGS]"' >&2; exit 2; }
	$(MAKE) --no-print-directory build-deps
	KERNEL=$(VMTEST_KERNEL) scripts/tests/check vm-test

# Benchmarks in the test VM: a table of ratios, out/bench/{bench.json,bench.png}.
bench: build-deps
	scripts/tests/check bench

# The long soak on the debug kernel (a short one runs in make check).
SOAK_MINUTES ?= 60
soak: deps
	SOAK_MINUTES=$(SOAK_MINUTES) scripts/tests/check soak

demo: deps
	$(MAKE) all
	scripts/vm/vm-run -- $(B)/ibpd demo

# The upstream patch series (out/upstream/{linux-fixes,linux,rdma-core}),
# signed off with your git identity, applied, built and checked.
stage-upstream:
	scripts/upstream/stage-upstream --check

# Both series run: the upstream kernel booted with the series' ib_core,
# uverbs, rxe and siw modules (built on first use, then cached), the
# patched rdma-core's seed contract on ibpd0, rxe0 and siw0; the same
# rdma-core on each stock kernel of the matrix; the rdma kselftests'
# results on the patched modules against those on the stock kernel.
upstream-proof:
	scripts/tests/check upstream-proof

clean:
	rm -rf $(B) out

# ibpd-dkms, libibpd1, libibpd-dev, ibpd-tools (dpkg-buildpackage on a copy
# of the checkout; debian/README.source) for this machine's Debian, in
# out/deb/; DIST=NAME: for the matrix's userland NAME (trixie), built in
# its build root, in out/deb-NAME/ (scripts/build/deb-build --dist).
deb:
	scripts/build/deb-build $(if $(DIST),--dist $(DIST) --out out/deb-$(DIST))

# ibpd-rxe-dkms and ibpd-siw-dkms, the source package ibpd-rdma-sw: rxe and
# siw of each series of the matrix's kernels, from its linux-source, with
# the import patches (Documentation/ibpd.rst, "ibpd-rxe-dkms").
bridge-rxe:
	scripts/build/bridge-rxe

# The bridge (Documentation/ibpd.rst): Debian's rdma-core with the
# series, built once in the cache (scripts/build/bridge-rdma-core), and
# ibpd's arch-dependent packages for its libibverbs1 (deb-build --rdma-core).
bridge-rdma-core:
	scripts/build/bridge-rdma-core > /dev/null

bridge-ibpd:
	tree=$$(scripts/build/bridge-rdma-core) && \
	scripts/build/deb-build --out out/bridge/ibpd --rdma-core "$$tree" \
		--libibverbs1 "$$(ls "$$tree"/../../pkg/libibverbs1_*.deb)"

# Every package of the bridge (README, "PD sharing with queue pairs on
# your kernel"): out/bridge/{rdma-core,ibpd,rxe}/.
bridge: bridge-rdma-core bridge-ibpd bridge-rxe

install: install-lib install-man modules_install

# The library in LIBDIR, the provider link libibverbs opens beside it in
# PROVIDERDIR, ibpd.driver (absolute path) where libibverbs reads it.
install-lib: lib $(B)/install/ibpd
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PROVIDERDIR) \
		$(DESTDIR)$(INCDIR)/rdma $(DESTDIR)$(INCDIR)/infiniband \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)/libibverbs.d
	install -m 0755 $(SYSLIB)/libibpd.so.1 $(DESTDIR)$(LIBDIR)/libibpd.so.1
	ln -sf libibpd.so.1 $(DESTDIR)$(LIBDIR)/libibpd.so
	ln -sf $(shell realpath -m --relative-to=$(PROVIDERDIR) $(LIBDIR))/libibpd.so.1 \
		$(DESTDIR)$(PROVIDERDIR)/libibpd-rdmav$(provider-sys-abi).so
	echo "driver $(PROVIDERDIR)/libibpd" > \
		$(DESTDIR)$(SYSCONFDIR)/libibverbs.d/ibpd.driver
	install -m 0644 $(B)/libibpd.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 0755 $(B)/install/ibpd $(DESTDIR)$(BINDIR)/ibpd
	install -m 0644 user/provider/ibpddv.h $(DESTDIR)$(INCDIR)/infiniband/
	install -m 0644 uapi/rdma/*.h $(DESTDIR)$(INCDIR)/rdma/

install-man:
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 0644 man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/man3/*.3 $(DESTDIR)$(MANDIR)/man3/

# Into updates/, which depmod prefers over the kernel's own modules.
modules_install:
	$(MAKE) module KDIR=$(INSTALL_KDIR)
	$(MAKE) modules_install_built KDIR=$(INSTALL_KDIR)

modules_install_built:
	install -D -m 0644 $(KMOD)/ibpd.ko \
		$(DESTDIR)/lib/modules/$(KVER)/updates/ibpd.ko
	depmod $(if $(DESTDIR),-b $(DESTDIR)) $(KVER)
