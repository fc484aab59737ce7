# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The ibpd rdma-core provider and direct-verbs library, one shared object
# (libibpd.so.1; libibverbs loads it as libibpd-rdmavNN.so), built
# against Debian's rdma-core tree of the matching provider ABI
# (scripts/build/rdma-core-fetch: ABI 34 from 56.1, ABI 65 from 65.0), or
# for ABI 66 against rdma-core 65.0 with the staged upstream series, which
# bumps the private ABI (scripts/upstream/stage.py rdma-core-build of
# out/upstream/rdma-core: make stage-upstream first). The
# verbs tests that use it have a Makefile of their own (selftests/verbs/).
# The sources are written as in rdma-core's tree; what differs out of
# it (older provider ABIs, no driver id) is user/provider/compat.h, which
# every source gets with -include. Included by the top Makefile; also
# works alone: make -f user/provider/provider.mk provider
#
#   provider            for the provider ABI of the system's libibverbs
#   provider-all        for every ABI of a released rdma-core (34, 65)
#   provider-abi66      for the private ABI of the staged rdma-core series
#   provider-abiNN      for ABI NN: $(B)/provider/abiNN/ (IBPD_RDMA_CORE_NN:
#                       against that rdma-core build tree instead of the
#                       cache's, e.g. the staged series' build, or
#                       the one debian/rules is given)
#   provider-clean

B          ?= build
CC         ?= gcc
CFLAGS     ?= -O2 -g

# The provider ABI (IBVERBS_PRIVATE_NN) of the installed libibverbs.
provider-sys-lib := /usr/lib/$(shell $(CC) -print-multiarch)/libibverbs.so.1
provider-sys-abi := $(shell objdump -T $(provider-sys-lib) 2>/dev/null | \
	sed -n 's/.*IBVERBS_PRIVATE_\([0-9]*\).*/\1/p' | head -n 1)

# The Debian rdma-core whose tree each provider ABI is built against.
provider-rdma-core-34 := 56.1
provider-rdma-core-65 := 65.0
provider-abis := 34 65
# The command that prints the rdma-core build tree of each ABI: the
# Debian ones, and for 66 the staged series' (stage.py rdma-core-tree).
provider-tree-34 := scripts/build/rdma-core-fetch $(provider-rdma-core-34)
provider-tree-65 := scripts/build/rdma-core-fetch $(provider-rdma-core-65)
provider-tree-66 := /usr/bin/python3 scripts/upstream/stage.py \
	rdma-core-tree out/upstream/rdma-core

provider-srcs := $(addprefix user/provider/,ibpd.c cmd_pd.c verbs.c dv.c)
provider-deps := $(provider-srcs) \
	$(addprefix user/provider/,compat.h ibpd.h ibpddv.h \
	libibpd.map provider.mk) $(wildcard uapi/rdma/*.h)
provider-cflags := $(CFLAGS) -std=gnu11 -fPIC \
	-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-Wmissing-prototypes -Wstrict-prototypes -Wshadow -Werror
provider-ldflags := -shared -Wl,-soname,libibpd.so.1 \
	-Wl,--version-script,user/provider/libibpd.map \
	-Wl,-z,defs -Wl,-z,relro -Wl,-z,now

.PHONY: provider provider-all provider-clean \
	$(addprefix provider-abi,$(sort $(provider-abis) 66))

provider: provider-abi$(provider-sys-abi)

# No system libibverbs: no ABI to build for.
provider-abi:
	@echo "provider: no libibverbs at $(provider-sys-lib)" \
		"(scripts/build/rdma-core-fetch installs it)" >&2; exit 1

provider-all: $(addprefix provider-abi,$(provider-abis))

# provider-build ABI: the library, the provider link libibverbs opens, the
# link applications build against; then a check that it is the wanted ABI.
define provider-build
provider-abi$(1): $(B)/provider/abi$(1)/libibpd.so.1

$(B)/provider/abi$(1)/libibpd.so.1: $(provider-deps)
	@mkdir -p $$(@D)
	rc=$$$${IBPD_RDMA_CORE_$(1):-$$$$($(provider-tree-$(1)))} && \
	$$(CC) $$(provider-cflags) -I$$$$rc/include -Iuapi -Iuser/provider \
		-include user/provider/compat.h \
		$$(provider-ldflags) -o $$@.tmp $(provider-srcs) \
		-L$$$$rc/lib -libverbs
	objdump -T $$@.tmp | grep -q 'verbs_register_driver_$(1)$$$$' || \
		{ echo "$$@: not provider ABI $(1)" >&2; rm -f $$@.tmp; exit 1; }
	mv $$@.tmp $$@
	ln -sfn libibpd.so.1 $$(@D)/libibpd-rdmav$(1).so
	ln -sfn libibpd.so.1 $$(@D)/libibpd.so
endef
$(foreach abi,$(sort $(provider-abis) 66),$(eval $(call provider-build,$(abi))))

# <infiniband/ibpddv.h> as applications include it.
$(B)/provider/include/infiniband/ibpddv.h: user/provider/ibpddv.h
	@mkdir -p $(@D)
	ln -sfn $(CURDIR)/$< $@

provider-clean:
	rm -rf $(B)/provider
