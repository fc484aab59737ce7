#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# run_proof.sh: the upstream proof's part in the test VM
# (scripts/tests/ibpd_check/proof.py boots it, with IBPD_PROOF=upstream on
# the upstream-kernel's stock image with the patched modules, or
# IBPD_PROOF=stock on a stock kernel, IBPD_PROOF_KSFT=1 on that same stock
# kernel: scripts/matrix.conf). What the host built comes in the
# environment: IBPD_PROOF_NEW_KSFT (the series' own rdma kselftests, one
# per driver), IBPD_RDMA_CORE (rdma-core with the staged series),
# IBPD_RDMA_CORE_NODB (the same less rxe's and siw's doorbell patches),
# IBPD_PROVIDER (ibpd's provider for it), IBPD_KSFT (the rdma kselftests,
# installed with their runner); seed_test is the proof's build, in
# out/upstream-proof. ibpd0 exists (the module's); rxe0 is made over
# dummy0, siw0 over dummy1, 192.0.2.1/24 (rdma_cm binds an address to the
# one device on its netdev). kselftest TAP; exit status 0 when everything
# passed.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
b=$top/out/upstream-proof

[ -n "${IBPD_IN_VM:-}" ] ||
	{ echo "$0: runs in the test VM, started by make upstream-proof" >&2; exit 2; }
newtests=${IBPD_PROOF_NEW_KSFT:?the new kselftests of the series, from the host}

# shellcheck source=selftests/lib/tap.sh
. "$top/selftests/lib/tap.sh"

echo "TAP version 13"
echo "# $IBPD_PROOF kernel $(uname -r)"
want="ibpd0 rxe0 siw0"
if [ "$IBPD_PROOF" = stock ] && ! grep -qw siw /proc/modules; then
	echo "# no siw in this kernel: ibpd0 and rxe0 only"
	want="ibpd0 rxe0"
fi

# The kernel's rdma kselftests, first (they make rxe devices of their
# own), through the runner: on the patched modules and on their stock
# kernel. modprobe and modinfo find the booted kernel's modules (the stock
# kernel and its patched modules have the same release).
if [ "$IBPD_PROOF" = upstream ] || [ "${IBPD_PROOF_KSFT:-0}" = 1 ]; then
	m=/lib/modules/$(uname -r)
	[ -e "$m" ] || { mkdir -p /lib/modules &&
		ln -s "$IBPD_KERNEL_DIR/root/lib/modules/$(uname -r)" "$m"; }
	# the nodes an installed system makes at boot for the devices of
	# modules not loaded (modules.devname: kmod static-nodes, then
	# systemd-tmpfiles), whose open() loads the module: /dev/net/tun
	# once a test has unloaded tun (rxe_test_NETDEV_UNREGISTER.sh)
	while read -r _ name dev; do
		case $dev in [cb][0-9]*:[0-9]*) ;; *) continue ;; esac
		[ -e "/dev/$name" ] && continue
		mkdir -p "$(dirname "/dev/$name")"
		t=${dev:0:1} dev=${dev:1}
		mknod "/dev/$name" "$t" "${dev%%:*}" "${dev##*:}"
	done < "$m/modules.devname"
	# the runner's 45 s a test is a speed limit under TCG (rxe_netns_names
	# takes longer): vm-run's watchdog catches a hang
	"$IBPD_KSFT/run_kselftest.sh" -o 900 -c rdma > /tmp/ksft.tap 2>&1
	sed 's/^/# /' /tmp/ksft.tap
	awk '/^(not )?ok [0-9]+ selftests: rdma: / {
		r = /^not ok/ ? "fail" : (/# SKIP/ ? "skip" : "pass")
		sub(/^.*selftests: rdma: /, ""); sub(/ .*/, "")
		print "# ksft-rdma: " $0 " " r }' /tmp/ksft.tap | tee /tmp/ksft.res
	for newtest in $newtests; do
		if [ "$IBPD_PROOF" = upstream ]; then
			grep -qx "# ksft-rdma: $newtest pass" /tmp/ksft.res
		else
			grep -qx "# ksft-rdma: $newtest skip" /tmp/ksft.res
		fi
		ok $? "$IBPD_PROOF: selftests/rdma $newtest through run_kselftest.sh ($([ "$IBPD_PROOF" = upstream ] && echo passes || echo skips))"
	done
	# the kernel's own (the series' new ones aside) pass, on the patched
	# modules as on the stock kernel: the host compares the two runs,
	# which would not show a regression of a test failing on both
	bad=$(awk -v new=" $newtests " 'index(new, " " $3 " ") == 0 && $4 != "pass" { printf " %s", $3 }' /tmp/ksft.res)
	all=$(awk -v new=" $newtests " 'index(new, " " $3 " ") == 0' /tmp/ksft.res | wc -l)
	[ "$all" -gt 0 ] && [ -z "$bad" ]
	ok $? "$IBPD_PROOF: the kernel's own $all rdma kselftests pass${bad:+ (not:$bad)}"
	# their cleanup unloads rdma_rxe where it is a module
	modprobe -q rdma_rxe 2> /dev/null
