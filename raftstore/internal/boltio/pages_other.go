//go:build !linux

package boltio

// DropMappedPages is a no-op off Linux.
func DropMappedPages(string) {}
