package raftstoretest

import (
	"context"
	"testing"

	"github.com/nacosd/nacosd/raftstore"
)

func TestNewAndRestart(t *testing.T) {
	t.Parallel()
	cfg := Config(t, t.TempDir())
	s := Open(t, cfg)
	if !s.IsLeader() {
		t.Fatal("not leader after Open")
	}
	idx, err := s.Apply(context.Background(), raftstore.Batch{Ops: []raftstore.Op{{Kind: raftstore.OpPut, Bucket: "b", Key: "k", Value: []byte("v")}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := Open(t, cfg)
	if r, ok := s2.Get("b", "k"); !ok || r.Rev != idx || string(r.Value) != "v" {
		t.Errorf("after restart: %+v %v", r, ok)
	}
	if New(t).Len("b") != 0 {
		t.Error("New store not empty")
	}
}
