#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run test suites that print TAP and add up their results.
#
#   tests/run-tests.sh NAME:COMMAND [NAME:COMMAND...]
#
# Each COMMAND is an executable run with no arguments.  A result line
# "ok N ..." passes, "not ok N ..." fails, and either with "# SKIP" is a
# skip, which must carry a reason (after "# SKIP", or on a preceding
# "# SKIP-REASON:" line, the form cmocka suites use); a skip without one
# counts as a failure.  A suite that exits non-zero without reporting a
# failure, or reports fewer results than its plan announced, fails too.
# Full logs land in $BUILD/test-logs/.  The last line printed is always
# "N passed, N failed, N skipped"; the exit status is 1 if anything failed.
#
# Environment: BUILD (default build), SUITE_TIMEOUT seconds (default 1800),
# TESTS=regex to run only matching suites.

set -u
BUILD=${BUILD:-build}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-1800}
LOGDIR=$BUILD/test-logs
mkdir -p "$LOGDIR"
export BUILD CMOCKA_MESSAGE_OUTPUT=TAP

total_pass=0 total_fail=0 total_skip=0
failed_suites=()

for spec in "$@"; do
	name=${spec%%:*}
	cmd=${spec#*:}
	if [ -n "${TESTS:-}" ] && ! [[ $name =~ $TESTS ]]; then
		continue
	fi
	log=$LOGDIR/${name//\//_}.tap
	start=$(date +%s)
	timeout -k 10 "$SUITE_TIMEOUT" "$cmd" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))

	# pass fail skip planned, then one "SKIP reason" or "FAIL line" per line
	summary=$(awk '
		function reason_of(line) {
			sub(/.*# SKIP[ \t]*/, "", line)
			return line
		}
		/^# SKIP-REASON:/ { pending = $0; sub(/^# SKIP-REASON:[ \t]*/, "", pending); next }
		/^(not )?ok [0-9]+/ {
			if ($0 ~ /# SKIP/) {
				r = pending != "" ? pending : reason_of($0)
				if (r == "" || pending == "" && $0 ~ /^not ok/) {
					fail++; notes = notes "FAIL skip without a reason: " $0 "\n"
				} else {
					skip++; notes = notes "SKIP " r "\n"
				}
			} else if ($0 ~ /^ok/) {
				pass++
			} else {
				fail++; notes = notes "FAIL " $0 "\n"
			}
			pending = ""
			next
		}
		/^1\.\.[0-9]+/ { split($0, a, /\.\./); plan += a[2] + 0 }
		END { printf "%d %d %d %d\n%s", pass, fail, skip, plan, notes }
	' "$log")
	read -r pass fail skip plan <<<"$(head -n1 <<<"$summary")"
	notes=$(tail -n +2 <<<"$summary")
	seen=$((pass + fail + skip))
	if [ "$plan" -gt "$seen" ]; then
		notes+=$'\n'"FAIL $((plan - seen)) results missing (plan $plan, saw $seen)"
		fail=$((fail + plan - seen))
	fi
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			notes+=$'\n'"FAIL timed out after ${SUITE_TIMEOUT}s"
		else
			notes+=$'\n'"FAIL suite exited with status $rc"
		fi
		fail=$((fail + 1))
	fi
	if [ "$seen" -eq 0 ] && [ "$fail" -eq 0 ]; then
		notes+=$'\n'"FAIL suite reported no results"
		fail=1
	fi

	if [ "$fail" -gt 0 ]; then
		printf 'FAIL  %-28s %d passed, %d failed, %d skipped (%ss)\n' "$name" "$pass" "$fail" "$skip" "$secs"
		failed_suites+=("$name")
	else
		printf 'PASS  %-28s %d passed, %d skipped (%ss)\n' "$name" "$pass" "$skip" "$secs"
	fi
	if [ -n "$notes" ]; then
		grep -v '^$' <<<"$notes" | sed 's/^/        /'
	fi
	if [ "$fail" -gt 0 ]; then
		echo "        --- last lines of $log:"
		tail -n 15 "$log" | sed 's/^/        | /'
	fi
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
done

if [ ${#failed_suites[@]} -gt 0 ]; then
	echo "failed suites: ${failed_suites[*]} (logs in $LOGDIR)"
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