fi

# siw0 over a netdev of its own with an address, for rdma_cm, which
# connects siw's QPs; a connection to a local address runs over lo
siw_up() {
	ip link set lo up &&
		ip link add dummy1 type dummy &&
		ip addr add 192.0.2.1/24 dev dummy1 &&
		ip link set dummy1 up &&
		rdma link add siw0 type siw netdev dummy1
}

# loaded, the dummy module has made dummy0
ip link show dummy0 > /dev/null 2>&1 || ip link add dummy0 type dummy
ip link set dummy0 up &&
	rdma link add rxe0 type rxe netdev dummy0 &&
	case $want in *siw0*) siw_up ;; esac
ok $? "$IBPD_PROOF: $want"

# the patched libibverbs, with the out-of-tree ibpd provider
export LD_LIBRARY_PATH=$IBPD_RDMA_CORE/lib PATH=$IBPD_RDMA_CORE/bin:$PATH
export RDMAV_DRIVERS=$IBPD_PROVIDER
devs=$(ibv_devices 2>&1 | awk 'NR > 2 { print $1 }' | sort | paste -sd' ')
echo "# ibv_devices ($IBPD_RDMA_CORE/lib/libibverbs.so.1): $devs"
[ "$devs" = "$want" ]
ok $? "$IBPD_PROOF: the patched libibverbs sees $want"
for dev in $want; do
	ibv_devinfo -d "$dev" > /tmp/devinfo 2>&1
	ok $? "$IBPD_PROOF: ibv_devinfo -d $dev"
done

