//go:build !linux

package raftstore

// dropMappedPages is a no-op off Linux.
func dropMappedPages(string) {}
