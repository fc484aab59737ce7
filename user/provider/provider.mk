# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The ibpd rdma-core provider and direct-verbs library, one shared object
# (libibpd.so.1; libibverbs loads it as libibpd-rdmavNN.so), built
# against Debian's rdma-core tree of the matching provider ABI (the
# matrix's rdma-cores and their ABIs, scripts/matrix.conf;
# scripts/build/rdma-core-fetch), or for the upstream-rdma-core-abi
# against the upstream-rdma-core with the staged upstream series, which
# bumps the private ABI (scripts/upstream/stage rdma-core-build of
# out/upstream/rdma-core: make stage-upstream first). The
# verbs tests that use it have a Makefile of their own (selftests/verbs/).
# The sources are written as in rdma-core's tree; what differs out of
# it (older provider ABIs, no driver id) is user/provider/compat.h, which
# every source gets with -include. Included by the top Makefile; also
# works alone: make -f user/provider/provider.mk provider
#
#   provider            for the provider ABI of the system's libibverbs
#   provider-all        for the ABI of every released rdma-core of the matrix
#   provider-abiNN      (NN: upstream-rdma-core-abi) for the private ABI of
#                       the staged rdma-core series
#   provider-abiNN      for ABI NN: $(B)/provider/abiNN/ (IBPD_RDMA_CORE_NN:
#                       against that rdma-core build tree instead of the
#                       cache's, e.g. the staged series' build, or
#                       the one debian/rules is given)
#   provider-clean

B          ?= build
CC         ?= gcc
CFLAGS     ?= -O2 -g

include scripts/matrix.conf

# The provider ABI of the installed libibverbs (scripts/build/provider-abi).
provider-sys-lib := /usr/lib/$(shell $(CC) -print-multiarch)/libibverbs.so.1
provider-sys-abi := $(shell scripts/build/provider-abi $(provider-sys-lib))

# The provider ABI of each released rdma-core of the matrix, and the
# command that prints the build tree each ABI is built against: the
# Debian ones', and the staged series' (scripts/upstream/stage rdma-core-tree).
provider-abis := $(foreach v,$(rdma-cores),$(word 3,$(rdma-core-$(v))))
$(foreach v,$(rdma-cores),$(eval \
	provider-tree-$(word 3,$(rdma-core-$(v))) := scripts/build/rdma-core-fetch $(v)))
provider-staged-abi := $(upstream-rdma-core-abi)
provider-tree-$(provider-staged-abi) := scripts/upstream/stage \
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
	$(addprefix provider-abi,$(sort $(provider-abis) $(provider-staged-abi)))

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
$(foreach abi,$(sort $(provider-abis) $(provider-staged-abi)),$(eval $(call provider-build,$(abi))))

# <infiniband/ibpddv.h> as applications include it.
$(B)/provider/include/infiniband/ibpddv.h: user/provider/ibpddv.h
	@mkdir -p $(@D)
	ln -sfn $(CURDIR)/$< $@

provider-clean:
	rm -rf $(B)/provider
