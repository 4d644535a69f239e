// Package raftstore is nacosd's CP store: a hashicorp/raft node whose
// replicated state is an in-memory, multi-bucket key/value map.
//
// Every write is one Batch of conditions and operations, applied
// atomically at one raft log index (the records' Rev). Domain packages
// (naming, config) keep their data in buckets, read it with Get and Scan,
// and follow changes with Watch. See DESIGN.md for the reasons.
//
// The raft log and stable store live in a bolt file (raft-boltdb/v2),
// snapshots in a file snapshot store, both under Config.Dir; peers talk
// over raft's TCP NetworkTransport. Standalone nacosd is a one-node
// cluster (Config.Bootstrap).
package raftstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/nacosd/nacosd/raftstore/internal/boltio"
)

// Store is a raft node and its key/value state. Reads (Get, Scan, Len)
// are served from local memory and never wait for raft; writes go through
// the leader's log. All methods are safe for concurrent use.
type Store struct {
	cfg    Config
	log    *slog.Logger
	fsm    *fsm
	raft   *raft.Raft
	trans  *raft.NetworkTransport
	stream *tcpStreamLayer
	bolt   *raftboltdb.BoltStore
	logs   *logStore  // bolt, remembering its last failed write
	locks  keyLocks   // per-key locks of Update
	dir    *dirLock   // the directory's lock (dirlock_unix.go)
	mark   *watermark // the applied index across restarts (watermark.go)

	compactor   *compactor    // size-triggered snapshots (compact.go)
	sweeperDone chan struct{} // closed when sweepWriteIDs ends (writeid.go)

	// writes that met raft's ErrLeadershipLost, and those whose outcome
	// could not be found out (outcome.go)
	lostApplies, lostUnresolved atomic.Uint64
	freshTerm                   atomic.Uint64 // the term whose barrier Update passed (update.go)
	opened                      time.Time     // when Open started raft (a follower's contact before any leader)

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// IsEmpty reports whether dir holds no raft state yet (no log file and no
// snapshot): a node opening it would bootstrap.
func IsEmpty(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, "raft.db")); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("raftstore: %w", err)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "snapshots"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("raftstore: %w", err)
	}
	return len(ents) == 0, nil
}

// Open opens (or creates) the store in cfg.Dir and starts the raft node.
// On an existing directory it returns only once the state is rebuilt from
// the latest snapshot and the log. On a one-node cluster it also waits for
// leadership, so the caller can write at once. On failure everything
// opened so far is closed again.
func Open(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Store{cfg: cfg, log: cfg.Logger, closed: make(chan struct{}), sweeperDone: make(chan struct{})}
	if err := s.open(); err != nil {
		s.shutdown()
		return nil, err
	}
	return s, nil
}

