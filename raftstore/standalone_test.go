package raftstore

import (
	"context"
	"fmt"
	"testing"
)

// TestStandaloneSurvivesIdentityChange reopens a standalone store under a
// new node ID and address (a host whose IP or port changed): it must come up
// as leader with every acknowledged write, disk buckets included (before and
// after a snapshot), and accept new ones.
func TestStandaloneSurvivesIdentityChange(t *testing.T) {
	for _, snapshot := range []bool{false, true} {
		t.Run(fmt.Sprint("snapshot=", snapshot), func(t *testing.T) {
			log := testLogger(t)
			dir := t.TempDir()
			cfg := testConfig(t, log, dir)
			cfg.NodeID, cfg.Standalone, cfg.DiskBuckets = "10.0.0.1:8848", true, []string{"h"}
			s, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Apply(context.Background(), Batch{Ops: []Op{put("b", "k", "v"), put("h", "k", "hv")}}); err != nil {
				t.Fatal(err)
			}
			if snapshot {
				if err := s.Snapshot(); err != nil {
					t.Fatal(err)
				}
				mustApply(t, s, Batch{Ops: []Op{put("h", "k2", "after")}})
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// the same identity first (a plain restart), then a new one
			for _, id := range []string{"10.0.0.1:8848", "10.0.0.2:8848"} {
				cfg2 := testConfig(t, log, dir)
				cfg2.NodeID, cfg2.Standalone, cfg2.DiskBuckets = id, true, []string{"h"}
				s2, err := Open(cfg2)
				if err != nil {
					t.Fatalf("reopen as %s: %v", id, err)
				}
				if r, ok := s2.Get("b", "k"); !ok || string(r.Value) != "v" {
					t.Fatalf("%s: lost write: %v %q", id, ok, r.Value)
				}
				if r, ok := s2.Get("h", "k"); !ok || string(r.Value) != "hv" {
					t.Fatalf("%s: lost disk-bucket write: %v %q", id, ok, r.Value)
				}
				if r, ok := s2.Get("h", "k2"); snapshot && (!ok || string(r.Value) != "after") {
					t.Fatalf("%s: lost disk-bucket write after the snapshot: %v %q", id, ok, r.Value)
				}
				if _, err := s2.Apply(context.Background(), Batch{Ops: []Op{put("b", "k2", "v2")}}); err != nil {
					t.Fatalf("%s: write after reopen: %v", id, err)
				}
				if err := s2.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
