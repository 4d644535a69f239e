package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// checkBoltFile checks the page structure of a bolt file by reading it
// with plain reads, never through bolt: bolt trusts its pages, and a
// zeroed branch page sends its cursor into an endless descent (out of
// memory) or an "invalid page type" panic. It follows bolt's file format
// (version 2): two meta pages, a B+tree of branch and leaf pages per
// bucket (inline buckets inside their parent's value), a free list.
//
// It reports the first structural error; leaked counts pages that are
// neither reachable nor free (space an interrupted write lost, harmless),
// and metaWarn describes a damaged meta page bolt will skip.
func checkBoltFile(path string) (leaked int, metaWarn string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, "", err
	}
	c := &boltChecker{r: f, size: fi.Size()}
	if metaWarn, err = c.readMeta(); err != nil {
		return 0, metaWarn, err
	}
	c.state = make([]uint8, c.hwm)
	c.state[0], c.state[1] = pageMeta, pageMeta
	if err := c.walk(c.root, 0); err != nil {
		return 0, metaWarn, err
	}
	if err := c.freelist(); err != nil {
		return 0, metaWarn, err
	}
	if c.flPage == boltNoFreelist {
		// not synced (NoFreelistSync): bolt frees every page no tree
		// reaches when it opens the file, so none is lost
		return 0, metaWarn, nil
	}
	for _, s := range c.state {
		if s == 0 {
			leaked++
		}
	}
	return leaked, metaWarn, nil
}

// bolt's on-disk constants (go.etcd.io/bbolt page.go, db.go).
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	boltHeader       = 16 // page: id u64, flags u16, count u16, overflow u32
	boltElem         = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	boltMetaSumSpan  = 56 // meta bytes covered by its checksum
	boltBranch       = 0x01
	boltLeaf         = 0x02
	boltFreelistPage = 0x10
	boltBucketLeaf   = 0x01
	boltNoFreelist   = ^uint64(0)
	boltMaxDepth     = 64
)

// page states in boltChecker.state
const (
	pageMeta uint8 = iota + 1
	pageTree
	pageFreelist
	pageFree
)

type boltChecker struct {
	r        io.ReaderAt
	size     int64
	pageSize int
	hwm      uint64 // high-water mark: pages [0, hwm) exist
	root     uint64 // root bucket's page
	flPage   uint64 // free list page
	state    []uint8
}