func (s *Store) open() error {
	cfg := s.cfg
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("raftstore: create dir %s: %w", cfg.Dir, err)
	}
	lock, err := lockDir(cfg.Dir)
	if err != nil {
		return err
	}
	s.dir = lock
	hl := newHclogAdapter(s.log, "raft")

	dbPath := filepath.Join(cfg.Dir, "raft.db")
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, cfg.SnapshotRetain, hl.Named("snapshot"))
	if err != nil {
		return fmt.Errorf("raftstore: open snapshot store %s: %w", filepath.Join(cfg.Dir, "snapshots"), err)
	}
	// a damaged directory is an error naming the file, not a panic (verify.go)
	v := &verifier{dir: cfg.Dir, dbPath: dbPath, log: s.log}
	// The newest snapshot's CRC check reads the whole file: it runs beside
	// raft.db's check and open. Errors are taken in that order (a damaged
	// raft.db's advice names the newest good snapshot).
	type snapCheck struct {
		damaged []string
		newest  *raft.SnapshotMeta
		head    snapHead
		state   os.FileInfo
		err     error
	}
	snapDone := make(chan snapCheck, 1)
	go func() {
		vs := &verifier{dir: cfg.Dir, dbPath: dbPath, log: s.log}
		d, err := vs.verifySnapshots()
		snapDone <- snapCheck{d, vs.newest, vs.newestHead, vs.newestState, err}
	}()
	boltErr := v.verifyBolt()
	var bs *raftboltdb.BoltStore
	if boltErr == nil {
		// A lock timeout turns "another process has the directory" into an
		// error instead of a hang.
		if err := boltio.Guarded(func() (err error) {
			bs, err = raftboltdb.New(raftboltdb.Options{Path: dbPath, BoltOptions: &bbolt.Options{Timeout: time.Second,
				// the freelist is rebuilt on open instead of written by every commit
				// (raft.db is bounded by the log's size, so the scan is short)
				NoFreelistSync: true}})
			return err
		}); err != nil {
			boltErr = fmt.Errorf("raftstore: open log store %s: %w", dbPath, err)
		}
	}
	sc := <-snapDone
	damagedSnaps := sc.damaged
	v.newest, v.newestHead, v.newestState = sc.newest, sc.head, sc.state
	if bs != nil {
		s.bolt = bs
	}
	if sc.err != nil {
		return sc.err
	}
	var damage *boltDamage
	if errors.As(boltErr, &damage) {
		return v.dbCorrupt(damage.problem)
	}
	if boltErr != nil {
		return boltErr
	}
	ls := &logStore{BoltStore: bs, path: dbPath}
	s.logs = ls
	if err := v.verifyLog(ls, damagedSnaps); err != nil {
		return err
	}

	var advertise net.Addr
	if cfg.AdvertiseAddr != "" {
		a, err := net.ResolveTCPAddr("tcp", cfg.AdvertiseAddr)
		if err != nil {
			return fmt.Errorf("raftstore: advertise address %s: %w", cfg.AdvertiseAddr, err)
		}
		advertise = a
	}
	stream, err := listenTCP(cfg.BindAddr, advertise)
	if err != nil {
		return fmt.Errorf("raftstore: listen %s: %w", cfg.BindAddr, err)
	}
	s.stream = stream
	// MaxRPCsInFlight 1: no pipelined replication. With raft's default (2)
	// the pipeline's channels are unbuffered, and when a follower answers
	// an AppendEntries with Success=false the pipeline's decoder exits while
	// the sender can still park on its next send: replication to that
	// follower stops for good while its heartbeats go on (so it never
	// calls an election), and the leader's shutdown hangs
	// (hashicorp/raft#612; seen here as a hung raft shutdown in a cluster
	// test). Synchronous replication batches as well on a LAN
	// (hashicorp/raft#541).
	//
	// The I/O timeout is 3 s (raft's examples use 10 s): a follower cut off
	// by a partition fails the leader's RPC within it, and the retries dial
	// anew with quick SYNs (transport.go), so the follower catches up
	// within a second of the heal instead of after the kernel's next SYN or
	// data retransmission, seconds later (the fault checker saw a healed
	// node serve 16 s old reads 2.9 s after the heal). Snapshots scale it
	// by their size.
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: stream, MaxPool: 3,
		Timeout: transportTimeout, Logger: hl.Named("transport"), MaxRPCsInFlight: 1})
	s.trans = trans

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	t := cfg.raftTimings()
	rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout, rc.CommitTimeout = t.heartbeat, t.election, t.lease, t.commit
	if cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = cfg.SnapshotThreshold
	}
	if cfg.SnapshotInterval > 0 {
		rc.SnapshotInterval = cfg.SnapshotInterval
	}
	if cfg.TrailingLogs > 0 {
		rc.TrailingLogs = cfg.TrailingLogs
	}
	rc.Logger = hl
	if err := raft.ValidateConfig(rc); err != nil {
		return fmt.Errorf("raftstore: raft config: %w", err)
	}

	hadState, err := raft.HasExistingState(ls, ls, snaps)
	if err != nil {
		return fmt.Errorf("raftstore: check existing state in %s: %w", cfg.Dir, err)
	}
	if cfg.Bootstrap {
		if !hadState {
			conf := raft.Configuration{Servers: []raft.Server{{
				Suffrage: raft.Voter, ID: rc.LocalID, Address: trans.LocalAddr(),
			}}}
			if len(cfg.Peers) > 0 {
				conf.Servers = conf.Servers[:0]
				for _, p := range cfg.Peers {
					conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Addr)})
				}
			}
			if err := raft.BootstrapCluster(rc, ls, ls, snaps, trans, conf); err != nil {
				return fmt.Errorf("raftstore: bootstrap %s: %w", cfg.Dir, err)
			}
			s.log.Info("raftstore: bootstrapped cluster", "id", cfg.NodeID, "addr", trans.LocalAddr(), "voters", len(conf.Servers))
		}
	}

	s.fsm = newFSM(s.log)
	s.fsm.ring = newSizeRing(int(s.trailingLogs()))
	if s.mark, err = openWatermark(cfg.Dir, s.log); err != nil {
		return err
	}
	if !hadState {
		s.mark.boot.Store(0) // a directory emptied but for the mark starts anew
	}
	s.fsm.mark = s.mark
	if len(cfg.DiskBuckets) > 0 {
		c, err := s.openCold(ls, snaps, hadState, v)
		if err != nil {
			return err
		}
		s.fsm.cold = c
	}
	removeShipCopies(cfg.Dir, s.log)
	shipper := &shipStore{FileSnapshotStore: snaps, dir: cfg.Dir, cold: s.fsm.cold, log: s.log}
	if v.newest != nil {
		shipper.checked.Store(&checkedSnapshot{meta: *v.newest, state: v.newestState})
	}
	if cfg.Standalone {
		if err := s.pinSingleNode(rc, ls, snaps, trans); err != nil {
			return err
		}
	} else if err := ls.Set(pinnedKey, nil); err != nil { // a member's configuration is its cluster's
		return fmt.Errorf("raftstore: open: %w", err)
	}
	c := s.newCompactor()
	s.opened = time.Now()
	r, err := raft.NewRaft(rc, s.fsm, ls, ls, shipper, trans)
	if err != nil {
		return fmt.Errorf("raftstore: start raft: %w", err)
	}
	// raft restored this node's snapshot in NewRaft; from now on it opens
	// one only to send it (or to restore one it received, format 2)
	shipper.ship.Store(true)
	s.raft = r
	s.compactor = c
	go c.run()
	go s.sweepWriteIDs(s.sweeperDone)
	err = s.catchUp()
	s.logs.dropPages() // the replay read the log
	return err
}

