package raftstore

import (
	"fmt"
	"log/slog"
	"net"
	"time"
)

// Config configures Open. Start from DefaultConfig; zero durations mean
// the default.
type Config struct {
	// Dir is the data directory. Open creates it if needed and keeps the
	// raft log and stable store in <Dir>/raft.db (bolt) and snapshots in
	// <Dir>/snapshots.
	Dir string
	// NodeID is the raft server ID, stable across restarts (e.g.
	// "127.0.0.1:8848").
	NodeID string
	// BindAddr is the raft TCP listen address, e.g. "127.0.0.1:7848";
	// tests use "127.0.0.1:0".
	BindAddr string
	// AdvertiseAddr is the address peers dial; empty means the bound
	// address (which must then not be unspecified like 0.0.0.0).
	AdvertiseAddr string
	// Bootstrap makes Open bootstrap a single-voter cluster of this node
	// when the directory holds no raft state yet. Standalone nacosd sets
	// it; a node that will be added to an existing cluster does not.
	Bootstrap bool
	// Peers, with Bootstrap, is the initial voter set of a multi-node
	// cluster (this node included). Every member bootstraps with the same
	// list, so their first log entries agree (hashicorp/raft's "bootstrap
	// every server with an identical configuration"); later changes go
	// through AddVoter and RemoveServer on the leader. Empty: this node
	// alone.
	Peers []Peer
	// Standalone pins the cluster to this one node: when the stored
	// configuration is not exactly this node (NodeID and address) as the
	// only voter, for example after the host's IP or port changed, Open
	// rewrites it with raft.RecoverCluster instead of waiting forever for
	// an election it cannot win. Never set it on a member of a real cluster.
	Standalone bool

	// ApplyTimeout bounds how long Apply, AddVoter and RemoveServer wait
	// for raft to accept the write (default 10s).
	ApplyTimeout time.Duration
	// OpenTimeout bounds how long Open waits, on a one-node cluster, for
	// leadership and for the log to be replayed (default 30s).
	OpenTimeout time.Duration
	// SnapshotThreshold is the number of log entries since the last
	// snapshot that triggers a new one (0 = raft default, 8192).
	SnapshotThreshold uint64
	// SnapshotInterval is how often raft checks SnapshotThreshold
	// (0 = raft default, 120s).
	SnapshotInterval time.Duration
	// TrailingLogs is how many log entries are kept after a snapshot, so
	// slow followers can catch up without a snapshot (0 = raft default,
	// 10240).
	TrailingLogs uint64
	// SnapshotRetain is how many snapshots are kept on disk (0 = 2).
	SnapshotRetain int
	// SnapshotBytes is how many bytes of log entries applied since the
	// last snapshot trigger a new one, whatever their count (0 = 16 MiB);
	// when the last snapshot was larger, its size is the trigger, so a
	// large state is not rewritten for every few MiB of writes. After it at
	// most a quarter of SnapshotBytes is kept as trailing log (and never
	// more than TrailingLogs entries): the log on disk stays bounded by
	// bytes.
	SnapshotBytes uint64
	// CloseSnapshotBytes: Close takes a snapshot when at least this many
	// bytes of log were applied since the last one (0 = 1 MiB, negative =
	// never), so the next start restores it instead of reading, checking
	// and replaying that log (a kill -9 still replays).
	CloseSnapshotBytes int64

	// HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout and
	// CommitTimeout are raft's timings (0 = raft defaults: 1s, 1s, 500ms,
	// 50ms). Tests use about 50ms. LeaderLeaseTimeout must not exceed
	// HeartbeatTimeout, and ElectionTimeout must not be below it.
	HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout, CommitTimeout time.Duration

	// DiskBuckets are buckets kept in <Dir>/fsm.db instead of memory (large,
	// rarely read data such as config history): Get, Scan and Len read the
	// file, Scan goes in key order, and batches may not put conditions on
	// them. They are in snapshots like the others (package cold).
	DiskBuckets []string

	// WriteIDKeep is how long the id of a write made with a write id
	// (WithWriteID) is kept, so that a copy of it sent again applies once
	// (0 = 2 minutes; the leader deletes expired ids every quarter of it).
	WriteIDKeep time.Duration

	// Logger receives the store's and raft's logs; nil discards them.
	Logger *slog.Logger
}

// Peer is a raft server: its ID (the member address, ip:port) and raft
// address (ip:raftPort).
type Peer struct {
	ID, Addr string
}

// DefaultConfig returns the production defaults. Dir and NodeID must still
// be set.
func DefaultConfig() Config {
	return Config{
		BindAddr:       "127.0.0.1:7848",
		ApplyTimeout:   10 * time.Second,
		OpenTimeout:    30 * time.Second,
		SnapshotRetain: 2,
		SnapshotBytes:  16 << 20,
	}
}

// defaultTrailingLogs is raft's default TrailingLogs.
const defaultTrailingLogs = 10240

