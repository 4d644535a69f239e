package raftstore

import (
	"context"
	"testing"
)

// TestStandaloneSurvivesIdentityChange reopens a standalone store under a
// new node ID and address (a host whose IP or port changed): it must come up
// as leader with every acknowledged write, and accept new ones.
func TestStandaloneSurvivesIdentityChange(t *testing.T) {
	log := testLogger(t)
	dir := t.TempDir()
	cfg := testConfig(t, log, dir)
	cfg.NodeID, cfg.Standalone = "10.0.0.1:8848", true
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(context.Background(), Batch{Ops: []Op{{Kind: OpPut, Bucket: "b", Key: "k", Value: []byte("v")}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cfg2 := testConfig(t, log, dir)
	cfg2.NodeID, cfg2.Standalone = "10.0.0.2:8848", true
	s2, err := Open(cfg2)
	if err != nil {
		t.Fatalf("reopen with a new identity: %v", err)
	}
	defer s2.Close()
	if r, ok := s2.Get("b", "k"); !ok || string(r.Value) != "v" {
		t.Fatalf("lost write: %v %q", ok, r.Value)
	}
	if _, err := s2.Apply(context.Background(), Batch{Ops: []Op{{Kind: OpPut, Bucket: "b", Key: "k2", Value: []byte("v2")}}}); err != nil {
		t.Fatalf("write after identity change: %v", err)
	}
}