// trailingLogs is the configured TrailingLogs or raft's default.
func (s *Store) trailingLogs() uint64 {
	if s.cfg.TrailingLogs > 0 {
		return s.cfg.TrailingLogs
	}
	return defaultTrailingLogs
}

// discardFSM is the FSM raft.GetConfiguration restores its snapshot into:
// the configuration comes from the snapshot's metadata and the log, so the
// state is not decoded at all.
type discardFSM struct{}

func (discardFSM) Apply(*raft.Log) any { return nil }
func (discardFSM) Snapshot() (raft.FSMSnapshot, error) {
	return nil, errors.New("raftstore: probe FSM")
}
func (discardFSM) Restore(rc io.ReadCloser) error { return rc.Close() }

// pinnedKey is the stable-store key naming the identity (ID and address)
// whose sole-voter configuration pinSingleNode last found or wrote.
var pinnedKey = []byte("nacosd_pinned_standalone")

// pinSingleNode rewrites a stored configuration that is not exactly this
// node as the sole voter (Config.Standalone). Reading the stored
// configuration reads the newest snapshot through (raft checks its CRC)
// and the log after it, seconds with a large state: when the last start
// pinned this same identity, nothing can have changed it (a standalone node
// adds no voters; a start in cluster mode clears the key).
func (s *Store) pinSingleNode(rc *raft.Config, bs *logStore, snaps raft.SnapshotStore, trans raft.Transport) (err error) {
	has, err := raft.HasExistingState(bs, bs, snaps)
	if err != nil || !has {
		return err
	}
	identity := []byte(string(rc.LocalID) + " " + string(trans.LocalAddr()))
	if v, err := bs.Get(pinnedKey); err == nil && bytes.Equal(v, identity) {
		return nil
	}
	defer func() {
		if err == nil {
			err = bs.Set(pinnedKey, identity)
		}
	}()
	probe := *rc // GetConfiguration marks the config it gets as skip-startup
	cur, err := raft.GetConfiguration(&probe, discardFSM{}, bs, bs, snaps, trans)
	if err != nil {
		return fmt.Errorf("raftstore: read stored configuration in %s: %w", s.cfg.Dir, err)
	}
	self := raft.Server{Suffrage: raft.Voter, ID: rc.LocalID, Address: trans.LocalAddr()}
	if len(cur.Servers) == 1 && cur.Servers[0] == self {
		return nil
	}
	want := raft.Configuration{Servers: []raft.Server{self}}
	recover := *rc
	// RecoverCluster replays the log into the FSM and snapshots it: the
	// store's own FSM, so disk buckets are in that snapshot (raft then
	// restores it into the same FSM, which has them already)
	if err := raft.RecoverCluster(&recover, s.fsm, bs, bs, snaps, trans, want); err != nil {
		return fmt.Errorf("raftstore: pin standalone configuration in %s: %w", s.cfg.Dir, err)
	}
	s.log.Warn("raftstore: standalone node identity changed; configuration rewritten", "was", fmt.Sprint(cur.Servers), "now", fmt.Sprint(want.Servers))
	return nil
}

