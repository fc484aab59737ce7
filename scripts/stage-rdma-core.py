# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# stage-rdma-core.py RCREPO NAME EMAIL: providers/ibpd in an rdma-core tree
# (stage-rdma-core.sh copied user/provider and the man pages into it): the
# in-tree form of the sources, the build files and the packaging entries,
# as libmlx5's and libefa's are. Every edit asserts its anchor, so that a
# changed rdma-core fails loudly instead of staging a wrong series.
import os
import re
import sys

rc, name, email = sys.argv[1:]
prov = os.path.join(rc, "providers/ibpd")


def path(p):
    return os.path.join(rc, p)


def edit(p, old, new, count=1):
    p = path(p)
    s = open(p).read()
    assert s.count(old) == count, f"{p}: {old!r} found {s.count(old)} times"
    open(p, "w").write(s.replace(old, new))


def insert_sorted(p, pattern, line):
    """Insert LINE among the consecutive lines matching PATTERN, in order."""
    p = path(p)
    lines = open(p).read().split("\n")
    idx = [i for i, l in enumerate(lines) if re.match(pattern, l)]
    assert idx, f"{p}: no line matches {pattern!r}"
    block = idx[0]
    while block + 1 < len(lines) and re.match(pattern, lines[block + 1]):
        block += 1
    at = idx[0]
    while at <= block and lines[at] < line:
        at += 1
    lines.insert(at, line)
    open(p, "w").write("\n".join(lines))


def unifdef_pabi(p):
    """Keep the branch of '#if IBVERBS_PABI_VERSION >= 65': in tree, always."""
    p = path(p)
    s = open(p).read()
    s, n = re.subn(r"#if IBVERBS_PABI_VERSION >= 65\n(.*?)#else\n.*?#endif\n",
                   r"\1", s, flags=re.S)
    open(p, "w").write(s)
    return n


# --- the sources -----------------------------------------------------------

assert unifdef_pabi("providers/ibpd/ibpd.c") == 1
edit("providers/ibpd/ibpd.c", "/* The write-path GET_CONTEXT; provider ABI 65 added a driver buffer. */",
     "/* The write-path GET_CONTEXT */")
edit("providers/ibpd/ibpd.c",
     """ * and context lifecycle, device and port queries. ibpd has no driver id of
 * its own (RDMA_DRIVER_UNKNOWN), so a device is ours only when its sysfs
 * "hca_type" says "ibpd": never by name, which "rdma dev set" may change.
 */""",
     """ * and context lifecycle, device and port queries. Devices are matched by
 * their driver id, RDMA_DRIVER_IBPD; those of an out-of-tree ibpd module
 * (RDMA_DRIVER_UNKNOWN) when their sysfs "hca_type" says "ibpd": never by
 * name, which "rdma dev set" may change.
 */""")
edit("providers/ibpd/ibpd.c",
     """/*
 * Nothing to match by table, but libibverbs walks every provider's table
 * for a device with a driver id (rxe0 ...) and does not check for NULL.
 */
static const struct verbs_match_ent ibpd_match_table[] = {
	{},
};""",
     """static const struct verbs_match_ent ibpd_match_table[] = {
	VERBS_DRIVER_ID(RDMA_DRIVER_IBPD),
	{},
};""")

# PDs: the core's UVERBS_METHOD_PD_ALLOC, with ibpd's driver response (the
# write path's would sit at offset 4, misaligned for its u64: rdma-core's
# DECLARE_DRV_CMD refuses it); IBPD_METHOD_PD_ALLOC is out of tree only.
edit("providers/ibpd/verbs.c",
     """ * PD and MR verbs of the ibpd provider. A PD is allocated with ibpd's own
 * ioctl method (its handle, pdn and identity in one call) and imported
 * with ibpd's import method, as mlx5_import_pd() does with PD_QUERY: the
 * imported PD owns no kernel reference, so unimport never calls the kernel.""",
     """ * PD and MR verbs of the ibpd provider. A PD is allocated with the core's
 * ioctl method, its pdn and identity in ibpd's driver response, and
 * imported with ibpd's import method, as mlx5_import_pd() does with
 * PD_QUERY: the imported PD owns no kernel reference, so unimport never
 * calls the kernel.""")
edit("providers/ibpd/verbs.c", "#include <rdma/ibpd_compat_ioctl_cmds.h>\n",
     "#include <rdma/ibpd-abi.h>\n#include <rdma/ibpd_user_ioctl_cmds.h>\n")
