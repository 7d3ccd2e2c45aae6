#!/bin/sh
# Run the fuzz targets for FUZZ_SECONDS each and print one TAP line per
# target: ok when libFuzzer finished its time with no finding.  Seeds come
# from $BUILD/fuzz/corpus-NAME for target fuzz_NAME (tests/fuzz/make-corpus.sh);
# new inputs go to $BUILD/fuzz/work/TARGET, findings to $BUILD/fuzz/artifacts/.
# Past findings, kept in tests/fuzz/regress/NAME/, are seeds too, so every
# run replays them first.
#
#   tests/fuzz/run-fuzz.sh [TARGET...]   (default: every built target)
set -u
BUILD=${BUILD:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
dir=$BUILD/fuzz
if [ $# -eq 0 ]; then
	for f in "$dir"/fuzz_*; do
		case ${f##*/} in *.*) continue ;; esac
		[ -x "$f" ] && set -- "$@" "${f##*/}"
	done
fi
if [ $# -eq 0 ]; then
	echo "1..1"
	echo "not ok 1 - no fuzz targets built in $dir (make $dir/fuzz_reader)"
	exit 1
fi
echo "1..$#"
n=0 status=0
for t in "$@"; do
	n=$((n + 1))
	work=$dir/work/$t
	mkdir -p "$work" "$dir/artifacts" "$dir/corpus-${t#fuzz_}"
	log=$dir/$t.log
	regress=tests/fuzz/regress/${t#fuzz_}
	[ -d "$regress" ] || regress=
	"$dir/$t" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" \
		"$work" "$dir/corpus-${t#fuzz_}" ${regress:+"$regress"} >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	if [ $rc -eq 0 ]; then
		echo "ok $n - $t: ${runs:-?} inputs in ${FUZZ_SECONDS}s, no findings"
	else
		status=1
		echo "not ok $n - $t: libFuzzer exited $rc after ${runs:-?} inputs (log: $log)"
		grep -E "ERROR|SUMMARY|Test unit written|abort|deadly" "$log" | head -n 10 | sed 's/^/# /'
	fi
done
exit $status
