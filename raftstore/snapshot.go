package raftstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"github.com/nacosd/nacosd/raftstore/cold"
)

// Snapshot format (integers are uvarints, strings and bytes
// length-prefixed with a uvarint). Snapshots live on disk and travel
// between nodes: add a version, keep decoding the old ones.
//
//	byte version (1, 2 or 3)
//	uvarint applied index
//	uvarint bucket count, then per in-memory bucket:
//	  string name, uvarint record count, then per record: string key, uvarint rev, bytes value
//	version 2 only, the cold buckets (package cold), streamed:
//	  per bucket: byte 1, string name, then per record: byte 1, string key, uvarint rev, bytes value; byte 0
//	versions 2 and 3: byte 0
//
// Version 3 is what a node writes for itself: its cold buckets are not in
// the stream but in its fsm.db, synced at the snapshot's index or later
// (checkpoint) — rewriting a history that only grows into every snapshot
// made each snapshot as large as all of history (8 times the log written
// between them). A node that sends its snapshot to another member sends
// version 2, its fsm.db read into the stream (ship.go). Version 1 has no
// cold section: a store with cold buckets moves them out of the maps when
// it restores one.
const (
	snapshotV1      byte = 1
	snapshotV2      byte = 2
	snapshotVersion byte = 3
)

// Snapshot implements raft.FSM: it copies the maps (records are immutable,
// so a shallow copy is a consistent snapshot); Persist does the I/O. The
// cold buckets stay in fsm.db: checkpoint writes what is queued and syncs
// the file with the snapshot's index, before raft may drop the log below
// it.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.ring.snapshotted()
	applied := f.applied.get()
	snap := &fsmSnapshot{applied: applied, ring: f.ring}
	if f.cold != nil {
		if err := f.cold.Checkpoint(applied); err != nil {
			return nil, err
		}
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	snap.data = make(buckets, len(f.data))
	for b, m := range f.data {
		mc := make(map[string]Record, len(m))
		for k, r := range m {
			mc[k] = r
		}
		snap.data[b] = mc
	}
	return snap, nil
}

type fsmSnapshot struct {
	data    buckets
	applied uint64
	ring    *sizeRing // told the size written
}

// Persist implements raft.FSMSnapshot. It runs concurrently with Apply,
// on its own copy of the maps.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	cw := &countingWriter{w: sink}
	if err := s.write(cw); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("raftstore: persist snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("raftstore: persist snapshot: close: %w", err)
	}
	if s.ring != nil {
		s.ring.persisted(cw.n)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n uint64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += uint64(n)
	return n, err
}

// write encodes a version 3 snapshot: the in-memory buckets and the end
// byte.
func (s *fsmSnapshot) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var scratch []byte
	scratch = append(scratch, snapshotVersion)
	scratch = binary.AppendUvarint(scratch, s.applied)
	scratch = binary.AppendUvarint(scratch, uint64(len(s.data)))
	for name, m := range s.data {
		scratch = appendString(scratch, name)
		scratch = binary.AppendUvarint(scratch, uint64(len(m)))
		for k, r := range m {
			scratch = appendString(scratch, k)
			scratch = binary.AppendUvarint(scratch, r.Rev)
			scratch = appendBytes(scratch, r.Value)
			if len(scratch) >= 32<<10 {
				if _, err := bw.Write(scratch); err != nil {
					return err
				}
				scratch = scratch[:0]
			}
		}
	}
	scratch = append(scratch, 0)
	if _, err := bw.Write(scratch); err != nil {
		return err
	}
	return bw.Flush()
}

