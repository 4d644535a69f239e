//go:build !linux

package raftstore

const (
	pageOut = 0
	dropNow = 0
)

// dropMappedPages is a no-op off Linux.
func dropMappedPages(string, int) {}
