#!/bin/sh
# Fleet cron with `leasewrap once`: every host's crontab fires this at
# 02:00; the report runs on exactly one host per date (the first to claim
# the key), the others replay its exit code without running it. If the
# running host dies, its claim expires with its lease (TTL) and a host
# whose cron retries (e.g. at 02:30) runs it.
#
#   0,30 2 * * * /usr/local/bin/fleet-cron.sh
set -eu
: "${ETCDCTL_ENDPOINTS:=https://etcd-1:2379,https://etcd-2:2379,https://etcd-3:2379}"
export ETCDCTL_ENDPOINTS
exec leasewrap once run "nightly-report-$(date +%F)" \
  --cacert /etc/leasewrap/ca.pem --cert /etc/leasewrap/client.pem --key /etc/leasewrap/client-key.pem \
  --wait 10m -- /usr/local/bin/nightly-report
