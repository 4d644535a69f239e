package raftstore

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

func TestStorageErrorNamesCauseNotPath(t *testing.T) {
	cause := &fs.PathError{Op: "write", Path: "/secret/data/raft/raft.db", Err: syscall.ENOSPC}
	err := storageError("apply", cause)
	if !errors.Is(err, ErrStorage) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("%v: not ErrStorage and ENOSPC", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "no space left on device") || strings.Contains(msg, "/secret") {
		t.Fatalf("message %q", msg)
	}
	ls := &logStore{}
	ls.record(cause)
	if !isStorageErr(cause, ls.failure()) {
		t.Fatal("recorded failure not recognised")
	}
	ls.record(nil)
	if ls.failure() != nil {
		t.Fatal("failure kept after a successful write")
	}
}
