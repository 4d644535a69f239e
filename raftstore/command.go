package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// CommandType is the first byte of every raft log entry written by Store.
// Values live in raft logs on disk: append only, never renumber.
type CommandType uint8

// Command types.
const (
	// CmdBatch is a Batch: conditions checked, then operations applied.
	// Written until the checksummed CmdBatchSum replaced it; still read.
	CmdBatch CommandType = 1
	// CmdBatchSum is a CmdBatch payload followed by its CRC-32C (4 bytes,
	// big endian), so a damaged entry on disk is detected instead of
	// applied. Every entry Store writes has this type.
	CmdBatchSum CommandType = 2
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// OpKind says what an Op does. Values live in raft logs on disk: append
// only, never renumber.
type OpKind uint8

// Op kinds.
const (
	// OpPut sets Bucket/Key to Value.
	OpPut OpKind = 1
	// OpDelete removes Bucket/Key; deleting an absent key is not an error.
	OpDelete OpKind = 2
)

// String returns the kind's name.
func (k OpKind) String() string {
	switch k {
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	default:
		return fmt.Sprintf("OpKind(%d)", uint8(k))
	}
}

// Op is one write in a Batch.
type Op struct {
	// Kind is OpPut or OpDelete.
	Kind OpKind
	// Bucket names the key space; it must not be empty.
	Bucket string
	// Key is the key inside Bucket; the empty key is allowed.
	Key string
	// Value is the new value for OpPut (ignored for OpDelete). Apply copies
	// it; values handed out by Get, Scan and Watch are shared and must
	// never be modified.
	Value []byte
}

// CondKind says what a Cond checks. Values live in raft logs on disk:
// append only, never renumber.
type CondKind uint8

// Condition kinds.
const (
	// CondAbsent holds when Bucket/Key does not exist.
	CondAbsent CondKind = 1
	// CondExists holds when Bucket/Key exists.
	CondExists CondKind = 2
	// CondRev holds when Bucket/Key exists and its Record.Rev equals
	// Cond.Rev. An absent key never satisfies CondRev.
	CondRev CondKind = 3
)

// String returns the kind's name.
func (k CondKind) String() string {
	switch k {
	case CondAbsent:
		return "absent"
	case CondExists:
		return "exists"
	case CondRev:
		return "rev"
	default:
		return fmt.Sprintf("CondKind(%d)", uint8(k))
	}
}

// Cond is a precondition of a Batch, checked against the state before any
// Op of the batch is applied.
type Cond struct {
	// Kind is CondAbsent, CondExists or CondRev.
	Kind CondKind
	// Bucket and Key name the record checked.
	Bucket, Key string
	// Rev is the required Record.Rev for CondRev.
	Rev uint64
}

// Batch is the single write command: if every Cond holds, every Op is
// applied in order, atomically, at one log index; otherwise nothing changes
// and Apply returns a *CondError.
type Batch struct {
	// Conds are all checked before any Op is applied.
	Conds []Cond
	// Ops are applied in order; a later Op on the same key wins.
	Ops []Op
}

// Record is a stored value.
type Record struct {
	// Value is the stored bytes; shared, never modify it.
	Value []byte
	// Rev is the raft log index of the batch that last set the record.
	Rev uint64
}

// validate reports a batch that the FSM could never apply.
func (b Batch) validate() error {
	for i, c := range b.Conds {
		if c.Kind < CondAbsent || c.Kind > CondRev {
			return fmt.Errorf("raftstore: cond %d: unknown kind %d: %w", i, uint8(c.Kind), ErrInvalidBatch)
		}
		if c.Bucket == "" {
			return fmt.Errorf("raftstore: cond %d: empty bucket: %w", i, ErrInvalidBatch)
		}
	}
	for i, op := range b.Ops {
		if op.Kind < OpPut || op.Kind > OpDelete {
			return fmt.Errorf("raftstore: op %d: unknown kind %d: %w", i, uint8(op.Kind), ErrInvalidBatch)
		}
		if op.Bucket == "" {
			return fmt.Errorf("raftstore: op %d: empty bucket: %w", i, ErrInvalidBatch)
		}
	}
	return nil
}

// Wire format of a batch log entry (all integers unsigned varints,
// strings and byte slices length-prefixed with a uvarint):
//
//	byte CmdBatchSum (CmdBatch in entries written before it)
//	uvarint len(Conds), then per cond: byte Kind, string Bucket, string Key, uvarint Rev
//	uvarint len(Ops),   then per op:   byte Kind, string Bucket, string Key, bytes Value
//	CmdBatchSum only: uint32 big endian CRC-32C (Castagnoli) of the bytes
//	between the type byte and the checksum
//
// Deletes carry an empty value. Decoding is strict: unknown kinds, a wrong
// checksum and trailing bytes are errors.

// encodeBatch encodes b as a CmdBatchSum log entry. The result shares no
// memory with b, which is how Apply copies its input.
func encodeBatch(b Batch) []byte {
	buf := encodeBatchPayload(CmdBatchSum, b, 4)
	return binary.BigEndian.AppendUint32(buf, crc32.Checksum(buf[1:], crcTable))
}

// encodeBatchPayload encodes the type byte t and b's payload, with room
// for extra more bytes.
func encodeBatchPayload(t CommandType, b Batch, extra int) []byte {
	n := 1 + 2*binary.MaxVarintLen64 + extra
	for _, c := range b.Conds {
		n += 1 + 3*binary.MaxVarintLen64 + len(c.Bucket) + len(c.Key)
	}
	for _, op := range b.Ops {
		n += 1 + 3*binary.MaxVarintLen64 + len(op.Bucket) + len(op.Key) + len(op.Value)
	}
	buf := make([]byte, 0, n)
	buf = append(buf, byte(t))
	buf = binary.AppendUvarint(buf, uint64(len(b.Conds)))
	for _, c := range b.Conds {
		buf = append(buf, byte(c.Kind))
		buf = appendString(buf, c.Bucket)
		buf = appendString(buf, c.Key)
		buf = binary.AppendUvarint(buf, c.Rev)
	}
	buf = binary.AppendUvarint(buf, uint64(len(b.Ops)))
	for _, op := range b.Ops {
		buf = append(buf, byte(op.Kind))
		buf = appendString(buf, op.Bucket)
		buf = appendString(buf, op.Key)
		if op.Kind == OpDelete {
			buf = binary.AppendUvarint(buf, 0)
		} else {
			buf = appendBytes(buf, op.Value)
		}
	}
	return buf
}

// decodeEntry decodes a whole log entry written by Store (type byte
// first). Values are copied out of data.
func decodeEntry(data []byte) (Batch, error) {
	if len(data) == 0 {
		return Batch{}, errors.New("empty entry")
	}
	switch t := CommandType(data[0]); t {
	case CmdBatch:
		return decodeBatch(data[1:])
	case CmdBatchSum:
		p := data[1:]
		if len(p) < 4 {
			return Batch{}, errShort
		}
		body, sum := p[:len(p)-4], binary.BigEndian.Uint32(p[len(p)-4:])
		if got := crc32.Checksum(body, crcTable); got != sum {
			return Batch{}, fmt.Errorf("checksum mismatch: stored %08x, computed %08x", sum, got)
		}
		return decodeBatch(body)
	default:
		return Batch{}, fmt.Errorf("%w %d", errUnknownCommand, t)
	}
}

var errUnknownCommand = errors.New("unknown command type")

// decodeBatch decodes the payload of a batch entry (after the type byte,
// without a checksum). Values are copied out of data.
func decodeBatch(data []byte) (Batch, error) {
	d := decoder{buf: data}
	var b Batch
	nc := d.count()
	if nc > 0 {
		b.Conds = make([]Cond, 0, nc)
	}
	for i := 0; i < nc && d.err == nil; i++ {
		c := Cond{Kind: CondKind(d.byte())}
		c.Bucket = d.string()
		c.Key = d.string()
		c.Rev = d.uvarint()
		if d.err == nil && (c.Kind < CondAbsent || c.Kind > CondRev) {
			d.fail(fmt.Errorf("cond %d: unknown kind %d", i, uint8(c.Kind)))
		}
		b.Conds = append(b.Conds, c)
	}
	no := d.count()
	if no > 0 {
		b.Ops = make([]Op, 0, no)
	}
	for i := 0; i < no && d.err == nil; i++ {
		op := Op{Kind: OpKind(d.byte())}
		op.Bucket = d.string()
		op.Key = d.string()
		v := d.bytes()
		switch op.Kind {
		case OpPut:
			op.Value = v
		case OpDelete:
		default:
			d.fail(fmt.Errorf("op %d: unknown kind %d", i, uint8(op.Kind)))
		}
		b.Ops = append(b.Ops, op)
	}
	d.end()
	if d.err != nil {
		return Batch{}, d.err
	}
	return b, nil
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func appendBytes(buf, p []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(p)))
	return append(buf, p...)
}

