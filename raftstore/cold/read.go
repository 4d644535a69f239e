package cold

import (
	"bytes"
	"encoding/binary"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/bbolt"
)

// Reads of the cold buckets. They read fsm.db in short read transactions
// and see the ops queued for the writer (cold.go) too: a scan whose range
// has queued ops merges them into a copy of the range (the slow way, only
// then).

// kv is one record of a scan.
type kv struct {
	key string
	rec Record
}

// decodeColdValue splits a stored value into rev and a copy of the bytes.
func decodeColdValue(v []byte) (Record, bool) {
	rev, n := binary.Uvarint(v)
	if n <= 0 {
		return Record{}, false
	}
	return Record{Rev: rev, Value: append(make([]byte, 0, len(v)-n), v[n:]...)}, true
}

// overlay is the newest pending op per key of bucket whose key starts
// with prefix (nil: none pending). Under write load something is nearly
// always queued, but seldom for the one config whose history is read.
func (c *Store) overlay(bucket, prefix string) map[string]Op {
	if !c.hasPending.Load() {
		return nil
	}
	c.pendMu.RLock()
	defer c.pendMu.RUnlock()
	var m map[string]Op
	for _, o := range c.pending {
		if o.Bucket == bucket && strings.HasPrefix(o.Key, prefix) {
			if m == nil {
				m = map[string]Op{}
			}
			m[o.Key] = o
		}
	}
	return m
}

// Get reads one record, queued writes included.
func (c *Store) Get(bucket, key string) (Record, bool) {
	if o, ok := c.overlay(bucket, key)[key]; ok {
		if o.Delete {
			return Record{}, false
		}
		return Record{Value: o.Value, Rev: o.Index}, true
	}
	return c.fileGet(bucket, key)
}

func (c *Store) fileGet(bucket, key string) (Record, bool) {
	var r Record
	var ok bool
	_ = c.db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(bucket)); b != nil {
			if v := b.Get([]byte(key)); v != nil {
				r, ok = decodeColdValue(v)
			}
		}
		return nil
	})
	return r, ok
}

// Len is the number of keys of bucket, queued writes included.
func (c *Store) Len(bucket string) int {
	c.mu.Lock()
	n := c.counts[bucket]
	c.mu.Unlock()
	for k, o := range c.overlay(bucket, "") {
		_, inFile := c.fileGet(bucket, k)
		switch {
		case !o.Delete && !inFile:
			n++
		case o.Delete && inFile:
			n--
		}
	}
	return n
}

// Count is the number of keys with prefix.
func (c *Store) Count(bucket, prefix string) int {
	if prefix == "" {
		return c.Len(bucket)
	}
	key := bucket + "\x00" + prefix
	c.cntMu.Lock()
	gen := c.cntGen
	n, ok := c.cntCache[key]
	c.cntMu.Unlock()
	if ok {
		return n
	}
	if c.overlay(bucket, prefix) != nil {
		c.Scan(bucket, prefix, false, 0, func(string, Record) bool { n++; return true })
	} else {
		c.walk(bucket, []byte(prefix), nil, false, func(_, _ []byte) bool { n++; return true })
	}
	c.cntMu.Lock()
	if c.cntGen == gen { // nothing queued meanwhile
		if c.cntCache == nil || len(c.cntCache) >= countCacheMax {
			c.cntCache = map[string]int{}
		}
		c.cntCache[key] = n
	}
	c.cntMu.Unlock()
	return n
}

// countCacheMax bounds the counts kept.
const countCacheMax = 256

// countsChanged forgets the kept counts: an op was queued (after it was,
// so a count that started before sees it or is not kept) or the buckets
// were replaced.
func (c *Store) countsChanged() {
	c.cntMu.Lock()
	c.cntGen++
	if len(c.cntCache) > 0 {
		clear(c.cntCache)
	}
	if len(c.posCache) > 0 {
		clear(c.posCache)
	}
	c.cntMu.Unlock()
}

// Scan calls fn for every key with prefix, in key order (descending when
// reverse). It copies coldChunk records per read transaction and calls fn
// outside it, so fn may call anything, and a long scan holds no
// transaction (which would pin freed pages).
// The first skip records are passed over without copying their values.
func (c *Store) Scan(bucket, prefix string, reverse bool, skip int, fn func(string, Record) bool) {
	if ov := c.overlay(bucket, prefix); ov != nil {
		c.scanWithOverlay(bucket, prefix, reverse, ov, func(k string, r Record) bool {
			if skip > 0 {
				skip--
				return true
			}
			return fn(k, r)
		})
		return
	}
	c.FileScan(bucket, prefix, reverse, skip, fn)
}

// scanWithOverlay merges the pending ops into a copy of the whole range.
func (c *Store) scanWithOverlay(bucket, prefix string, reverse bool, ov map[string]Op, fn func(string, Record) bool) {
	var all []kv
	c.FileScan(bucket, prefix, false, 0, func(k string, r Record) bool {
		if _, over := ov[k]; !over {
			all = append(all, kv{k, r})
		}
		return true
	})
	for k, o := range ov {
		if !o.Delete { // ov holds only keys with prefix
			all = append(all, kv{k, Record{Value: o.Value, Rev: o.Index}})
		}
	}
	slices.SortFunc(all, func(a, b kv) int {
		if reverse {
			return strings.Compare(b.key, a.key)
		}
		return strings.Compare(a.key, b.key)
	})
	for _, e := range all {
		if !fn(e.key, e.rec) {
			return
		}
	}
}

