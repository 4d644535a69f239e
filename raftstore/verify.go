package raftstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/raft"

	"github.com/nacosd/nacosd/raftstore/internal/boltio"
)

// Open checks the data directory before raft reads it. bolt and raft treat
// a damaged file as a programming error and panic (bolt's "invalid page
// type", a msgpack decode error, an entry the FSM cannot decode), or
// silently fall back to an older snapshot whose log is gone. A damaged
// directory instead makes Open return a *CorruptError naming the file, the
// damage and what to do (docs/operations.md).

// CorruptError reports a damaged file in the data directory. It wraps
// ErrCorrupt.
type CorruptError struct {
	// Path is the damaged file or snapshot directory.
	Path string
	// Problem says what is wrong with it.
	Problem string
	// Advice says how to recover.
	Advice string
}

// Error implements error.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("raftstore: %s is damaged: %s. %s", e.Path, e.Problem, e.Advice)
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// verifier checks one data directory.
type verifier struct {
	dir, dbPath string
	log         *slog.Logger
	newest      *raft.SnapshotMeta // newest snapshot that verified, nil if none
	newestHead  snapHead           // its format version and FSM index
	newestState os.FileInfo        // its state.bin as checked
}

// advice tells the operator what to do about a damaged raft.db.
func (v *verifier) advice(dbDamaged bool) string {
	cluster := "In a cluster: stop this node, delete its directory " + v.dir +
		" and start it again; it rejoins and receives the data from the leader."
	if dbDamaged && v.newest != nil {
		return fmt.Sprintf("Standalone: stop nacosd, move %s aside and start again: nacosd restores the latest snapshot %s "+
			"(the CP state at log index %d); writes after it are lost. Or restore the data directory from a backup. %s "+
			"See docs/operations.md", v.dbPath, filepath.Join(v.dir, "snapshots", v.newest.ID), v.newest.Index, cluster)
	}
	return "Standalone: restore the data directory from a backup (no usable snapshot to fall back to). " + cluster +
		" See docs/operations.md"
}

func (v *verifier) dbCorrupt(problem string) error {
	return &CorruptError{Path: v.dbPath, Problem: problem, Advice: v.advice(true)}
}

// verifySnapshots checks the snapshots raft would restore and remembers
// the newest good one. A damaged snapshot newer than that is an error only
// if the log does not reach back to the good one (checked by verifyLog).
func (v *verifier) verifySnapshots() (damaged []string, err error) {
	root := filepath.Join(v.dir, "snapshots")
	entries, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("raftstore: read %s: %w", root, err)
	}
	type cand struct {
		id          string
		term, index uint64
	}
	var cands []cand
	for _, e := range entries {
		if !e.IsDir() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		var term, index, ms uint64
		if _, err := fmt.Sscanf(e.Name(), "%d-%d-%d", &term, &index, &ms); err != nil {
			continue // not a snapshot raft wrote; raft ignores it too
		}
		cands = append(cands, cand{e.Name(), term, index})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].term != cands[j].term {
			return cands[i].term > cands[j].term
		}
		if cands[i].index != cands[j].index {
			return cands[i].index > cands[j].index
		}
		return cands[i].id > cands[j].id
	})
	for _, c := range cands {
		meta, head, err := checkSnapshot(root, c.id)
		var fi os.FileInfo
		if err == nil {
			fi, err = os.Stat(filepath.Join(root, c.id, "state.bin"))
		}
		if err != nil {
			v.log.Warn("raftstore: damaged snapshot", "snapshot", filepath.Join(root, c.id), "err", err)
			damaged = append(damaged, fmt.Sprintf("%s (%v)", filepath.Join(root, c.id), err))
			continue
		}
		v.newest, v.newestHead, v.newestState = meta, head, fi
		return damaged, nil
	}
	return damaged, nil
}

// snapHead is the start of a snapshot's state.
type snapHead struct {
	version byte
	applied uint64 // the FSM's applied index: raft's index less the entries it does not pass on
}