edit("providers/ibpd/verbs.c", "struct ibv_pd *ibpd_alloc_pd(struct ibv_context *context)\n{",
     """/*
 * Kernels without UVERBS_METHOD_PD_ALLOC (an out-of-tree ibpd module): the
 * write path, then the PD's number and identity from ibpd's import method.
 */
static int ibpd_alloc_pd_write(struct ibv_context *context, struct ibpd_pd *pd)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	int ret;

	ret = ibv_cmd_alloc_pd(context, &pd->ibv_pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		return ret;

	ret = ibpd_cmd_pd_import(context, pd->ibv_pd.handle, 0, pd, NULL);
	if (ret)
		ibv_cmd_dealloc_pd(&pd->ibv_pd);
	return ret;
}

struct ibv_pd *ibpd_alloc_pd(struct ibv_context *context)
{""")
s = open(path("providers/ibpd/verbs.c")).read()
a = s.index("struct ibv_pd *ibpd_alloc_pd(struct ibv_context *context)\n{")
b = s.index("int ibpd_dealloc_pd(struct ibv_pd *ibpd)")
s = s[:a] + """struct ibv_pd *ibpd_alloc_pd(struct ibv_context *context)
{
	DECLARE_COMMAND_BUFFER(cmd, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_ALLOC, 2);
	struct ibpd_alloc_pd_resp resp = {};
	struct ib_uverbs_attr *handle;
	struct ibpd_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	handle = fill_attr_out_obj(cmd, UVERBS_ATTR_ALLOC_PD_HANDLE);
	fill_attr_out_ptr(cmd, UVERBS_ATTR_UHW_OUT, &resp);

	ret = execute_ioctl(context, cmd);
	if (!ret) {
		pd->ibv_pd.context = context;
		pd->ibv_pd.handle = read_attr_obj(UVERBS_ATTR_ALLOC_PD_HANDLE,
						  handle);
		pd->pdn = resp.pdn;
		pd->id = resp.id;
		return &pd->ibv_pd;
	}
	if (ret == EPROTONOSUPPORT)
		ret = ibpd_alloc_pd_write(context, pd);
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return &pd->ibv_pd;
}

""" + s[b:]
open(path("providers/ibpd/verbs.c"), "w").write(s)

for f in os.listdir(prov):
    if f.endswith((".c", ".h")):
        src = open(os.path.join(prov, f)).read()
        assert "compat" not in src and "PABI" not in src, f"{f}: out-of-tree left"

open(os.path.join(prov, "CMakeLists.txt"), "w").write("""\
# libibpd.so.1 is both the provider and the direct-verbs library; its symbol
# version node is IBPD_2.0, as libibpd has shipped out of tree.
rdma_shared_provider(ibpd libibpd.map
  1 2.0.${PACKAGE_VERSION}
  dv.c
  ibpd.c
  verbs.c
)

publish_headers(infiniband
  ibpddv.h
)

rdma_pkg_config("ibpd" "libibverbs" "${CMAKE_THREAD_LIBS_INIT}")
""")
mans = sorted(f for f in os.listdir(os.path.join(prov, "man")) if f.endswith(".3"))
open(os.path.join(prov, "man/CMakeLists.txt"), "w").write(
    "rdma_man_pages(\n" + "".join(f"  {m}\n" for m in mans) + ")\n")

# --- the build ---------------------------------------------------------------

edit("CMakeLists.txt", "add_subdirectory(providers/hfi1verbs)\n",
     "add_subdirectory(providers/hfi1verbs)\nadd_subdirectory(providers/ibpd)\n"
     "add_subdirectory(providers/ibpd/man)\n")
edit("libibverbs/verbs.h",
     "extern const struct verbs_device_ops verbs_provider_hns;\n",
     "extern const struct verbs_device_ops verbs_provider_hns;\n"
     "extern const struct verbs_device_ops verbs_provider_ibpd;\n")

# --- documentation and maintainers ----------------------------------------

insert_sorted("README.md", r" - [a-z0-9_-]+\.ko$", " - ibpd.ko")
edit("MAINTAINERS", "IONIC USERSPACE PROVIDER",
     f"IBPD USERSPACE PROVIDER (for ibpd.ko)\n"
     f"M:\t{name} <{email}>\nS:\tSupported\nF:\tproviders/ibpd/\n\nIONIC USERSPACE PROVIDER")
edit("debian/copyright", "Files: providers/ipathverbs/*\n",
     "Files: providers/ibpd/*\nCopyright: 2026, The ibpd authors.\n"
     "License: BSD-MIT or GPL-2\n\nFiles: providers/ipathverbs/*\n")

# --- debian ------------------------------------------------------------------

edit("debian/control",
     "Provides: libefa1, libipathverbs1, libmana1, libmlx4-1, libmlx5-1, libmthca1",
     "Provides: libefa1, libibpd1, libipathverbs1, libmana1, libmlx4-1, libmlx5-1,\n"
     "          libmthca1")
edit("debian/control", "  - hns: HiSilicon Hip06 SoC\n",
     "  - hns: HiSilicon Hip06 SoC\n  - ibpd: A software device for protection domain sharing\n")
