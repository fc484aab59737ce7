# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# ibpd: out-of-tree kernel module (Kbuild), libibpd, selftests, test VM.
#
#   make                 module (for the default test kernel), library, tests
#   make check           everything, then the kselftests in the test VM
#   make module KDIR=/lib/modules/$(uname -r)/build   build for your kernel
#   make install [PREFIX=/usr/local] [DESTDIR=]

VERSION    := 1.0.0
KERNEL     ?= 6.1
IBPD_CACHE ?= $(HOME)/.cache/ibpd
export IBPD_CACHE

# The test kernel (image, headers, source) comes from Debian packages, or
# is built (KERNEL=debug: scripts/kernel-build).
# Looked up once, on first use only (lib and install do not need a kernel).
KCACHE = $(eval KCACHE := $$(shell scripts/kernel-dir $$(KERNEL)))$(KCACHE)
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

LIB_SRCS := user/cmd.c user/device.c user/mr.c user/netlink.c user/pd.c
LIB_OBJS := $(LIB_SRCS:user/%.c=$(B)/user/%.o)
SONAME   := libibpd.so.1

TESTS    := $(addprefix $(B)/selftests/,ibpd_test ibpd_unload_test ibpd_stress ibpd_fail_nth ibpd_fuzz)

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include

.PHONY: all module lib selftests check demo stage-upstream clean install modules_install

all: module lib selftests

# Sources are linked one by one: kbuild writes objects beside them.
module:
	@[ ! -L $(KMOD)/kernel ] || rm $(KMOD)/kernel
	@mkdir -p $(KMOD)/kernel
	@ln -sfn $(CURDIR)/Kbuild $(KMOD)/Kbuild
	@ln -sfn $(CURDIR)/uapi $(KMOD)/uapi
	@for f in $(CURDIR)/kernel/*.[ch]; do ln -sfn $$f $(KMOD)/kernel/; done
	$(MAKE) -C $(KDIR) M=$(KMOD) modules

lib: $(B)/$(SONAME) $(B)/libibpd.a $(B)/libibpd.pc $(B)/ibpd

$(B)/ibpd: user/ibpd_tool.c user/ibpd.h user/scm_rights.h $(B)/$(SONAME)
	$(CC) $(UCFLAGS) -o $@ $< -L$(B) -libpd -Wl,-rpath,'$$ORIGIN'

$(B)/user/%.o: user/%.c user/ibpd.h user/ibpd_int.h $(wildcard uapi/rdma/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -c -o $@ $<

$(B)/$(SONAME): $(LIB_OBJS) user/libibpd.map
	$(CC) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script,user/libibpd.map -Wl,-z,defs \
		-o $@ $(LIB_OBJS)
	ln -sf $(SONAME) $(B)/libibpd.so

$(B)/libibpd.a: $(LIB_OBJS)
	$(AR) rcs $@ $^

$(B)/libibpd.pc: user/libibpd.pc.in
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    $< > $@

selftests: $(TESTS)

$(B)/selftests/%: selftests/%.c selftests/ibpd_test.h user/scm_rights.h $(B)/$(SONAME)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wall -D_GNU_SOURCE -Iuser -Iuapi \
		-I$(KSRC)/tools/testing/selftests -o $@ $< \
		-L$(B) -libpd -Wl,-rpath,'$$ORIGIN/..'

check: all
	scripts/check

demo: all
	scripts/vm-run -- $(B)/ibpd demo

# The upstream patch series (out/upstream), applied and built in-tree.
stage-upstream:
	scripts/stage-upstream --check

clean:
	rm -rf $(B) out

install: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/rdma
	install -m 0755 $(B)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libibpd.so
	install -m 0644 $(B)/libibpd.a $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(B)/libibpd.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(B)/ibpd $(DESTDIR)$(PREFIX)/bin/ibpd
	install -m 0644 user/ibpd.h $(DESTDIR)$(INCDIR)/
	install -m 0644 uapi/rdma/*.h $(DESTDIR)$(INCDIR)/rdma/

modules_install: module
	$(MAKE) -C $(KDIR) M=$(KMOD) modules_install