// Close shuts the raft node down (no final snapshot; the log is durable)
// and closes the transport and the bolt file. A leader with peers first
// hands leadership to one of them, so the cluster does not wait an
// election timeout. Later calls return the same
// result; operations after Close return ErrClosed.
func (s *Store) Close() error {
	s.shutdown()
	return s.closeErr
}

func (s *Store) shutdown() {
	s.closeOnce.Do(func() {
		close(s.closed)
		var errs []error
		if s.raft != nil && s.raft.State() == raft.Leader && s.hasPeers() {
			if err := s.raft.LeadershipTransfer().Error(); err != nil {
				s.log.Warn("raftstore: close: leadership transfer failed", "err", err)
			}
		}
		if s.raft != nil && s.compactor != nil {
			s.compactor.snapshotAtClose()
		}
		if s.stream != nil {
			s.stream.stopDialing() // raft's shutdown waits for its RPCs' dials
		}
		if s.raft != nil {
			if err := s.raft.Shutdown().Error(); err != nil {
				errs = append(errs, fmt.Errorf("raftstore: shutdown raft: %w", err))
			}
		}
		if s.trans != nil {
			s.trans.CloseStreams() // pooled connections to peers: their handlers there end too
			// Closes the stream layer (the listener) too.
			if err := s.trans.Close(); err != nil {
				errs = append(errs, fmt.Errorf("raftstore: close transport: %w", err))
			}
		}
		if s.trans == nil && s.stream != nil {
			_ = s.stream.Close()
		}
		if s.compactor != nil {
			<-s.compactor.done // its Snapshot ended with raft's shutdown
			<-s.sweeperDone    // started with it
		}
		if s.logs != nil {
			s.logs.closeWrites()
		}
		if s.bolt != nil {
			if err := s.bolt.Close(); err != nil {
				errs = append(errs, fmt.Errorf("raftstore: close log store: %w", err))
			}
		}
		if err := s.mark.close(); err != nil {
			errs = append(errs, fmt.Errorf("raftstore: close %s: %w", watermarkFile, err))
		}
		if s.fsm != nil && s.fsm.cold != nil {
			if err := s.fsm.cold.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		s.dir.release()
		s.closeErr = errors.Join(errs...)
	})
}

func (s *Store) hasPeers() bool {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	for _, sv := range f.Configuration().Servers {
		if sv.ID != raft.ServerID(s.cfg.NodeID) && sv.Suffrage == raft.Voter {
			return true
		}
	}
	return false
}

func (s *Store) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// Apply replicates b and returns its log index once it is committed and
// applied to the local state (so Get sees it) — durable on a quorum's disks
// (bolt fsync). It returns a *CondError (errors.Is ErrCondFailed) when a
// condition failed, ErrNotLeader on a follower, ErrInvalidBatch for a
// malformed batch, ErrStorage when the log cannot be written, ErrClosed
// after Close. When this node loses leadership with the entry in flight,
// Apply waits (up to ApplyTimeout) until it learns the outcome from the
// next leader: success, or an error wrapping ErrNotLeader when nothing was
// written; ErrLeadershipLost only when the outcome stays unknown. On any
// error the index is 0. If ctx ends first, Apply returns ctx's error and
// the write may still be applied later.
//
// Apply copies b: the caller may reuse its slices once Apply is called.
//
// With a write id in ctx (WithWriteID), the write applies once however
// many copies of it reach a leader (writeid.go).
func (s *Store) Apply(ctx context.Context, b Batch) (index uint64, err error) {
	return s.apply(ctx, b, nextWriteKey(ctx))
}

// apply is Apply with the write's id key ("" for none).
func (s *Store) apply(ctx context.Context, b Batch, wkey string) (index uint64, err error) {
	defer func() { noteWrite(ctx, err) }()
	if s.isClosed() {
		return 0, ErrClosed
	}
	if err := b.validate(); err != nil {
		return 0, err
	}
	for i, c := range b.Conds {
		if s.fsm.isCold(c.Bucket) {
			return 0, fmt.Errorf("raftstore: cond %d: bucket %q is kept on disk and takes no conditions: %w", i, c.Bucket, ErrInvalidBatch)
		}
	}
	if wkey != "" {
		b = withWriteKey(b, wkey, time.Now())
		defer func() { index, err = writeKeyOutcome(index, err, s.AppliedIndex) }()
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("raftstore: apply: %w", err)
	}
	timeout := s.cfg.ApplyTimeout
	if dl, ok := ctx.Deadline(); ok {
		if d := time.Until(dl); d < timeout {
			timeout = max(d, time.Millisecond)
		}
	}
	data := encodeBatch(b)
	NoteProposal(ctx)
	f := s.raft.Apply(data, timeout)
	if err := s.waitFuture(ctx, f); err != nil {
		if errors.Is(err, raft.ErrLeadershipLost) {
			return s.resolve(ctx, f.Index(), data, len(b.Conds) > 0)
		}
		return 0, s.mapErr("apply", err)
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return 0, err
	}
	return f.Index(), nil
}

// waitFuture waits for f, or for ctx when ctx can end.
func (s *Store) waitFuture(ctx context.Context, f raft.Future) error {
	if ctx.Done() == nil {
		return f.Error()
	}
	errc := make(chan error, 1)
	go func() { errc <- f.Error() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// mapErr turns raft errors into this package's sentinels. A write that
// failed because the log could not be written — directly, or as
// ErrNotLeader from a node that stepped down after such a failure and has
// no leader since — is an ErrStorage error naming the disk's error.
func (s *Store) mapErr(op string, err error) error {
	fail := s.logs.failure()
	switch {
	case isStorageErr(err, fail):
		return storageError(op, fail)
	case errors.Is(err, raft.ErrNotLeader):
		if fail != nil && s.LeaderAddr() == "" {
			return storageError(op, fail)
		}
		addr, id := s.raft.LeaderWithID()
		return &NotLeaderError{LeaderID: string(id), LeaderAddr: string(addr)}
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrClosed
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("raftstore: %s: %w", op, ErrTimeout)
	default:
		return fmt.Errorf("raftstore: %s: %w", op, err)
	}
}

// Get returns the record at bucket/key from local state.
func (s *Store) Get(bucket, key string) (Record, bool) { return s.fsm.get(bucket, key) }

// Scan calls fn for every record of bucket whose key starts with prefix
// until fn returns false: in no particular order for an in-memory bucket
// (a consistent snapshot of it taken when Scan starts), in key order for a
// disk bucket (Config.DiskBuckets; read in chunks, so a long scan may see
// writes made meanwhile). It holds no lock while calling fn.
func (s *Store) Scan(bucket, prefix string, fn func(key string, r Record) bool) {
	s.fsm.scan(bucket, prefix, false, fn)
}

// ScanReverse is Scan in descending key order (an in-memory bucket's
// matching keys are copied and sorted first), passing over the first skip
// records without reading their values (a disk bucket's page N).
func (s *Store) ScanReverse(bucket, prefix string, skip int, fn func(key string, r Record) bool) {
	s.fsm.scanSkip(bucket, prefix, true, skip, fn)
}

// Len returns the number of records in bucket.
func (s *Store) Len(bucket string) int { return s.fsm.len(bucket) }

// Count returns the number of records of bucket whose key starts with
// prefix (a disk bucket walks its keys, without reading their values into
// memory).
func (s *Store) Count(bucket, prefix string) int {
	if s.fsm.isCold(bucket) {
		return s.fsm.cold.Count(bucket, prefix)
	}
	return s.fsm.count(bucket, prefix)
}

// Watch registers fn to be called for every applied batch that has ops
// (and with Reset=true after a snapshot restore). fn runs synchronously on
// raft's apply goroutine, in log order, after the change is visible to Get
// and Scan. It must be quick, must never block, and must not call Apply,
// WaitApplied or Subscribe (they wait for this goroutine); Get, Scan, Watch
// and cancel are fine. Hand slow work to another goroutine with a
// non-blocking send.
//
// Watch does not replay existing state, and a state read before or after
// it can miss or double an entry applied meanwhile: a view built from the
// store uses Subscribe. cancel is idempotent.
func (s *Store) Watch(fn func(Event)) (cancel func()) { return s.fsm.watch(fn) }

// Subscribe builds a view of the state and keeps it current: load reads
// the state (Get, Scan, Count) while no entry or snapshot is being
// applied, so it sees the state of one applied index, and fn is then
// called, as Watch's callback, for exactly the batches applied after it —
// none missed, none seen twice. load must not call Apply, WaitApplied or
// Subscribe. Applying waits for load: keep it to one pass over the state.
//
// A view loaded with Scan and then Watch'ed loses a write applied while
// the scan runs: the watcher applies it, then the load stores what it read
// before it (a member restarted under a write load kept such a view for
// good, issue 23).
func (s *Store) Subscribe(load func(), fn func(Event)) (cancel func()) {
	return s.fsm.subscribe(load, fn)
}

// Quiesced runs fn while no entry or snapshot is being applied (and no
// watcher is being told of one): the state and every view kept current by
// Subscribe stand at the same applied index meanwhile. For checks that
// compare a view with the store; fn must be quick and must not write.
func (s *Store) Quiesced(fn func()) {
	s.fsm.gate.Lock()
	defer s.fsm.gate.Unlock()
	fn()
}

// WaitApplied blocks until the local state has applied the log index (as
// returned by Apply), for read-your-writes on any node.
func (s *Store) WaitApplied(ctx context.Context, index uint64) error {
	return s.fsm.applied.wait(ctx, index, s.closed)
}

// AppliedIndex returns the log index of the last batch applied locally.
func (s *Store) AppliedIndex() uint64 { return s.fsm.applied.get() }

// WaitLeader blocks until this node knows a leader (itself or a peer).
func (s *Store) WaitLeader(ctx context.Context) error {
	ch := make(chan raft.Observation, 1)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.LeaderObservation, raft.RaftState:
			return true
		}
		return false
	})
	s.raft.RegisterObserver(obs)
	defer s.raft.DeregisterObserver(obs)
	for {
		if addr, _ := s.raft.LeaderWithID(); addr != "" {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("raftstore: wait for leader: %w", ctx.Err())
		case <-s.closed:
			return ErrClosed
		}
	}
}