var errShort = errors.New("unexpected end of data")

// decoder reads the varint encoding used by log entries and snapshots.
// The first error sticks; later reads return zero values.
type decoder struct {
	buf []byte
	off int
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = fmt.Errorf("offset %d: %w", d.off, err)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.buf) {
		d.fail(errShort)
		return 0
	}
	b := d.buf[d.off]
	d.off++
	return b
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf[d.off:])
	if n <= 0 {
		d.fail(errors.New("bad uvarint"))
		return 0
	}
	d.off += n
	return v
}

// count reads a length that must fit in the remaining data (every counted
// element takes at least one byte), so corrupt input cannot force a huge
// allocation.
func (d *decoder) count() int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.buf)-d.off) {
		d.fail(fmt.Errorf("count %d exceeds remaining %d bytes", v, len(d.buf)-d.off))
		return 0
	}
	return int(v)
}

func (d *decoder) raw() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	p := d.buf[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) string() string { return string(d.raw()) }

// bytes returns a copy (never nil on success, so a put of an empty value
// reads back as a present, empty value).
func (d *decoder) bytes() []byte {
	p := d.raw()
	if d.err != nil {
		return nil
	}
	return append(make([]byte, 0, len(p)), p...)
}

func (d *decoder) end() {
	if d.err == nil && d.off != len(d.buf) {
		d.fail(fmt.Errorf("%d trailing bytes", len(d.buf)-d.off))
	}
}
