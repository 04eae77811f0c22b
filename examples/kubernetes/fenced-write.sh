#!/bin/sh
# A fenced write to a ConfigMap: the job holds `leasewrap kube run`, and its
# write succeeds only if no later holder has written (the ConfigMap's
# recorded fence is not above ours) and nobody wrote in between (the patch
# names the resourceVersion it read: a concurrent write makes it fail with
# a conflict). A holder paused past its Lease cannot overwrite the work of
# the holder that replaced it.
#
#   leasewrap kube run report -- ./fenced-write.sh report-state "$(date -Is)"
#
# Needs kubectl, and get/patch on the ConfigMap (create it once with
#   kubectl create configmap report-state --from-literal=fence=-1).
set -eu
cm=$1 value=$2
ns=${LEASEWRAP_KEY%%/*}
# One read: the version we decide on, and the fence recorded with it.
read -r rv stored <<EOF
$(kubectl get configmap "$cm" -n "$ns" -o 'jsonpath={.metadata.resourceVersion} {.data.fence}')
EOF
if [ "${stored:--1}" -gt "$LEASEWRAP_FENCE" ]; then
	echo "stale: fence $LEASEWRAP_FENCE, the ConfigMap was written under fence $stored; nothing written" >&2
	exit 76
fi
# A merge patch that names metadata.resourceVersion is applied only if the
# object is still at that version (409 Conflict otherwise).
patch=$(printf '{"metadata":{"resourceVersion":"%s"},"data":{"fence":"%s","holder":"%s","value":"%s"}}' \
	"$rv" "$LEASEWRAP_FENCE" "$LEASEWRAP_HOLDER" "$value")
kubectl patch configmap "$cm" -n "$ns" --type merge -p "$patch" >/dev/null ||
	{ echo "conflict or error: nothing written (read and decide again)" >&2; exit 75; }
echo "written under fence $LEASEWRAP_FENCE"