// IsLeader reports whether this node is the raft leader.
func (s *Store) IsLeader() bool { return s.raft.State() == raft.Leader }

// LeaderAddr returns the raft address of the current leader, or "" if
// none is known.
func (s *Store) LeaderAddr() string {
	addr, _ := s.raft.LeaderWithID()
	return string(addr)
}

// LeaderID returns the server ID of the current leader, or "" if none is
// known.
func (s *Store) LeaderID() string {
	_, id := s.raft.LeaderWithID()
	return string(id)
}

// LeaderContact is how long ago this node last heard from a raft leader:
// 0 on the leader (which steps down when it loses its quorum), the time
// since the leader's last message on a follower, the time since Open when
// no leader has been heard yet.
func (s *Store) LeaderContact() time.Duration {
	if s.raft.State() == raft.Leader {
		return 0
	}
	last := s.raft.LastContact()
	if last.IsZero() || last.Before(s.opened) {
		last = s.opened
	}
	return time.Since(last)
}

// ElectionTimeout is the raft election timeout in effect: a follower that
// has not heard from the leader for this long starts an election.
func (s *Store) ElectionTimeout() time.Duration { return s.cfg.raftTimings().election }

// Term is the current raft term (a new leader, even the same node
// elected again, has a newer term).
func (s *Store) Term() uint64 { return s.raft.CurrentTerm() }