// writeColdSections writes version 2's cold section (without the end
// byte) from fsm.db, read in short read transactions while the FSM goes on
// writing: the section is fuzzy, each record as of the snapshot's index or
// a later one. That is enough: raft replays every entry after the
// snapshot's index onto a restored state, cold ops only put and delete
// whole records and no condition reads a cold bucket, so the replay ends
// in exactly the state of the log (as in ZooKeeper's fuzzy snapshots). A
// long read transaction instead would pin every page the FSM frees
// meanwhile.
func writeColdSections(bw *bufio.Writer, disk diskBuckets) error {
	var scratch []byte
	for _, name := range disk.Buckets() {
		scratch = append(scratch, 1)
		scratch = appendString(scratch, name)
		var err error
		disk.FileScan(name, "", false, 0, func(k string, r cold.Record) bool {
			scratch = append(scratch, 1)
			scratch = appendString(scratch, k)
			scratch = binary.AppendUvarint(scratch, r.Rev)
			scratch = appendBytes(scratch, r.Value)
			if len(scratch) >= 32<<10 {
				_, err = bw.Write(scratch)
				scratch = scratch[:0]
			}
			return err == nil
		})
		if err != nil {
			return err
		}
		scratch = append(scratch, 0)
	}
	_, err := bw.Write(scratch)
	return err
}

// Release implements raft.FSMSnapshot.
func (s *fsmSnapshot) Release() {}

// Restore implements raft.FSM: it decodes into fresh state, swaps it in,
// then tells watchers with a Reset event. A version 3 snapshot (this
// node's own) finds its cold buckets in fsm.db; a version 2 one (from the
// leader) carries them, and they replace fsm.db's unless the file already
// holds every entry up to the snapshot's index.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	f.gate.Lock()
	defer f.gate.Unlock()
	r := &streamDecoder{r: bufio.NewReaderSize(rc, 64<<10)}
	version := r.byte()
	if r.err == nil && version != snapshotV1 && version != snapshotV2 && version != snapshotVersion {
		return fmt.Errorf("raftstore: restore: unknown snapshot version %d", version)
	}
	applied := r.uvarint()
	nb := r.uvarint()
	data := make(buckets)
	for i := uint64(0); i < nb && r.err == nil; i++ {
		name := r.str()
		n := r.uvarint()
		m := make(map[string]Record, min(n, 1<<16))
		for j := uint64(0); j < n && r.err == nil; j++ {
			k := r.str()
			rev := r.uvarint()
			m[k] = Record{Rev: rev, Value: r.bytes()}
		}
		if r.err == nil && len(m) > 0 {
			data[name] = m
		}
	}
	if r.err != nil {
		return fmt.Errorf("raftstore: restore: decode snapshot: %w", r.err)
	}
	consumed, err := f.restoreCold(r, version, applied, data)
	if err != nil {
		return fmt.Errorf("raftstore: restore: %w", err)
	}
	if consumed {
		if _, err := r.r.ReadByte(); err == nil {
			return fmt.Errorf("raftstore: restore: decode snapshot: trailing bytes after offset %d", r.off)
		}
	}
	f.mu.Lock()
	f.data = data
	f.mu.Unlock()
	f.ring.reset()
	f.log.Info("raftstore: restored snapshot", "applied", applied, "buckets", len(data), "version", version)
	f.notify(Event{Index: applied, Reset: true})
	if applied > f.applied.get() {
		f.mark.set(applied)
	}
	f.applied.reset(applied)
	return nil
}