// walk calls visit for the records with prefix in one read transaction,
// from the first one (after last, when set) in key order (descending when
// reverse), until visit returns false; it counts what it read towards
// dropping pages. Values are valid only during visit.
func (c *Store) walk(bucket string, prefix, last []byte, reverse bool, visit func(k, v []byte) bool) {
	var read uint64
	_ = c.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		cur := b.Cursor()
		for k, v := seekCold(cur, prefix, last, reverse); k != nil && bytes.HasPrefix(k, prefix); k, v = step(cur, reverse) {
			read += uint64(len(k) + len(v)) // values sit in the leaf pages walked
			if !visit(k, v) {
				break
			}
		}
		return nil
	})
	c.noteRead(read)
}

// FileScan is Scan of what the file holds, without the queued writes (a
// snapshot's cold section, read while the FSM goes on writing).
func (c *Store) FileScan(bucket, prefix string, reverse bool, skip int, fn func(string, Record) bool) {
	p := []byte(prefix)
	var last []byte // key of the last record passed over or handed out
	pos := 0        // records walked: passed over or handed out
	gen, kept, ok := c.position(bucket, prefix, reverse, skip)
	if ok {
		last, pos = kept, skip
	} else if skip > 0 {
		c.walk(bucket, p, nil, reverse, func(k, _ []byte) bool {
			last = append(last[:0], k...)
			pos++
			return pos < skip
		})
		if pos < skip {
			return // fewer records than skip
		}
		c.keepPosition(gen, bucket, prefix, reverse, pos, last)
	}
	for {
		var chunk []kv
		var at []int // each record's position
		c.walk(bucket, p, last, reverse, func(k, v []byte) bool {
			pos++
			if r, ok := decodeColdValue(v); ok {
				chunk = append(chunk, kv{string(k), r})
				at = append(at, pos)
			}
			last = append(last[:0], k...)
			return len(chunk) < coldChunk
		})
		for i, e := range chunk {
			if !fn(e.key, e.rec) {
				// where the next page starts
				c.keepPosition(gen, bucket, prefix, reverse, at[i], []byte(e.key))
				return
			}
		}
		if len(chunk) < coldChunk {
			return
		}
	}
}

// position returns the key of the skip-th record of a scan, when a scan
// of the same range kept it since the last op was queued; and the
// generation to keep a position found now with.
func (c *Store) position(bucket, prefix string, reverse bool, skip int) (gen uint64, key []byte, ok bool) {
	c.cntMu.Lock()
	defer c.cntMu.Unlock()
	if skip == 0 {
		return c.cntGen, nil, false
	}
	k, ok := c.posCache[positionKey(bucket, prefix, reverse, skip)]
	return c.cntGen, []byte(k), ok
}

// keepPosition keeps key as the pos-th record of a scan of the range, if
// no op was queued since gen: page N+1 of a history then starts where
// page N ended instead of walking every row before it.
func (c *Store) keepPosition(gen uint64, bucket, prefix string, reverse bool, pos int, key []byte) {
	c.cntMu.Lock()
	defer c.cntMu.Unlock()
	if c.cntGen != gen {
		return
	}
	if c.posCache == nil || len(c.posCache) >= countCacheMax {
		c.posCache = map[string]string{}
	}
	c.posCache[positionKey(bucket, prefix, reverse, pos)] = string(key)
}

func positionKey(bucket, prefix string, reverse bool, pos int) string {
	dir := "f"
	if reverse {
		dir = "r"
	}
	return bucket + "\x00" + prefix + "\x00" + dir + strconv.Itoa(pos)
}

// seekCold positions cur at the first record of a scan, or after last.
func seekCold(cur *bbolt.Cursor, prefix, last []byte, reverse bool) ([]byte, []byte) {
	if last != nil {
		k, v := cur.Seek(last)
		if reverse {
			if k == nil {
				return cur.Last()
			}
			return cur.Prev() // Seek lands on last itself or the next key
		}
		if k != nil && bytes.Equal(k, last) {
			return cur.Next()
		}
		return k, v
	}
	if !reverse {
		return cur.Seek(prefix)
	}
	end := prefixEnd(prefix)
	if end == nil {
		return cur.Last()
	}
	if k, _ := cur.Seek(end); k == nil {
		return cur.Last()
	}
	return cur.Prev()
}

func step(cur *bbolt.Cursor, reverse bool) ([]byte, []byte) {
	if reverse {
		return cur.Prev()
	}
	return cur.Next()
}

// prefixEnd is the smallest key greater than every key with prefix (nil:
// none, the prefix is empty or all 0xff).
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// faultAround is how much more than it reads a scan maps: the kernel maps
// up to 16 pages around each page fault (fault_around_bytes, 64 KiB) when
// they are in the page cache, and a bucket's leaves in key order lie
// scattered over the file, among other keys' pages.
const faultAround = 16

// noteRead counts bytes read, so large reads also make dropping pages due.
func (c *Store) noteRead(n uint64) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	c.touched += n * faultAround
	if c.touched >= coldDropAfter {
		c.dropPagesLocked()
	}
	c.mu.Unlock()
}

// Buckets lists the disk buckets, sorted.
func (c *Store) Buckets() []string { return slices.Sorted(maps.Keys(c.names)) }

// Path is the file's path.
func (c *Store) Path() string { return c.path }
