#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# xrayfdr-ctl against the loaded module, in the guest: every command's
# output and exit status, --json, and its messages when a request is
# refused or the module is missing.  TAP on stdout.
set -u
CTL=${CTL:-xrayfdr-ctl}
n=0
fails=0
out=/tmp/ctl.out
err=/tmp/ctl.err

# check DESCRIPTION EXPECTED-STATUS PATTERN-IN-STDOUT-OR-STDERR -- CTL ARGS...
check() {
	desc=$1 want=$2 pattern=$3
	shift 4
	n=$((n + 1))
	"$CTL" "$@" >"$out" 2>"$err"
	got=$?
	if [ "$got" -eq "$want" ] && cat "$out" "$err" | grep -q -- "$pattern"; then
		echo "ok $n - $desc"
		# the host checks that every --json answer parses
		case "$1" in --json) sed 's/^/# json: /' "$out" ;; esac
	else
		echo "not ok $n - $desc"
		echo "# xrayfdr-ctl $*: status $got (wanted $want), looked for '$pattern' in:"
		sed 's/^/#   /' "$out" "$err"
		fails=$((fails + 1))
	fi
}

echo "TAP version 13"
echo "1..45"
check "status prints the module's state" 0 "xray_fdr ABI 1" -- status
check "status --json is one object" 0 '^{"abi_version":1,.*"tsc":{"khz":[0-9]*,.*"config":{.*},"retained_expired":[0-9]*,"users":\[.*],"users_omitted":[0-9]*}$' -- --json status
check "config shows the limits" 0 "KiB per session" -- config
check "config --json" 0 '"max_sessions":64' -- --json config
check "config rejects an out-of-range value" 1 "out of range" -- config --max-sessions 0
check "config sets a value" 0 "65 sessions" -- config --max-sessions 65
check "config sets it back" 0 "64 sessions" -- config --max-sessions 64
check "config --sched-records wants on or off" 2 "on or off" -- config --sched-records maybe
# The per-user limits and the admin reserves: the module parameters hold
# the live values (config writes the same variables), which status must
# show; config changes them, then puts them back.
param() { cat "/sys/module/xray_fdr/parameters/$1"; }
us=$(param max_user_sessions) ukb=$(param max_user_kb) ur=$(param max_user_retained)
rs=$(param admin_reserve_sessions) rkb=$(param admin_reserve_kb)
rr=$(param admin_reserve_retained) age=$(param retained_max_age)
check "status shows the per-user limits" 0 "^per user    $ukb KiB, $us sessions, $ur kept" -- status
check "status shows the admin reserve" 0 "^reserve     $rkb KiB, $rs sessions, $rr kept for CAP_SYS_ADMIN" -- status
check "status shows the expiry of users' retained sessions" 0 "^expiry      a user's retained session is freed $age s after" -- status
check "status counts the expired sessions" 0 "^sessions    [0-9]* open, [0-9]* retained, [0-9]* freed at their maximum age" -- status
check "config sets the keep reserve and the maximum age" 0 "\"admin_reserve_retained\":$((rr + 1)),\"retained_max_age\":0," -- \
	--json config --admin-reserve-retained $((rr + 1)) --retained-max-age 0
check "config without a maximum age says so" 0 "^expiry      none" -- config
check "config puts them back" 0 "\"admin_reserve_retained\":$rr,\"retained_max_age\":$age," -- \
	--json config --admin-reserve-retained "$rr" --retained-max-age "$age"
check "config --json has the new limits" 0 "\"max_user_sessions\":$us,\"max_user_kb\":$ukb,\"max_user_retained\":$ur,\"admin_reserve_sessions\":$rs,\"admin_reserve_kb\":$rkb," -- --json config
check "status without sessions has no user" 0 "^users       none with sessions" -- status
check "status --json without sessions" 0 '"users":\[],"users_omitted":0}$' -- --json status
check "config sets the per-user limits and reserves" 0 "\"max_user_sessions\":$((us + 1)),\"max_user_kb\":65536,\"max_user_retained\":$((ur + 1)),\"admin_reserve_sessions\":$((rs + 1)),\"admin_reserve_kb\":1024," -- \
	--json config --max-user-sessions $((us + 1)) --max-user-kb 65536 \
	--max-user-retained $((ur + 1)) --admin-reserve-sessions $((rs + 1)) \
	--admin-reserve-kb 1024
