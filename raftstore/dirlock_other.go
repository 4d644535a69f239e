//go:build !unix

package raftstore

// dirLock is a no-op where flock does not exist; bolt's own file lock
// still refuses a second store (after its timeout).
type dirLock struct{}

func lockDir(string) (*dirLock, error) { return &dirLock{}, nil }

func (*dirLock) release() {}