// Addr returns this node's raft address as peers know it: the bound
// address, unless Config.AdvertiseAddr is set.
func (s *Store) Addr() string { return string(s.trans.LocalAddr()) }

// BindAddr returns the address the raft listener is bound to (with the
// real port when Config.BindAddr used port 0).
func (s *Store) BindAddr() string { return s.stream.ln.Addr().String() }

// AddVoter adds (or updates the address of) a voting peer. Leader only;
// returns after the configuration change is committed.
func (s *Store) AddVoter(id, addr string) error {
	if s.isClosed() {
		return ErrClosed
	}
	f := s.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, s.cfg.ApplyTimeout)
	if err := f.Error(); err != nil {
		return s.mapErr(fmt.Sprintf("add voter %s at %s", id, addr), err)
	}
	return nil
}

// RemoveServer removes a peer from the cluster. Leader only; returns after
// the configuration change is committed.
func (s *Store) RemoveServer(id string) error {
	if s.isClosed() {
		return ErrClosed
	}
	f := s.raft.RemoveServer(raft.ServerID(id), 0, s.cfg.ApplyTimeout)
	if err := f.Error(); err != nil {
		return s.mapErr("remove server "+id, err)
	}
	return nil
}

// Server is one member of the raft configuration.
type Server struct {
	// ID is the raft server ID, Addr its raft address.
	ID, Addr string
	// Voter is false for non-voting members.
	Voter bool
}

