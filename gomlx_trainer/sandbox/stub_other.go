//go:build !linux

package sandbox

import (
	"context"
	"errors"
)

func (p *Pool) isolation(level Level) Isolation { return Isolation{Level: level} }

func (p *Pool) runAt(context.Context, Config, Level, int, string) (Result, error) {
	return Result{}, errors.New("sandbox: only Linux is supported")
}

type workerCgroups struct{ workers [][]string }

func newWorkerCgroups(int, int) (*workerCgroups, error) {
	return nil, errors.New("sandbox: cgroups need Linux")
}

func (g *workerCgroups) close() {}

func removeStaleFolders() {}
