# Shared by etcd/scripts/*.sh and examples/etcd/demo.sh: start Debian's etcd
# on free loopback ports in a temporary directory. Sets EP (client URL),
# EPID and T (the directory); etcd_stop stops it and removes T.

free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 20000 ))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo $p; return; fi
  done
  echo "no free port" >&2; return 1
}

etcd_start() {
  local cp pp
  cp=$(free_port); pp=$(free_port)
  [ "$cp" != "$pp" ] || pp=$(free_port)
  EP=http://127.0.0.1:$cp
  T=$(mktemp -d)
  etcd --name lw --data-dir "$T/data" \
    --listen-client-urls "$EP" --advertise-client-urls "$EP" \
    --listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
    --initial-cluster "lw=http://127.0.0.1:$pp" >"$T/etcd.log" 2>&1 &
  EPID=$!
  for _ in $(seq 1 100); do
    ETCDCTL_API=3 etcdctl --endpoints "$EP" endpoint health >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  cat "$T/etcd.log" >&2
  echo "etcd not healthy on $EP" >&2
  return 1
}

etcd_stop() {
  if [ -n "${EPID:-}" ]; then kill "$EPID" 2>/dev/null || true; wait "$EPID" 2>/dev/null || true; fi
  [ -z "${T:-}" ] || rm -rf "$T"
}