insert_sorted("debian/ibverbs-providers.install", r"usr/lib/\*/lib[a-z0-9]+\.so\.\*$",
              "usr/lib/*/libibpd.so.*")
dev = "debian/libibverbs-dev.install"
insert_sorted(dev, r"usr/include/infiniband/", "usr/include/infiniband/ibpddv.h")
insert_sorted(dev, r"usr/lib/\*/lib[a-z0-9_]+\.a$", "usr/lib/*/libibpd.a")
insert_sorted(dev, r"usr/lib/\*/lib[a-z0-9_]+\.so$", "usr/lib/*/libibpd.so")
insert_sorted(dev, r"usr/lib/\*/pkgconfig/", "usr/lib/*/pkgconfig/libibpd.pc")
insert_sorted(dev, r"usr/share/man/man3/", "usr/share/man/man3/ibpddv_*.3")
syms = sorted(re.findall(r"^\t\t(ibpddv_\w+);", open(os.path.join(prov, "libibpd.map")).read(), re.M))
assert syms
edit("debian/ibverbs-providers.symbols", "libmana.so.1 ibverbs-providers #MINVER#\n",
     "libibpd.so.1 ibverbs-providers #MINVER#\n* Build-Depends-Package: libibverbs-dev\n"
     " IBPD_2.0@IBPD_2.0 66\n" + "".join(f" {s}@IBPD_2.0 66\n" for s in syms) +
     "libmana.so.1 ibverbs-providers #MINVER#\n")

# --- redhat ------------------------------------------------------------------

spec = "redhat/rdma-core.spec"
edit(spec, "Provides: libipathverbs = %{version}-%{release}\n",
     "Provides: libibpd = %{version}-%{release}\nObsoletes: libibpd < %{version}-%{release}\n"
     "Provides: libipathverbs = %{version}-%{release}\n")
edit(spec, "- libhns: HiSilicon Hip08+ SoC\n",
     "- libhns: HiSilicon Hip08+ SoC\n- libibpd: A software device for protection domain sharing\n")
edit(spec, "%{_mandir}/man3/ibv_*\n", "%{_mandir}/man3/ibpddv_*\n%{_mandir}/man3/ibv_*\n")
edit(spec, "%{_libdir}/libibverbs*.so.*\n",
     "%{_libdir}/libibpd.so.*\n%{_libdir}/libibverbs*.so.*\n")

# --- suse: a package of its own, as libmlx5-1, outside dma_coherent ---------

spec = "suse/rdma-core.spec"
edit(spec, "%define hns_so_major    1\n", "%define hns_so_major    1\n%define ibpd_so_major   1\n")
edit(spec, "%define  hns_lname    libhns%{hns_so_major}\n",
     "%define  hns_lname    libhns%{hns_so_major}\n%define  ibpd_lname   libibpd%{ibpd_so_major}\n")
edit(spec, "Requires:       %{verbs_lname} = %{version}-%{release}\n%if 0%{?dma_coherent}\n",
     "Requires:       %{verbs_lname} = %{version}-%{release}\n"
     "Requires:       %{ibpd_lname} = %{version}-%{release}\n%if 0%{?dma_coherent}\n")
edit(spec, "Obsoletes:      librxe-rdmav2 < %{version}-%{release}\n",
     "Obsoletes:      librxe-rdmav2 < %{version}-%{release}\n"
     "Requires:       %{ibpd_lname} = %{version}-%{release}\n")
edit(spec, "- libhns: HiSilicon Hip08+ SoC\n",
     "- libhns: HiSilicon Hip08+ SoC\n- libibpd: A software device for protection domain sharing\n")
edit(spec, "%package -n %mana_lname\n",
     "%package -n %ibpd_lname\nSummary:        IBPD runtime library\nGroup:          System/Libraries\n\n"
     "%description -n %ibpd_lname\nThis package contains the ibpd runtime library.\n\n"
     "%package -n %mana_lname\n")
edit(spec, "%ldconfig_scriptlets -n %hns_lname\n",
     "%ldconfig_scriptlets -n %hns_lname\n%ldconfig_scriptlets -n %ibpd_lname\n")
edit(spec, "%{_mandir}/man3/ibnd_*\n%{_mandir}/man3/ibv_*\n",
     "%{_mandir}/man3/ibnd_*\n%{_mandir}/man3/ibpddv_*\n%{_mandir}/man3/ibv_*\n")
edit(spec, "%files -n %verbs_lname\n%{_libdir}/libibverbs*.so.*\n",
     "%files -n %verbs_lname\n%{_libdir}/libibverbs*.so.*\n\n"
     "%files -n %ibpd_lname\n%{_libdir}/libibpd*.so.*\n")
