#!/bin/sh
# The 9-pod database ring of issue 11 across three kubesim clusters: each
# pod holds three shards, each DPDB keeps 4 of the 5 pods that share a
# pod's shards available, wherever they run. Usage: ./ring.sh [kubesim]
set -eu
KUBESIM=${1:-kubesim}
clusters="red blue green"

pod() { printf 'database-%02d-%02d-%02d' $(($1 % 9 * 10)) $((($1 + 1) % 9 * 10)) $((($1 + 2) % 9 * 10)); }
cluster() { set -- $clusters $(( $1 % 3 )); eval "echo \${$(( $4 + 1 ))}"; }

for c in $clusters; do "$KUBESIM" create cluster --name "$c" --nodes 1; done
"$KUBESIM" federate $clusters

for i in 0 1 2 3 4 5 6 7 8; do
  name=$(pod "$i")
  {
    cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $name, labels: {ring: $name}}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{name: db, image: cassandra}]
---
apiVersion: policy.kubesim.io/v1alpha1
kind: DistributedPodDisruptionBudget
metadata: {name: $name}
spec:
  selector: {matchLabels: {ring: $name}}
  minAvailable: 4
  federation:
YAML
    for d in 7 8 1 2; do  # i-2, i-1, i+1, i+2 around the ring
      j=$(( (i + d) % 9 ))
      echo "  - {name: $(pod "$j"), cluster: $(cluster "$j")}"
    done
  } | "$KUBESIM" kubectl --name "$(cluster "$i")" apply -f -
done

for c in $clusters; do
  "$KUBESIM" kubectl --name "$c" wait --for=jsonpath='{.status.disruptionsAllowed}'=1 dpdb --all --timeout=120s
done
for c in $clusters; do echo "== $c"; "$KUBESIM" kubectl --name "$c" get dpdb,pdb; done
