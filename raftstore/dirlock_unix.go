//go:build unix

package raftstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// dirLock is the exclusive lock of a store's directory (flock on
// <dir>/lock), taken before anything in the directory is read: a second
// nacosd on the same directory is told who holds it at once, and never
// reads raft.db while the holder writes it.
type dirLock struct{ f *os.File }

func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("raftstore: lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		content, _ := io.ReadAll(io.LimitReader(f, 64))
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockedBy(dir, content)
		}
		return nil, fmt.Errorf("raftstore: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

// release drops the lock (the file stays: removing it would race with a
// process that opened it to lock it).
func (l *dirLock) release() {
	if l != nil && l.f != nil {
		_ = l.f.Close()
	}
}
