package kueuefit

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/clusterclock"
)

// Simulate asks a copy of the running cluster name what Kueue does with
// job, and deletes the copy. ctx bounds it: on a scaled clock, give it
// the real time the copy's start takes (clusterclock.Stretch).
func Simulate(ctx context.Context, p *cluster.Provider, name string, job *unstructured.Unstructured) (_ *Answer, err error) {
	wait := clusterclock.Stretch(3 * time.Minute)
	if deadline, ok := ctx.Deadline(); ok {
		wait = time.Until(deadline)
	}
	cfg, err := p.RESTConfig(name)
	if err != nil {
		return nil, err
	}
	if err := CheckKueue(cfg); err != nil {
		return nil, err
	}
	fork, err := p.Fork(ctx, name, wait)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, fork.Close()) }()
	forkCfg, err := fork.RESTConfig()
	if err != nil {
		return nil, err
	}
	return Ask(ctx, forkCfg, job)
}
