#!/bin/sh
# Makes examples/upgrade-rehearsal/prod-small.yaml, the snapshot upgrade-rehearsal.yaml clones:
# a kubesim cluster shaped like a small production one
# (prod-small-cluster.yaml), the 20 workloads of workloads.yaml on it, every
# pod Running, then `kubesim snapshot export` of it. Run it again after
# changing either file (`make prod-small` builds kubesim and does): the cluster
# lives in a kubesim home and kubeconfig of its own, deleted at the end.
set -eu
here=$(dirname "$0")
kubesim=$(realpath "${KUBESIM:-$here/../../bin/kubesim}")
cd "$here"
home=$(mktemp -d /tmp/prod-small-XXXXXX)
export KUBESIM_HOME="$home" KUBECONFIG="$home/kubeconfig"
trap '"$kubesim" delete cluster --all >/dev/null 2>&1 || true; rm -rf "$home"' EXIT

"$kubesim" create cluster --name prod-small --config prod-small-cluster.yaml
"$kubesim" kubectl apply -f workloads.yaml >/dev/null
# 59 workload pods and a log agent on each of the 45 nodes.
want=104
for _ in $(seq 180); do
	running=$("$kubesim" kubectl get pods -A -l app --field-selector=status.phase=Running -o name | wc -l)
	[ "$running" -ge "$want" ] && break
	sleep 1
done
if [ "$running" -lt "$want" ]; then
	echo "only $running of $want pods Running after 3 minutes" >&2
	exit 1
fi
"$kubesim" snapshot export --context kubesim-prod-small --path "$home/prod-small.yaml"
{
	echo "# Made by examples/upgrade-rehearsal/make-prod-small.sh (make prod-small): edit its inputs, not this file."
	cat "$home/prod-small.yaml"
} >prod-small.yaml