// withDefaults fills zero fields that have a raftstore-level default.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.ApplyTimeout == 0 {
		c.ApplyTimeout = d.ApplyTimeout
	}
	if c.OpenTimeout == 0 {
		c.OpenTimeout = d.OpenTimeout
	}
	if c.SnapshotRetain == 0 {
		c.SnapshotRetain = d.SnapshotRetain
	}
	if c.SnapshotBytes == 0 {
		c.SnapshotBytes = d.SnapshotBytes
	}
	if c.CloseSnapshotBytes == 0 {
		c.CloseSnapshotBytes = 1 << 20
	}
	if c.WriteIDKeep <= 0 {
		c.WriteIDKeep = 2 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports the first invalid field, naming the field and value.
func (c Config) Validate() error {
	if c.Dir == "" {
		return fmt.Errorf("raftstore: config: Dir must be set")
	}
	if c.NodeID == "" {
		return fmt.Errorf("raftstore: config: NodeID must be set")
	}
	for _, b := range c.DiskBuckets {
		if b == "" || b[0] == 0 {
			return fmt.Errorf("raftstore: config: DiskBuckets: invalid bucket name %q", b)
		}
	}
	bindHost, _, err := net.SplitHostPort(c.BindAddr)
	if err != nil {
		return fmt.Errorf("raftstore: config: BindAddr %q: %w", c.BindAddr, err)
	}
	if ip := net.ParseIP(bindHost); (bindHost == "" || ip != nil && ip.IsUnspecified()) && c.AdvertiseAddr == "" {
		return fmt.Errorf("raftstore: config: BindAddr %q binds all interfaces: set AdvertiseAddr", c.BindAddr)
	}
	if c.AdvertiseAddr != "" {
		host, _, err := net.SplitHostPort(c.AdvertiseAddr)
		if err != nil {
			return fmt.Errorf("raftstore: config: AdvertiseAddr %q: %w", c.AdvertiseAddr, err)
		}
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			return fmt.Errorf("raftstore: config: AdvertiseAddr %q: host must be a specific IP address", c.AdvertiseAddr)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"ApplyTimeout", c.ApplyTimeout},
		{"OpenTimeout", c.OpenTimeout},
		{"SnapshotInterval", c.SnapshotInterval},
		{"HeartbeatTimeout", c.HeartbeatTimeout},
		{"ElectionTimeout", c.ElectionTimeout},
		{"LeaderLeaseTimeout", c.LeaderLeaseTimeout},
		{"CommitTimeout", c.CommitTimeout},
	} {
		if d.v < 0 {
			return fmt.Errorf("raftstore: config: %s %v must not be negative", d.name, d.v)
		}
	}
	if len(c.Peers) > 0 {
		self := false
		seen := map[string]bool{}
		for _, p := range c.Peers {
			if p.ID == "" || p.Addr == "" {
				return fmt.Errorf("raftstore: config: Peers entry %+v needs an ID and an address", p)
			}
			if seen[p.ID] {
				return fmt.Errorf("raftstore: config: Peers lists %s twice", p.ID)
			}
			seen[p.ID] = true
			self = self || p.ID == c.NodeID
		}
		if !self {
			return fmt.Errorf("raftstore: config: Peers does not include this node %s", c.NodeID)
		}
		if c.Standalone {
			return fmt.Errorf("raftstore: config: Peers and Standalone exclude each other")
		}
	}
	if c.SnapshotRetain < 0 {
		return fmt.Errorf("raftstore: config: SnapshotRetain %d must not be negative", c.SnapshotRetain)
	}
	rc := c.raftTimings()
	if rc.heartbeat < 5*time.Millisecond {
		return fmt.Errorf("raftstore: config: HeartbeatTimeout %v must be at least 5ms", rc.heartbeat)
	}
	if rc.election < rc.heartbeat {
		return fmt.Errorf("raftstore: config: ElectionTimeout %v must be at least HeartbeatTimeout %v", rc.election, rc.heartbeat)
	}
	if rc.lease < 5*time.Millisecond || rc.lease > rc.heartbeat {
		return fmt.Errorf("raftstore: config: LeaderLeaseTimeout %v must be between 5ms and HeartbeatTimeout %v", rc.lease, rc.heartbeat)
	}
	if rc.commit < time.Millisecond {
		return fmt.Errorf("raftstore: config: CommitTimeout %v must be at least 1ms", rc.commit)
	}
	return nil
}

type timings struct {
	heartbeat, election, lease, commit time.Duration
}

// raftTimings resolves zero timings to raft's defaults.
func (c Config) raftTimings() timings {
	t := timings{time.Second, time.Second, 500 * time.Millisecond, 50 * time.Millisecond}
	if c.HeartbeatTimeout > 0 {
		t.heartbeat = c.HeartbeatTimeout
	}
	if c.ElectionTimeout > 0 {
		t.election = c.ElectionTimeout
	}
	if c.LeaderLeaseTimeout > 0 {
		t.lease = c.LeaderLeaseTimeout
	} else if t.lease > t.heartbeat {
		// Only the heartbeat was shortened: keep the lease valid.
		t.lease = t.heartbeat
	}
	if c.CommitTimeout > 0 {
		t.commit = c.CommitTimeout
	}
	return t
}