// checkSnapshot reads a snapshot's metadata and state and checks its CRC
// (raft's FileSnapshotStore.Open does) and format version.
func checkSnapshot(root, id string) (*raft.SnapshotMeta, snapHead, error) {
	var h snapHead
	raw, err := os.ReadFile(filepath.Join(root, id, "meta.json"))
	if err != nil {
		return nil, h, err
	}
	var m struct { // raft's fileSnapshotMeta
		raft.SnapshotMeta
		CRC []byte
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, h, fmt.Errorf("meta.json: %w", err)
	}
	state := filepath.Join(root, id, "state.bin")
	crc, err := fileCRC64(state)
	if err != nil {
		return nil, h, fmt.Errorf("state.bin: %w", err)
	}
	if !bytes.Equal(crc, m.CRC) {
		return nil, h, errors.New("state.bin: CRC mismatch")
	}
	f, err := os.Open(state)
	if err != nil {
		return nil, h, fmt.Errorf("state.bin: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64)
	if h.version, err = br.ReadByte(); err != nil {
		return nil, h, fmt.Errorf("state.bin: %w", err)
	}
	if h.version != snapshotV1 && h.version != snapshotV2 && h.version != snapshotVersion {
		return nil, h, fmt.Errorf("state.bin: unknown snapshot version %d", h.version)
	}
	if h.applied, err = binary.ReadUvarint(br); err != nil {
		return nil, h, fmt.Errorf("state.bin: applied index: %w", err)
	}
	return &m.SnapshotMeta, h, nil
}

// boltDamage is verifyBolt's finding, made a CorruptError once the
// snapshots are checked (its advice names the newest good one).
type boltDamage struct{ problem string }

func (d *boltDamage) Error() string { return d.problem }

// verifyBolt checks raft.db's page structure (boltcheck.go) before bolt
// reads it.
func (v *verifier) verifyBolt() error {
	fi, err := os.Stat(v.dbPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("raftstore: %s: %w", v.dbPath, err)
	}
	if fi.Size() == 0 {
		return nil // bolt initialises an empty file
	}
	leaked, metaWarn, err := checkBoltFile(v.dbPath)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("raftstore: open log store %s: %w", v.dbPath, err)
	}
	if err != nil {
		return &boltDamage{err.Error()}
	}
	if metaWarn != "" {
		v.log.Warn("raftstore: "+metaWarn, "path", v.dbPath)
	}
	if leaked > 0 {
		v.log.Warn("raftstore: raft.db has pages neither used nor free (space lost by an interrupted write)", "path", v.dbPath, "pages", leaked)
	}
	return nil
}

// verifyLog decodes every entry of the log and the stable store's values
// the way raft and the FSM will, and checks that the log continues the
// newest snapshot without a gap.
func (v *verifier) verifyLog(ls *logStore, damagedSnaps []string) error {
	var first, last uint64
	err := boltio.Guarded(func() error {
		var err error
		if first, err = ls.FirstIndex(); err != nil {
			return fmt.Errorf("first index: %w", err)
		}
		if last, err = ls.LastIndex(); err != nil {
			return fmt.Errorf("last index: %w", err)
		}
		var term uint64
		for _, k := range [][]byte{[]byte("CurrentTerm"), []byte("LastVoteTerm")} {
			t, err := ls.GetUint64(k)
			if err != nil && err.Error() != "not found" {
				return fmt.Errorf("stable store %s: %w", k, err)
			}
			term = max(term, t)
		}
		switch {
		case first == 0 && last == 0:
			return nil // empty log
		case first == 0 || last < first:
			// a damaged key reads as index 0 (or hides the last one)
			return fmt.Errorf("log index range %d..%d is damaged", first, last)
		}
		var l raft.Log
		for i := first; i <= last; i++ {
			if err := ls.GetLog(i, &l); err != nil {
				return fmt.Errorf("log entry %d: %w", i, err)
			}
			if l.Index != i {
				return fmt.Errorf("log entry %d: holds index %d", i, l.Index)
			}
			switch l.Type {
			case raft.LogCommand:
				if len(l.Data) > 0 {
					if _, err := decodeEntry(l.Data); err != nil {
						return fmt.Errorf("log entry %d: %w", i, err)
					}
				}
			case raft.LogConfiguration:
				_ = raft.DecodeConfiguration(l.Data) // panics on damage
			}
		}
		if l.Term > term {
			return fmt.Errorf("stable store: current term %d is behind the log's last term %d", term, l.Term)
		}
		return nil
	})
	if err != nil {
		return v.dbCorrupt(firstLine(err.Error()))
	}
	var base uint64 // the log must start right after this index
	if v.newest != nil {
		base = v.newest.Index
	}
	if first > base+1 {
		if len(damagedSnaps) > 0 {
			return &CorruptError{Path: strings.Join(damagedSnaps, ", "), Problem: fmt.Sprintf(
				"the log starts at index %d and the newest usable snapshot ends at %d", first, base), Advice: v.advice(false)}
		}
		return v.dbCorrupt(fmt.Sprintf("the log starts at index %d but the newest snapshot ends at %d (entries are missing)", first, base))
	}
	if len(damagedSnaps) > 0 {
		v.log.Warn("raftstore: damaged snapshots ignored; the log covers them", "snapshots", strings.Join(damagedSnaps, ", "))
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
