package raftstore

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
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

func TestDeleteRangeInChunks(t *testing.T) {
	t.Parallel()
	bs, err := raftboltdb.NewBoltStore(filepath.Join(t.TempDir(), "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	ls := &logStore{BoltStore: bs}
	var logs []*raft.Log
	for i := uint64(1); i <= 10000; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte("x")})
	}
	if err := ls.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]uint64{{1, 4500}, {4501, 4501}, {4502, 4502 + deleteChunk}} {
		if err := ls.DeleteRange(r[0], r[1]); err != nil {
			t.Fatal(err)
		}
		first, _ := ls.FirstIndex()
		if first != r[1]+1 {
			t.Fatalf("after DeleteRange(%d, %d): first index %d", r[0], r[1], first)
		}
	}
	if last, _ := ls.LastIndex(); last != 10000 {
		t.Fatalf("last index %d", last)
	}
	var l raft.Log
	if err := ls.GetLog(4500+deleteChunk+3, &l); err != nil || string(l.Data) != "x" {
		t.Fatalf("entry after the range: %v %q", err, l.Data)
	}
}
