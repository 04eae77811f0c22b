#!/bin/sh
# A fenced write: the job holds `leasewrap lock`, and every write it makes to
# etcd is a transaction that succeeds only while the lock key still exists
# with the create revision the job was given (LEASEWRAP_FENCE). A holder
# that was paused or partitioned past its lease cannot overwrite the work
# of the holder that replaced it: its transaction fails.
#
#   leasewrap lock run billing --endpoints "$EP" -- ./fenced-write.sh
set -eu
out=$(printf 'create("%s") = "%s"\n\nput billing/last-run "%s by %s"\n\n\n' \
  "$ETCD_LOCK_KEY" "$LEASEWRAP_FENCE" "$(date -Is)" "$LEASEWRAP_HOLDER" |
  etcdctl --endpoints "$LEASEWRAP_ETCD_ENDPOINTS" txn)
case $(printf '%s\n' "$out" | head -1) in
SUCCESS) echo "written under fence $LEASEWRAP_FENCE" ;;
*) echo "stale: the lock is no longer ours (fence $LEASEWRAP_FENCE); nothing written" >&2; exit 76 ;;
esac
