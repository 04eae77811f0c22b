#!/usr/bin/env bash
# Lines of product code: the non-test .go files tracked by git in the root
# module's packages that `leasewrap` or an example links, outside the
# directories of the kinds with their own binaries (etcd/, kube/, pg/).
# Test helpers (packages only tests import) are not product. Per directory,
# then the total.
#   usage: bench/size.sh [-q]   (-q: the total only)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mod=$(go list -m)
mapfile -t dirs < <(go list -deps ./cmd/leasewrap ./examples/... |
	sed -n "s|^$mod/||p" | grep -Ev '^(etcd|kube|pg|bench)(/|$)' | sort -u)
declare -A linked
for d in "${dirs[@]}"; do linked[$d]=1; done
declare -A lines
total=0
while IFS= read -r f; do
	d=$(dirname "$f")
	[ -n "${linked[$d]:-}" ] || continue
	n=$(wc -l <"$f")
	lines[$d]=$((${lines[$d]:-0} + n))
	total=$((total + n))
done < <(git ls-files '*.go' | grep -v '_test\.go$')
if [ "${1:-}" != -q ]; then
	for d in "${!lines[@]}"; do printf '%6d %s\n' "${lines[$d]}" "$d"; done | sort -n
fi
echo "$total product lines"