// readMeta picks the meta page bolt will use: the valid one with the
// higher transaction id.
func (c *boltChecker) readMeta() (warn string, err error) {
	type meta struct {
		pageSize                 int
		root, freelist, pgid, tx uint64
	}
	read := func(off int64) (meta, error) {
		buf := make([]byte, boltHeader+boltMetaSumSpan+8)
		if _, err := c.r.ReadAt(buf, off); err != nil {
			return meta{}, fmt.Errorf("read: %w", err)
		}
		m := buf[boltHeader:]
		le := binary.LittleEndian
		h := fnv.New64a()
		_, _ = h.Write(m[:boltMetaSumSpan])
		switch {
		case le.Uint32(m[0:]) != boltMagic:
			return meta{}, errors.New("bad magic")
		case le.Uint32(m[4:]) != boltVersion:
			return meta{}, fmt.Errorf("version %d", le.Uint32(m[4:]))
		case le.Uint64(m[boltMetaSumSpan:]) != h.Sum64():
			return meta{}, errors.New("checksum mismatch")
		}
		return meta{pageSize: int(le.Uint32(m[8:])), root: le.Uint64(m[16:]), freelist: le.Uint64(m[32:]),
			pgid: le.Uint64(m[40:]), tx: le.Uint64(m[48:])}, nil
	}
	m0, err0 := read(0)
	ps := os.Getpagesize()
	if err0 == nil {
		ps = m0.pageSize
	}
	m1, err1 := read(int64(ps))
	var m meta
	switch {
	case err0 != nil && err1 != nil:
		return "", fmt.Errorf("both bolt meta pages are invalid (page 0: %v; page 1: %v)", err0, err1)
	case err0 != nil:
		m, warn = m1, "bolt meta page 0 is invalid ("+err0.Error()+"); bolt uses page 1, the transaction before it"
	case err1 != nil:
		m, warn = m0, "bolt meta page 1 is invalid ("+err1.Error()+"); bolt uses page 0, the transaction before it"
	case m1.tx > m0.tx:
		m = m1
	default:
		m = m0
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 {
		return warn, fmt.Errorf("meta: page size %d", m.pageSize)
	}
	if int64(m.pgid)*int64(m.pageSize) > c.size || m.pgid < 3 {
		return warn, fmt.Errorf("meta: %d pages of %d bytes, file has %d bytes", m.pgid, m.pageSize, c.size)
	}
	c.pageSize, c.hwm, c.root, c.flPage = m.pageSize, m.pgid, m.root, m.freelist
	return warn, nil
}

// page reads page id with its overflow pages, checking the header's id.
func (c *boltChecker) page(id uint64) ([]byte, error) {
	if id < 2 || id >= c.hwm {
		return nil, fmt.Errorf("page %d: out of bounds (%d pages)", id, c.hwm)
	}
	hdr := make([]byte, boltHeader)
	if _, err := c.r.ReadAt(hdr, int64(id)*int64(c.pageSize)); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if got := binary.LittleEndian.Uint64(hdr); got != id {
		return nil, fmt.Errorf("page %d: header names page %d", id, got)
	}
	overflow := uint64(binary.LittleEndian.Uint32(hdr[12:]))
	if id+overflow >= c.hwm {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the end (%d pages)", id, overflow, c.hwm)
	}
	buf := make([]byte, (overflow+1)*uint64(c.pageSize))
	if _, err := c.r.ReadAt(buf, int64(id)*int64(c.pageSize)); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	return buf, nil
}

// claim marks pages [id, id+n] as in state s; a page claimed twice is
// referenced twice (or freed while in use).
func (c *boltChecker) claim(id, overflow uint64, s uint8) error {
	for p := id; p <= id+overflow; p++ {
		if prev := c.state[p]; prev != 0 {
			switch {
			case s == pageFree && prev == pageFree:
				return fmt.Errorf("page %d: freed twice", p)
			case s == pageFree:
				return fmt.Errorf("page %d: on the free list but in use", p)
			default:
				return fmt.Errorf("page %d: referenced twice", p)
			}
		}
		c.state[p] = s
	}
	return nil
}

// walk checks the subtree rooted at page id.
func (c *boltChecker) walk(id uint64, depth int) error {
	if depth > boltMaxDepth {
		return fmt.Errorf("page %d: tree deeper than %d", id, boltMaxDepth)
	}
	buf, err := c.page(id)
	if err != nil {
		return err
	}
	if err := c.claim(id, uint64(binary.LittleEndian.Uint32(buf[12:])), pageTree); err != nil {
		return err
	}
	return c.node(id, buf, depth)
}

// node checks one branch or leaf page (buf starts at its header), also an
// inline bucket's page inside a value.
func (c *boltChecker) node(id uint64, buf []byte, depth int) error {
	le := binary.LittleEndian
	flags, count := le.Uint16(buf[8:]), int(le.Uint16(buf[10:]))
	if boltHeader+count*boltElem > len(buf) {
		return fmt.Errorf("page %d: %d elements do not fit", id, count)
	}
	span := func(i int, pos, n uint64) error {
		if end := uint64(boltHeader+i*boltElem) + pos + n; end > uint64(len(buf)) {
			return fmt.Errorf("page %d: element %d runs past the page", id, i)
		}
		return nil
	}
	switch flags {
	case boltBranch:
		if count == 0 {
			return fmt.Errorf("page %d: empty branch page", id)
		}
		for i := range count {
			e := buf[boltHeader+i*boltElem:]
			if err := span(i, uint64(le.Uint32(e[0:])), uint64(le.Uint32(e[4:]))); err != nil {
				return err
			}
			if err := c.walk(le.Uint64(e[8:]), depth+1); err != nil {
				return err
			}
		}
	case boltLeaf:
		for i := range count {
			e := buf[boltHeader+i*boltElem:]
			eflags, pos, ksize, vsize := le.Uint32(e[0:]), uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
			if err := span(i, pos, ksize+vsize); err != nil {
				return err
			}
			if eflags&boltBucketLeaf == 0 {
				continue
			}
			start := uint64(boltHeader+i*boltElem) + pos + ksize
			v := buf[start : start+vsize]
			if len(v) < 16 {
				return fmt.Errorf("page %d: element %d: short bucket header", id, i)
			}
			if root := le.Uint64(v); root != 0 {
				if err := c.walk(root, depth+1); err != nil {
					return err
				}
				continue
			}
			inline := v[16:]
			if len(inline) < boltHeader || le.Uint16(inline[8:]) != boltLeaf {
				return fmt.Errorf("page %d: element %d: bad inline bucket", id, i)
			}
			if err := c.node(id, inline, depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("page %d: invalid page type %#x", id, flags)
	}
	return nil
}

// freelist checks the free list page: every free page exists, is freed
// once and is not in use.
func (c *boltChecker) freelist() error {
	if c.flPage == boltNoFreelist {
		return nil
	}
	buf, err := c.page(c.flPage)
	if err != nil {
		return fmt.Errorf("free list: %w", err)
	}
	le := binary.LittleEndian
	if flags := le.Uint16(buf[8:]); flags != boltFreelistPage {
		return fmt.Errorf("free list page %d: invalid page type %#x", c.flPage, flags)
	}
	if err := c.claim(c.flPage, uint64(le.Uint32(buf[12:])), pageFreelist); err != nil {
		return err
	}
	count, first := uint64(le.Uint16(buf[10:])), uint64(0)
	if count == 0xFFFF { // the real count is the first element
		if len(buf) < boltHeader+8 {
			return fmt.Errorf("free list page %d: truncated", c.flPage)
		}
		count, first = le.Uint64(buf[boltHeader:]), 1
	}
	if (first+count)*8+boltHeader > uint64(len(buf)) {
		return fmt.Errorf("free list page %d: %d ids do not fit", c.flPage, count)
	}
	for i := first; i < first+count; i++ {
		id := le.Uint64(buf[boltHeader+i*8:])
		if id < 2 || id >= c.hwm {
			return fmt.Errorf("free list: page %d out of bounds (%d pages)", id, c.hwm)
		}
		if err := c.claim(id, 0, pageFree); err != nil {
			return fmt.Errorf("free list: %w", err)
		}
	}
	return nil
}
