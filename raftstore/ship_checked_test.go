package raftstore

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// At start the verifier checks the newest snapshot's CRC, and raft's
// restore then opens the same snapshot without a second read for it; a
// state file changed after the check goes through raft's check again.
func TestOpenCheckedSnapshotReadsOnce(t *testing.T) {
	dir := t.TempDir()
	snaps, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	state := append([]byte{snapshotVersion}, "0123456789state"...)
	sink, err := snaps.Create(raft.SnapshotVersionMax, 10, 2, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write(state); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	v := &verifier{dir: dir, log: testLogger(t)}
	if damaged, err := v.verifySnapshots(); err != nil || len(damaged) > 0 || v.newest == nil {
		t.Fatalf("verify: %v %v %v", damaged, err, v.newest)
	}
	read := func(s *shipStore) ([]byte, error) {
		meta, rc, err := s.Open(v.newest.ID)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		if meta.Index != 10 || meta.Term != 2 {
			t.Fatalf("meta %+v", meta)
		}
		return io.ReadAll(rc)
	}
	s := &shipStore{FileSnapshotStore: snaps, dir: dir, log: testLogger(t)}
	s.checked.Store(&checkedSnapshot{meta: *v.newest, state: v.newestState})
	if got, err := read(s); err != nil || string(got) != string(state) {
		t.Fatalf("checked open: %q %v", got, err)
	}
	if s.checked.Load() != nil {
		t.Fatal("the checked snapshot is used once")
	}

	// changed after the check (same size, new time): raft's CRC catches it
	path := filepath.Join(dir, "snapshots", v.newest.ID, "state.bin")
	damaged := append([]byte{}, state...)
	damaged[len(damaged)-1] ^= 1
	if err := os.WriteFile(path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	later := v.newestState.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	s.checked.Store(&checkedSnapshot{meta: *v.newest, state: v.newestState})
	if got, err := read(s); err == nil {
		t.Fatalf("a state file changed after the check opened without a CRC check: %q", got)
	}
}