# ibpd's demo built against libibverbs alone (build/ibpd-demo, a plain
# verbs program), under the patched libibverbs: RC traffic through the
# imported PD and MR on rxe0 where rxe imports a context, its import
# failing with EOPNOTSUPP (exit 1) where not. Its story as comments.
timeout 300 "$top/build/ibpd-demo" --device rxe0 demo > /tmp/demo 2>&1
rc=$?
sed 's/^/# /' /tmp/demo
if [ "$IBPD_PROOF" = upstream ]; then
	[ $rc = 0 ] && grep -q 'demo complete (RDMA WRITE, READ and SEND' /tmp/demo
	ok $? "$IBPD_PROOF: ibpd-demo --device rxe0 demo: RDMA WRITE, READ and SEND through the imported PD and MR"
	# make bench's data path group, short (its figures mean nothing
	# here): RDMA WRITE, SEND and QP creation through a context, PD and MR
	# imported from the bench's own file, and through the originals
	LD_LIBRARY_PATH=$LD_LIBRARY_PATH:${IBPD_PROVIDER%/*} IBPD_BENCH_QUICK=1 \
		IBPD_BENCH_GROUPS=datapath timeout 300 \
		"$top/build/bench/ibpd_bench" > /tmp/dp 2> /tmp/dp.err
	rc=$?
	sed 's/^/# /' /tmp/dp.err
	[ $rc = 0 ] && grep -q '"group": "datapath".*"measured": true' /tmp/dp &&
		[ "$(grep -c '"group": "datapath", "device": "rxe0", "op": ' /tmp/dp)" = 6 ]
	ok $? "$IBPD_PROOF: make bench's data path group on rxe0 (short): six ops measured through imported and original objects"
else
	[ $rc = 1 ] && grep -q 'ibv_import_device: Operation not supported' /tmp/demo
	ok $? "$IBPD_PROOF: ibpd-demo --device rxe0 demo: ibv_import_device fails with EOPNOTSUPP, exit 1"
fi

if [ "$IBPD_PROOF" = upstream ]; then
	export IBPD_TEST_IMPORT_ALL=1
	what="import expected on all"
else
	# the generic PD import calls no kernel method: it works in a
	# context of its own where the context import does not
	export IBPD_TEST_PD_IMPORT=1
	what="context import EOPNOTSUPP on ${want#ibpd0 }"
fi
"$b/provider/seed_test" 2>&1 | tee /tmp/seed.tap
rc=${PIPESTATUS[0]}
ok "$rc" "$IBPD_PROOF: seed_test on $want, $what"
for dev in ${want#ibpd0 }; do
	"$top/selftests/vm/rxe_diff.sh" /tmp/seed.tap ibpd0 "$dev" | tee /tmp/diff
	# the same cases and results as ibpd0; on the patched kernel with
	# none skipped for want of import
	grep -q '^ok ' /tmp/diff &&
		{ [ "$IBPD_PROOF" = stock ] || grep -q ', 0 without import)' /tmp/diff; }
	ok $? "$IBPD_PROOF: $dev against ibpd0 (seed contract differential)"
done

# traffic_cases DEV WITH EVIDENCE WHY [ARGS...]: the two cases of traffic
# from another process on DEV pass in WITH (pyverbs_run.py's lines of a
# run with the series) and fail with the series less its doorbell patches
# (run here, with ARGS), EVIDENCE (an extended regular expression) in the
# test's own report, WHY said in the case's name.
traffic_cases() {
	local dev=$1 with=$2 evidence=$3 why=$4 name t
	shift 4
	LD_LIBRARY_PATH=$IBPD_RDMA_CORE_NODB/lib PYTHONPATH=$IBPD_RDMA_CORE_NODB/python \
		/usr/bin/python3 "$v/pyverbs_run.py" "$IBPD_RDMA_CORE_NODB/../tests" \
		--dev "$dev" "$@" test_shared_pd.SharedPDTestCase \
		> "/tmp/pyverbs-nodb-$dev" 2> "/tmp/pyverbs-nodb-$dev.log"
	for name in test_imported_pd_traffic_other_process test_traffic_after_credentials_change; do
		t=tests.test_shared_pd.SharedPDTestCase.$name
		grep -qx "RESULT $t pass" "$with"
		ok $? "$IBPD_PROOF: $dev, with the series: $t passes"
		grep "^RESULT $t " "/tmp/pyverbs-nodb-$dev" | sed 's/^/# less the doorbell patches: /'
		# unittest's report of the test: from its FAIL/ERROR line to the next
		awk -v n="$name (" '/^=+$/ { p = 0 } /^(FAIL|ERROR): / { p = index($0, n) > 0 } p' \
			"/tmp/pyverbs-nodb-$dev.log" > "/tmp/pyverbs-nodb-$dev-$name"
		grep -m3 -E "Errno: [0-9]+|Failed to post" "/tmp/pyverbs-nodb-$dev-$name" | sed 's/^/#   /'
		grep -q "^RESULT $t fail" "/tmp/pyverbs-nodb-$dev" &&
			grep -qE "$evidence" "/tmp/pyverbs-nodb-$dev-$name"
		ok $? "$IBPD_PROOF: $dev, the series less its doorbell patches: $t fails ($why)"
	done
}

# rdma-core's own tests, built with it, against the expectations of
# selftests/verbs/pyverbs.expect (version "staged": the matrix's
# upstream-rdma-core with the series, on the patched kernel): import now
# works on rxe0 and siw0 too.
v=$top/selftests/verbs
if [ "$IBPD_PROOF" = upstream ]; then
	for dev in $want; do
		PYTHONPATH=$IBPD_RDMA_CORE/python /usr/bin/python3 \
			"$v/pyverbs_run.py" "$IBPD_RDMA_CORE/../tests" --dev "$dev" \
			test_pd test_mr test_device test_shared_pd \
			> "/tmp/pyverbs-$dev" 2> "/tmp/pyverbs-$dev.log"
		"$v/pyverbs_diff.py" "$v/pyverbs.expect" "/tmp/pyverbs-$dev" \
			staged "$dev" > /tmp/pydiff 2>&1
		rc=$?
		cat /tmp/pydiff
		[ $rc = 0 ] || sed -n 's/^RESULT /# RESULT staged '"$dev"' /p' "/tmp/pyverbs-$dev"
		ok $rc "$IBPD_PROOF: rdma-core's tests on $dev as pyverbs.expect says"
	done
	# A QP and an SRQ on a PD imported from a bad handle, on rxe0 and
	# siw0, whose import does not check it: exactly ENOENT and EINVAL
	# (ibv_import_pd(3)), said here as well as in the list above.
	t=tests.test_shared_pd.SharedPDAPITest.test_import_bad_pd_handle_qp_srq
	for dev in rxe0 siw0; do
		case " $want " in *" $dev "*) ;; *) continue ;; esac
		grep -qx "RESULT $t pass" "/tmp/pyverbs-$dev"
		ok $? "$IBPD_PROOF: $dev: $t passes (QP and SRQ on a bad imported PD handle: ENOENT, EINVAL)"
	done
	# The post verbs on an RC QP in INIT, which nothing consumes, on
	# rxe0 and siw0: errno values, as their man pages say (siw's
	# provider returned -EINVAL and -ENOMEM before the series' "Return
	# errno values from the post verbs").
	t=tests.test_qp.QPTest.test_post_errors_are_errno_values
	for dev in rxe0 siw0; do
		case " $want " in *" $dev "*) ;; *) continue ;; esac
		PYTHONPATH=$IBPD_RDMA_CORE/python /usr/bin/python3 \
			"$v/pyverbs_run.py" "$IBPD_RDMA_CORE/../tests" --dev "$dev" \
			"${t#tests.}" > "/tmp/pyverbs-post-$dev" 2> "/tmp/pyverbs-post-$dev.log"
		grep "^RESULT $t " "/tmp/pyverbs-post-$dev" | sed 's/^/# /'
		grep -qx "RESULT $t pass" "/tmp/pyverbs-post-$dev"
		ok $? "$IBPD_PROOF: $dev: $t passes (EINVAL, ENOMEM: errno values)"
	done
	# and on siw0 with the series less its doorbell patches it fails:
	# siw's old doorbell hands on write()'s -1 (siw's "Ring the doorbell
	# through the command path")
	case " $want " in *" siw0 "*)
		LD_LIBRARY_PATH=$IBPD_RDMA_CORE_NODB/lib PYTHONPATH=$IBPD_RDMA_CORE_NODB/python \
			/usr/bin/python3 "$v/pyverbs_run.py" "$IBPD_RDMA_CORE_NODB/../tests" \
			--dev siw0 "${t#tests.}" > /tmp/pyverbs-post-nodb 2> /tmp/pyverbs-post-nodb.log
		grep -m1 "AssertionError: " /tmp/pyverbs-post-nodb.log | sed 's/^/#   /'
		grep -qx "RESULT $t fail AssertionError" /tmp/pyverbs-post-nodb &&
			grep -q "the send failed with -1" /tmp/pyverbs-post-nodb.log
		ok $? "$IBPD_PROOF: siw0, the series less its doorbell patches: $t fails (a send's -1)"
		;;
	esac
	# Traffic through a PD imported by another process, and from the
	# opener once its credentials change, on rxe0 and siw0: each passes
	# with the series, and fails on this same kernel with the series less
	# rxe's and siw's doorbell patches (IBPD_RDMA_CORE_NODB), whose
	# doorbell write() the kernel refuses to every caller whose
	# credentials are not those the file was opened with: EACCES on rxe0,
	# in that test's own traceback; on siw0 the old doorbell's -1 (a
	# PyverbsRDMAError of -1 names no errno). On siw0 with --gid 0:
	# rdma-core's tests pass over siw's only GID, its netdev's MAC
	# followed by zeros, as a zero GID; the tests connect its QPs through
	# rdma_cm. Said here for rxe0 as well as in the list above.
	traffic_cases rxe0 /tmp/pyverbs-rxe0 "Errno: 13" EACCES
	case " $want " in *" siw0 "*)
		PYTHONPATH=$IBPD_RDMA_CORE/python /usr/bin/python3 \
			"$v/pyverbs_run.py" "$IBPD_RDMA_CORE/../tests" --dev siw0 --gid 0 \
			test_shared_pd.SharedPDTestCase > /tmp/pyverbs-siw0-gid 2> /tmp/pyverbs-siw0-gid.log
		traffic_cases siw0 /tmp/pyverbs-siw0-gid "PyverbsRDMAError: Failed to post send$" \
			"ibv_post_send() returns -1" --gid 0
		;;
	esac
fi
tap_totals
