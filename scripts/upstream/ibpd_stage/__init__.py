# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The upstream series' staging and check, one module per job.

common         the matrix's values, the logs, running commands, reading
               patch files, the TAP writer (scripts/lib/ibpd_tap.py)
staging        stage-upstream: the three series, signed off with the
               caller's git identity, in out/upstream/
recipients     To: and Cc: of each mail (get_maintainer.pl of the patched
               kernel source, rdma-core's MAINTAINERS)
check          stage-upstream --check: the series' mails, the kernel
               series (apply, build, kselftests, checkpatch, uAPI headers),
               then rdma_core_check; as kselftest TAP
rdma_core      rdma-core's sources and its build with the series
               (stage rdma-core-build, rdma-core-tree), cached
rdma_core_check  the rdma-core series' cases: apply, build, exports,
               check-build, the ABI, the import_context contract
check_build    rdma-core's own buildlib/check-build, less the tests that
               do not apply here (a program of its own)
series         stage open and stage write: a series of patch files as git
               commits on its base, and back, the bridge's backports made
               again (scripts/upstream/backport-check checks them)

__main__ is the entry point: scripts/upstream/stage runs it (and
stage-upstream runs that), with scripts/lib (the project's TAP writer,
which make check writes with too) beside this package on the path.
Standard library only, and nothing of the tests (scripts/tests).
"""