// Servers returns the current raft configuration.
func (s *Store) Servers() ([]Server, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, s.mapErr("get configuration", err)
	}
	var out []Server
	for _, sv := range f.Configuration().Servers {
		out = append(out, Server{ID: string(sv.ID), Addr: string(sv.Address), Voter: sv.Suffrage == raft.Voter})
	}
	return out, nil
}

// VerifyLeader confirms with a quorum that this node is still the leader;
// a read from local state after it returns nil is linearizable. It returns
// ErrNotLeader otherwise.
func (s *Store) VerifyLeader() error {
	if s.isClosed() {
		return ErrClosed
	}
	if err := s.raft.VerifyLeader().Error(); err != nil {
		return s.mapErr("verify leader", err)
	}
	return nil
}

// Snapshot takes a raft snapshot now and compacts the log.
func (s *Store) Snapshot() error {
	if s.isClosed() {
		return ErrClosed
	}
	if err := s.raft.Snapshot().Error(); err != nil {
		return s.mapErr("snapshot", err)
	}
	return nil
}

// Stats returns raft's statistics (state, term, indexes, peers, …).
func (s *Store) Stats() map[string]string {
	st := s.raft.Stats()
	st["fsm_applied_index"] = fmt.Sprint(s.fsm.applied.get())
	st["leadership_lost_applies"] = fmt.Sprint(s.lostApplies.Load())
	st["leadership_lost_unresolved"] = fmt.Sprint(s.lostUnresolved.Load())
	return st
}