// restoreCold brings fsm.db to the snapshot's cold state (or leaves it when
// it holds that state already) and removes cold buckets from data.
// consumed reports whether the whole stream was read.
func (f *fsm) restoreCold(r *streamDecoder, version byte, applied uint64, data buckets) (consumed bool, err error) {
	if version == snapshotVersion {
		if r.byte() != 0 && r.err == nil {
			return false, errors.New("decode snapshot: a version 3 snapshot with a cold section")
		}
		if r.err != nil {
			return false, fmt.Errorf("decode snapshot: %w", r.err)
		}
		if f.cold == nil {
			return true, nil
		}
		if f.cold.AppliedIndex() < applied {
			return false, fmt.Errorf("%s holds the entries up to index %d, but the snapshot at index %d keeps its disk buckets (config history) there: "+
				"the file was lost, replaced or rebuilt: %w", f.cold.Path(), f.cold.AppliedIndex(), applied, ErrCorrupt)
		}
		for _, n := range f.cold.Buckets() {
			delete(data, n)
		}
		return true, nil
	}
	if f.cold == nil {
		if version == snapshotV2 && r.byte() != 0 && r.err == nil {
			return false, errors.New("snapshot has cold buckets but this store keeps none")
		}
		return true, r.err
	}
	if version == snapshotV2 && f.cold.AppliedIndex() >= applied {
		f.log.Info("raftstore: restore: fsm.db holds the snapshot's cold buckets already", "applied", applied,
			"fsm_db_applied", f.cold.AppliedIndex())
		for _, n := range f.cold.Buckets() {
			delete(data, n)
		}
		return false, nil
	}
	load := f.cold.BeginLoad()
	defer load.End()
	if err := load.Reset(); err != nil {
		return false, err
	}
	for _, n := range f.cold.Buckets() { // version 1: the cold buckets were in memory
		for k, rec := range data[n] {
			if err := load.Put(n, k, cold.Record(rec)); err != nil {
				return false, err
			}
		}
		delete(data, n)
	}
	if version == snapshotV2 {
		for r.byte() == 1 && r.err == nil {
			name := r.str()
			for r.byte() == 1 && r.err == nil {
				k := r.str()
				rev := r.uvarint()
				v := r.bytes()
				if r.err == nil && f.cold.IsCold(name) {
					if err := load.Put(name, k, cold.Record{Rev: rev, Value: v}); err != nil {
						return false, err
					}
				}
			}
		}
		if r.err != nil {
			return false, fmt.Errorf("decode snapshot: %w", r.err)
		}
	}
	return true, load.Finish(applied)
}

// streamDecoder reads the snapshot encoding from a stream. The first error
// sticks; later reads return zero values.
type streamDecoder struct {
	r   *bufio.Reader
	off int64
	err error
	buf []byte // str's scratch
}

func (d *streamDecoder) fail(err error) {
	if d.err == nil {
		if errors.Is(err, io.EOF) {
			err = errShort
		}
		d.err = fmt.Errorf("offset %d: %w", d.off, err)
	}
}

func (d *streamDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	b, err := d.r.ReadByte()
	if err != nil {
		d.fail(err)
		return 0
	}
	d.off++
	return b
}

func (d *streamDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(byteCounter{d})
	if err != nil {
		d.fail(err)
		return 0
	}
	return v
}

type byteCounter struct{ d *streamDecoder }

func (b byteCounter) ReadByte() (byte, error) {
	c, err := b.d.r.ReadByte()
	if err == nil {
		b.d.off++
	}
	return c, err
}

// maxSnapshotValue bounds one length-prefixed field, so corrupt input cannot
// force a huge allocation (a config is at most 10 MiB).
const maxSnapshotValue = 256 << 20

// str reads a length-prefixed field as a string (one allocation, not
// bytes' two: the field is read into a reused buffer).
func (d *streamDecoder) str() string {
	d.buf = d.field(d.buf)
	return string(d.buf)
}

// bytes reads a length-prefixed field (never nil on success, so a put of
// an empty value reads back as a present, empty value).
func (d *streamDecoder) bytes() []byte { return d.field(nil) }

// field reads a length-prefixed field into buf, or into a new slice when
// buf is nil or too short; nil on failure.
func (d *streamDecoder) field(buf []byte) []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > maxSnapshotValue {
		d.fail(fmt.Errorf("field of %d bytes", n))
		return nil
	}
	if buf == nil || uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	p := buf[:n]
	if _, err := io.ReadFull(d.r, p); err != nil {
		d.fail(err)
		return nil
	}
	d.off += int64(n)
	return p
}
