#!/bin/sh
# Container entrypoint: leasewrap is PID 1. It reaps orphans like tini,
# forwards SIGTERM from `docker stop` to the daemon, and owns the session
# for exactly as long as the daemon runs.
#
#   ENTRYPOINT ["/entrypoint.sh"]
#   CMD ["bcoded", "--serve"]
#
# SESSION_ID and SESSION_ROOT come from the container's environment.
set -eu
exec leasewrap --log-format json session run "$SESSION_ID" \
	--root "${SESSION_ROOT:-/var/lib/bcode}" --epoch "${WRITER_EPOCH:-6}" \
	--instance "${HOSTNAME:-container}" --kill-grace 20s \
	-- "$@"
