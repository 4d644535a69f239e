// Package boltio holds what raftstore's two bolt files (the raft log,
// raft.db, and the disk buckets, fsm.db) share: reads guarded against a
// damaged file's faults, and the release of their mapped pages.
package boltio

import (
	"fmt"
	"runtime/debug"
)

// Guarded runs fn on its own goroutine with faults turned into panics and
// every panic into an error: bolt reads pages through mmap, and a damaged
// page pointer faults or panics inside bolt.
func Guarded(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		debug.SetPanicOnFault(true)
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("%v", r)
			}
		}()
		done <- fn()
	}()
	return <-done
}
