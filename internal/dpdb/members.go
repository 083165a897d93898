package dpdb

import (
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	policylisters "k8s.io/client-go/listers/policy/v1"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// member is one federation entry resolved: Cluster is "" for this cluster.
type member struct {
	Cluster, Namespace, Name string
}

func (m member) String() string {
	if m.Cluster == "" {
		return m.Namespace + "/" + m.Name
	}
	return m.Cluster + ":" + m.Namespace + "/" + m.Name
}

// resolveMembers resolves a DPDB's federation entries: a namespace
// defaults to the DPDB's, clusterName (this cluster's) to "".
func resolveMembers(d *policyv1alpha1.DistributedPodDisruptionBudget, clusterName string) []member {
	var ms []member
	for _, f := range d.Spec.Federation {
		m := member{Cluster: f.Cluster, Namespace: f.Namespace, Name: f.Name}
		if m.Namespace == "" {
			m.Namespace = d.Namespace
		}
		if m.Cluster == clusterName {
			m.Cluster = ""
		}
		ms = append(ms, m)
	}
	return ms
}

// indexKey is the member's key in the DPDB informer's member index.
func (m member) indexKey() string { return m.Cluster + "/" + m.Namespace + "/" + m.Name }

// syncFailedReason is the reason upstream's disruption controller gives
// when it could not count a PDB's pods: its status is then not current.
const syncFailedReason = "SyncFailed"

// observe reads a PDB's status. It is sure once the disruption controller
// has counted the PDB's pods, and unless its last count failed. A status
// behind the PDB's generation still counts: currentHealthy and
// expectedPods count pods, whatever the budget, and a child's spec
// changes with every change of its neighbours' health — waiting for the
// newest generation would close every budget of a federation in turn.
func observe(pdb *policyv1.PodDisruptionBudget) (Observation, string) {
	obs := Observation{Healthy: pdb.Status.CurrentHealthy, Expected: pdb.Status.ExpectedPods}
	if pdb.Status.ObservedGeneration == 0 {
		return obs, "the disruption controller has not counted its pods yet"
	}
	for _, c := range pdb.Status.Conditions {
		if c.Type == policyv1.DisruptionAllowedCondition && c.Reason == syncFailedReason {
			return obs, "the disruption controller could not count its pods: " + c.Message
		}
	}
	obs.Sure = true
	return obs, ""
}

// observeIn reads a member from a PDB lister.
func observeIn(lister policylisters.PodDisruptionBudgetLister, m member, where string) (Observation, string) {
	pdb, err := lister.PodDisruptionBudgets(m.Namespace).Get(m.Name)
	if apierrors.IsNotFound(err) {
		return Observation{}, fmt.Sprintf("PodDisruptionBudget %s/%s not found%s", m.Namespace, m.Name, where)
	}
	if err != nil {
		return Observation{}, err.Error()
	}
	return observe(pdb)
}
