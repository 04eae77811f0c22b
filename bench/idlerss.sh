#!/usr/bin/env bash
# Idle RSS of a holder of each local kind: the VmRSS of every process
# leasewrap adds (itself and any helper; the job, a `sleep`, left out),
# read 3 s after `KIND run ... -- sleep 5` started. Prints kB (KiB) per
# kind and run.
#   usage: bench/idlerss.sh LEASEWRAP_BINARY [RUNS]   (RUNS defaults to 3)
set -euo pipefail
bin=$1
runs=${2:-3}
rss() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
for kind in flock claim session reserve; do
	for _ in $(seq "$runs"); do
		d=$(mktemp -d)
		case $kind in
		flock) args=(flock run "$d/f.lock") ;;
		claim) args=(claim run bench:k1 --root "$d/claims") ;;
		session) args=(session run 5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42 --root "$d/s" --epoch 6) ;;
		reserve) args=(reserve run key1 --home "$d/home") ;;
		esac
		"$bin" -q "${args[@]}" -- sleep 5 &
		p=$!
		sleep 3
		total=$(rss "$p")
		for c in $(cat /proc/"$p"/task/*/children); do
			[ "$(cat /proc/"$c"/comm)" = sleep ] || total=$((total + $(rss "$c")))
		done
		echo "$kind $total kB"
		wait "$p"
		rm -rf "$d"
	done
done