check "config sets them back" 0 "^per user    $ukb KiB, $us sessions, $ur kept" -- \
	config --max-user-sessions "$us" --max-user-kb "$ukb" --max-user-retained "$ur" \
	--admin-reserve-sessions "$rs" --admin-reserve-kb "$rkb"
check "config rejects a per-user limit out of range" 1 "out of range" -- config --max-user-kb 63

# A session held by this shell: fd 3 on /dev/xrayfdr (no geometry).
exec 3<>/dev/xrayfdr
id=$("$CTL" --json list | sed -n 's/.*{"id":\([0-9]*\),"pid":'$$',.*/\1/p')
if [ -n "$id" ]; then
	n=$((n + 1)); echo "ok $n - list shows the shell's session ($id)"
else
	n=$((n + 1)); echo "not ok $n - list shows the shell's session"; fails=$((fails + 1))
	"$CTL" --json list | sed 's/^/# /'
	id=999999
fi
check "list prints a table" 0 "^ *$id .*new" -- list
check "status prints a table of the users' use" 0 '^users  *UID  *SESSIONS  *KEPT  *MEMORY$' -- status
check "status shows root's use: 1 session, none kept, no memory" 0 '^  *0  *1  *0  *0 KiB$' -- status
check "status --json shows root's use" 0 '"users":\[{"uid":0,"sessions":1,"retained":0,"bytes":0}]' -- --json status
check "list --json" 0 '"comm":"test_ctl.sh","state":"new"' -- --json list
check "start without rings explains" 1 "no rings yet" -- start "$id"
check "keep on" 0 "kept after its process exits" -- keep "$id"
check "status counts root's kept session" 0 '^  *0  *1  *1  *0 KiB$' -- status
check "keep off" 0 "freed when its process exits" -- keep "$id" off
check "keep --json" 0 '{"session":'"$id"',"keep":true}' -- --json keep "$id" on
check "drop of an open session explains" 1 "still open by its process" -- drop "$id"
check "stop of an unknown session" 1 "no such session" -- stop 999999

# the same requests from an unprivileged user
nobody() { # description expected-status pattern -- args
	desc=$1 want=$2 pattern=$3
	shift 4
	n=$((n + 1))
	su -s /bin/sh nobody -c "$(command -v "$CTL") $*" >"$out" 2>"$err"
	got=$?
	if [ "$got" -eq "$want" ] && cat "$out" "$err" | grep -q -- "$pattern"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		echo "# as nobody: xrayfdr-ctl $*: status $got (wanted $want), looked for '$pattern' in:"
		sed 's/^/#   /' "$out" "$err"
		fails=$((fails + 1))
	fi
}
nobody "nobody may read the status" 0 "xray_fdr ABI 1" -- status
nobody "nobody may not change the limits" 1 "permission denied: needs CAP_SYS_ADMIN" -- config --max-sessions 10
nobody "nobody may not start root's session" 1 "belongs to another user" -- start "$id"
nobody "nobody does not see root's session" 0 "no sessions" -- list
nobody "nobody does not see root's use" 0 "none of yours with sessions" -- status
# a session of nobody's own, past max-user-retained: keep is refused
"$CTL" config --max-user-retained 0 >/dev/null
n=$((n + 1))
su -s /bin/sh nobody -c 'exec 3<>/dev/xrayfdr || exit 9
	id=$('"$(command -v "$CTL")"' --json list | sed -n "s/.*{\"id\":\([0-9]*\),.*/\1/p")
	'"$(command -v "$CTL")"' keep "$id"' >"$out" 2>"$err"
got=$?
"$CTL" config --max-user-retained "$ur" >/dev/null
if [ "$got" -eq 1 ] && grep -q "reached a per-user limit" "$err"; then
	echo "ok $n - keep past max-user-retained explains (as nobody)"
else
	echo "not ok $n - keep past max-user-retained explains (as nobody): status $got"
	sed 's/^/#   /' "$out" "$err"
	fails=$((fails + 1))
fi
exec 3>&-

check "a session id must be a number" 2 "not a session id" -- start abc
check "a command needs its id" 2 "usage: xrayfdr-ctl freeze ID" -- freeze
check "unknown command" 2 "not a command" -- frobnicate
check "--help" 0 "Usage: xrayfdr-ctl" -- --help

rmmod xray_fdr
check "without the module, status says so" 1 "module is not loaded" -- status
insmod /lib/modules/xray_fdr.ko
[ "$fails" -eq 0 ]
