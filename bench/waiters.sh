#!/usr/bin/env bash
# What N waiters on one lock cost: N `leasewrap flock run --wait` waiters,
# then N `flock -w` waiters, each behind a flock(1) holder. For each: the
# processes and threads of the waiters and their descendants, their PSS
# (smaps_rollup), the CPU they use while idle, and the time from the
# holder's release until all N have run `true` and exited.
#   usage: bench/waiters.sh [N] [LEASEWRAP_BINARY]   (N defaults to 300;
#   LW_ARGS adds flags to the leasewrap waiters, e.g. "--job pgroup")
set -euo pipefail
n=${1:-300}
bin=${2:-leasewrap}
idle=${IDLE_SECONDS:-5}
tmp=$(mktemp -d)
pids=()
cleanup() {
	touch "$tmp"/go-* 2>/dev/null || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
hz=$(getconf CLK_TCK)

# tree PID...: the pids and all their descendants.
tree() {
	local p
	for p in "$@"; do
		[ -d "/proc/$p" ] || continue
		echo "$p"
		# shellcheck disable=SC2046
		tree $(cat /proc/"$p"/task/*/children 2>/dev/null)
	done
}

# ticks PID...: utime+stime of these processes, in clock ticks.
ticks() {
	local p s=0
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] || continue
		s=$((s + $(awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$p/stat")))
	done
	echo "$s"
}

measure() { # name, waiter command (the lock path is appended by run_waiter)
	local name=$1 lock=$tmp/$1.lock
	: >"$lock"
	flock -x "$lock" sh -c "touch $tmp/held-$name; while [ ! -e $tmp/go-$name ]; do sleep 0.05; done" &
	local holder=$!
	while [ ! -e "$tmp/held-$name" ]; do sleep 0.05; done
	local ino
	ino=$(stat -c %i "$lock")
	pids=()
	for _ in $(seq "$n"); do
		case $name in
		leasewrap) "$bin" -q flock run "$lock" --wait 10m ${LW_ARGS:-} -- true & ;;
		flock) flock -w 600 "$lock" true & ;;
		esac
		pids+=($!)
	done
	# All N blocked in flock(2): /proc/locks lists N waiters ("->") on the inode.
	until [ "$(grep -c -- "-> FLOCK .*:$ino " /proc/locks || true)" -ge "$n" ]; do sleep 0.2; done
	local all procs threads pss t0 t1
	mapfile -t all < <(tree "${pids[@]}")
	procs=${#all[@]}
	threads=$(for p in "${all[@]}"; do awk '/^Threads:/{print $2}' "/proc/$p/status" 2>/dev/null; done | awk '{s+=$1} END {print s}')
	pss=$(for p in "${all[@]}"; do awk '/^Pss:/{print $2}' "/proc/$p/smaps_rollup" 2>/dev/null; done | awk '{s+=$1} END {print s}')
	t0=$(ticks "${all[@]}")
	sleep "$idle"
	t1=$(ticks "${all[@]}")
	local start end
	start=$(date +%s%N)
	touch "$tmp/go-$name"
	wait "${pids[@]}"
	end=$(date +%s%N)
	wait "$holder" || true
	printf '| %s | %d | %d | %d | %.1f | %.1f | %.3f | %.2f |\n' "$name" "$n" "$procs" "$threads" \
		"$(echo "$pss / 1024" | bc -l)" "$(echo "$pss / 1024 / $n" | bc -l)" \
		"$(echo "($t1 - $t0) / $hz / $idle" | bc -l)" "$(echo "($end - $start) / 1000000000" | bc -l)"
}

echo "| waiters | N | processes | threads | PSS MiB | PSS MiB each | CPU cores idle | hand-over of all N, s |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
measure leasewrap
measure flock
