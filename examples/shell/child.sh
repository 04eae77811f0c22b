#!/bin/sh
# A shell child that checks the lease leasewrap handed it before it works.
#
#   leasewrap claim run build:nightly --root /srv/jobs -- examples/shell/child.sh
#   leasewrap session run "$SID" --root /var/lib/bcode --epoch 6 -- examples/shell/child.sh
set -eu

if [ -z "${LEASEWRAP_KIND:-}" ]; then
	echo "child.sh: not started by leasewrap; refusing to run unprotected" >&2
	exit 2
fi
echo "child.sh: holding $LEASEWRAP_KIND '$LEASEWRAP_KEY' as $LEASEWRAP_HOLDER (leasewrap pid $LEASEWRAP_PID)"

# Kinds that hand over a descriptor: it must be open and carry a flock.
if [ -n "${LEASEWRAP_FD:-}" ]; then
	if ! grep -q '^lock:.*FLOCK' "/proc/self/fdinfo/$LEASEWRAP_FD" 2>/dev/null; then
		echo "child.sh: descriptor $LEASEWRAP_FD carries no lock; the lease is not held" >&2
		exit 3
	fi
	echo "child.sh: fd $LEASEWRAP_FD is locked: $(readlink "/proc/self/fd/$LEASEWRAP_FD")"
fi
[ -n "${LEASEWRAP_RUN_ID:-}" ] && echo "child.sh: run id $LEASEWRAP_RUN_ID"
[ -n "${LEASEWRAP_SESSION_ID:-}" ] && echo "child.sh: session $LEASEWRAP_SESSION_ID token $LEASEWRAP_LEASE_TOKEN"

# The work. Anything started from here inherits the lease descriptor, so
# a daemon left behind would keep the lease: do not background work here.
echo "child.sh: working"
exit 0
