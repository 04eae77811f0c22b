#!/usr/bin/env bash
# Interoperability of `leasewrap lock` with the real `etcdctl lock` (Debian's
# etcd-server and etcd-client), in both directions, on a server this script
# starts on free loopback ports. Usage: interop.sh [LEASEWRAP]
#   LEASEWRAP: the binary serving `lock` (default bin/leasewrap-etcd).
# Exits non-zero on any failure, and when etcd or etcdctl is missing.
set -euo pipefail
LW=${1:-bin/leasewrap-etcd}
LW=$(cd "$(dirname "$LW")" && pwd)/$(basename "$LW")
for b in etcd etcdctl "$LW"; do
  command -v "$b" >/dev/null || { echo "interop: $b not found (apt-get install etcd-server etcd-client; make build)" >&2; exit 1; }
done
export ETCDCTL_API=3

. "$(dirname "$0")/lib.sh"
trap etcd_stop EXIT
etcd_start || exit 1
echo "interop: $(etcd --version | head -1) on $EP"

lw() { "$LW" lock run "$@"; }
fail() { echo "interop: FAIL: $*" >&2; exit 1; }
waitfile() { for _ in $(seq 1 100); do [ -e "$1" ] && return 0; sleep 0.1; done; fail "$1 not created within 10s"; }
now() { date +%s%N; }

# 1. etcdctl holds; leasewrap's try-lock is refused (75), its queued wait
#    runs only after etcdctl's command ended.
etcdctl --endpoints "$EP" lock interop -- sh -c "touch $T/e1.start; sleep 2; date +%s%N > $T/e1.end" &
BG=$!
waitfile "$T/e1.start"
set +e; lw interop --endpoints "$EP" --ttl 5s --kill-grace 1s -- true; rc=$?; set -e
[ "$rc" = 75 ] || fail "leasewrap try-lock while etcdctl holds: want exit 75, have $rc"
lw interop --endpoints "$EP" --ttl 5s --kill-grace 1s --wait 20s -- sh -c "date +%s%N > $T/l1.start"
wait "$BG"
[ "$(cat "$T/l1.start")" -gt "$(cat "$T/e1.end")" ] || fail "leasewrap ran before etcdctl's command ended"
echo "interop: ok: etcdctl holds -> leasewrap excluded, then queued after it"

# 2. leasewrap holds; etcdctl waits until leasewrap's command ended.
lw interop --endpoints "$EP" --ttl 5s --kill-grace 1s -- sh -c "touch $T/l2.start; sleep 2; date +%s%N > $T/l2.end" &
BG=$!
waitfile "$T/l2.start"
etcdctl --endpoints "$EP" lock interop -- sh -c "date +%s%N > $T/e2.start"
wait "$BG"
[ "$(cat "$T/e2.start")" -gt "$(cat "$T/l2.end")" ] || fail "etcdctl ran before leasewrap's command ended"
echo "interop: ok: leasewrap holds -> etcdctl waits for it"

# 3. The fencing token: a txn guarded by create(ETCD_LOCK_KEY) = LEASEWRAP_FENCE
#    succeeds while held, and fails once the lock is gone.
lw interop --endpoints "$EP" --ttl 5s --kill-grace 1s -- sh -c '
  printf "create(\"%s\") = \"%s\"\n\nput interop-fenced ok\n\n\n" "$ETCD_LOCK_KEY" "$LEASEWRAP_FENCE" |
    etcdctl --endpoints "$LEASEWRAP_ETCD_ENDPOINTS" txn > '"$T"'/txn.out
  echo "$ETCD_LOCK_KEY $LEASEWRAP_FENCE" > '"$T"'/token'
head -1 "$T/txn.out" | grep -qx SUCCESS || fail "fenced txn while holding: $(cat "$T/txn.out")"
read -r key fence < "$T/token"
out=$(printf 'create("%s") = "%s"\n\nput interop-fenced stale\n\n\n' "$key" "$fence" | etcdctl --endpoints "$EP" txn | head -1)
[ "$out" = FAILURE ] || fail "fenced txn after release: want FAILURE, have $out"
[ "$(etcdctl --endpoints "$EP" get --print-value-only interop-fenced)" = ok ] || fail "fenced value"
echo "interop: ok: LEASEWRAP_FENCE guards an etcdctl txn; a stale token is rejected"

# 4. The fenced-write example runs as documented.
lw interop --endpoints "$EP" --ttl 5s --kill-grace 1s -- "$(dirname "$0")/../../examples/etcd/fenced-write.sh" >/dev/null
etcdctl --endpoints "$EP" get --print-value-only billing/last-run | grep -q ' by leasewrap:' || fail "examples/etcd/fenced-write.sh did not write"
echo "interop: ok: examples/etcd/fenced-write.sh"

# 5. Nothing left behind.
left=$(etcdctl --endpoints "$EP" get --prefix --keys-only interop/ | grep -c . || true)
[ "$left" = 0 ] || fail "$left lock keys left under interop/"
echo "interop: all passed"
