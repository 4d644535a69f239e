package raftstore

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestBatchEncodingRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Batch
		want Batch
	}{
		{"empty", Batch{}, Batch{}},
		{"put", Batch{Ops: []Op{put("b", "k", "v")}}, Batch{Ops: []Op{put("b", "k", "v")}}},
		{"empty key and value", Batch{Ops: []Op{{Kind: OpPut, Bucket: "b", Value: nil}}},
			Batch{Ops: []Op{{Kind: OpPut, Bucket: "b", Value: []byte{}}}}},
		{"delete drops value", Batch{Ops: []Op{{Kind: OpDelete, Bucket: "b", Key: "k", Value: []byte("x")}}},
			Batch{Ops: []Op{del("b", "k")}}},
		{"conds and ops",
			Batch{
				Conds: []Cond{{Kind: CondAbsent, Bucket: "b", Key: "a"}, {Kind: CondExists, Bucket: "c", Key: "d"}, {Kind: CondRev, Bucket: "b", Key: "k", Rev: 1 << 40}},
				Ops:   []Op{put("b", "k", "v"), del("c", "d"), put("b", "\x00ü", string(bytes.Repeat([]byte{0xff}, 300)))},
			},
			Batch{
				Conds: []Cond{{Kind: CondAbsent, Bucket: "b", Key: "a"}, {Kind: CondExists, Bucket: "c", Key: "d"}, {Kind: CondRev, Bucket: "b", Key: "k", Rev: 1 << 40}},
				Ops:   []Op{put("b", "k", "v"), del("c", "d"), put("b", "\x00ü", string(bytes.Repeat([]byte{0xff}, 300)))},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := encodeBatch(tt.in)
			if CommandType(data[0]) != CmdBatchSum {
				t.Fatalf("type byte = %d, want %d", data[0], CmdBatchSum)
			}
			got, err := decodeEntry(data)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			for i := range got.Ops {
				if got.Ops[i].Kind == OpDelete && got.Ops[i].Value != nil {
					t.Errorf("op %d: delete decoded with value %q", i, got.Ops[i].Value)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("round trip:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// TestBatchEncodingStable pins the wire bytes: log entries on disk must
// decode forever, those written before the checksum included.
func TestBatchEncodingStable(t *testing.T) {
	t.Parallel()
	b := Batch{Conds: []Cond{{Kind: CondRev, Bucket: "b", Key: "k", Rev: 300}}, Ops: []Op{put("b", "k", "v"), del("b", "x")}}
	payload := []byte{1, 3, 1, 'b', 1, 'k', 0xac, 0x02, 2, 1, 1, 'b', 1, 'k', 1, 'v', 2, 1, 'b', 1, 'x', 0}
	want := append(append([]byte{2}, payload...), 0xa7, 0x36, 0x48, 0x68)
	if got := encodeBatch(b); !bytes.Equal(got, want) {
		t.Errorf("encodeBatch = %v, want %v", got, want)
	}
	for _, entry := range [][]byte{want, append([]byte{1}, payload...)} {
		got, err := decodeEntry(entry)
		if err != nil {
			t.Fatalf("decodeEntry(%v): %v", entry, err)
		}
		if !reflect.DeepEqual(got, b) {
			t.Errorf("decodeEntry(%v) = %#v, want %#v", entry, got, b)
		}
	}
}

// TestDecodeEntryDetectsDamage flips and zeroes bytes of a checksummed
// entry: every damaged copy must fail to decode.
func TestDecodeEntryDetectsDamage(t *testing.T) {
	t.Parallel()
	entry := encodeBatch(Batch{Conds: []Cond{{Kind: CondRev, Bucket: "cfg", Key: "k", Rev: 9}},
		Ops: []Op{put("cfg", "k", string(bytes.Repeat([]byte("content "), 40)))}})
	for i := 1; i < len(entry); i++ {
		for _, damage := range []func(byte) byte{func(b byte) byte { return b ^ 0x10 }, func(byte) byte { return 0 }} {
			d := bytes.Clone(entry)
			d[i] = damage(d[i])
			if bytes.Equal(d, entry) {
				continue
			}
			if b, err := decodeEntry(d); err == nil {
				t.Fatalf("byte %d damaged: decoded %+v", i, b)
			}
		}
	}
	for _, bad := range [][]byte{nil, {2}, {2, 0, 0}, {3, 0, 0}} {
		if _, err := decodeEntry(bad); err == nil {
			t.Errorf("decodeEntry(%v): no error", bad)
		}
	}
}

func TestEncodeCopiesInput(t *testing.T) {
	t.Parallel()
	v := []byte("value")
	data := encodeBatch(Batch{Ops: []Op{{Kind: OpPut, Bucket: "b", Key: "k", Value: v}}})
	copy(v, "XXXXX")
	got, err := decodeEntry(data)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Ops[0].Value) != "value" {
		t.Errorf("value = %q after mutating the input", got.Ops[0].Value)
	}
	copy(data, bytes.Repeat([]byte{0}, len(data)))
	if string(got.Ops[0].Value) != "value" {
		t.Errorf("decoded value shares memory with the entry: %q", got.Ops[0].Value)
	}
}

func TestDecodeBatchErrors(t *testing.T) {
	t.Parallel()
	valid := encodeBatchPayload(CmdBatch, Batch{Conds: []Cond{{Kind: CondAbsent, Bucket: "b", Key: "k"}}, Ops: []Op{put("b", "k", "v")}}, 0)[1:]
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"truncated", valid[:len(valid)-1]},
		{"trailing", append(append([]byte{}, valid...), 0)},
		{"unknown cond kind", []byte{1, 9, 1, 'b', 0, 0, 0}},
		{"unknown op kind", []byte{0, 1, 7, 1, 'b', 0, 0}},
		{"huge count", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"huge string", []byte{1, 1, 0xff, 0xff, 0x03}},
		{"bad varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b, err := decodeBatch(tt.data); err == nil {
				t.Errorf("decodeBatch(%v) = %+v, want error", tt.data, b)
			}
		})
	}
}

func FuzzDecodeBatch(f *testing.F) {
	f.Add(encodeBatchPayload(CmdBatch, Batch{Conds: []Cond{{Kind: CondRev, Bucket: "b", Key: "k", Rev: 7}}, Ops: []Op{put("b", "k", "v"), del("b", "x")}}, 0)[1:])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := decodeBatch(data)
		if err != nil {
			return
		}
		if err := b.validate(); err != nil && !errors.Is(err, ErrInvalidBatch) {
			t.Fatal(err)
		}
		b2, err := decodeEntry(encodeBatch(b))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(b, b2) {
			t.Fatalf("re-encode changed batch: %#v vs %#v", b, b2)
		}
	})
}

func TestBatchValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    Batch
		ok   bool
	}{
		{"empty", Batch{}, true},
		{"ok", Batch{Conds: []Cond{{Kind: CondExists, Bucket: "b"}}, Ops: []Op{put("b", "", "")}}, true},
		{"op kind 0", Batch{Ops: []Op{{Bucket: "b", Key: "k"}}}, false},
		{"op kind 3", Batch{Ops: []Op{{Kind: 3, Bucket: "b", Key: "k"}}}, false},
		{"op empty bucket", Batch{Ops: []Op{{Kind: OpPut, Key: "k"}}}, false},
		{"cond kind 0", Batch{Conds: []Cond{{Bucket: "b"}}}, false},
		{"cond kind 4", Batch{Conds: []Cond{{Kind: 4, Bucket: "b"}}}, false},
		{"cond empty bucket", Batch{Conds: []Cond{{Kind: CondAbsent, Key: "k"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.validate()
			if tt.ok != (err == nil) {
				t.Fatalf("validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidBatch) {
				t.Errorf("error %v does not wrap ErrInvalidBatch", err)
			}
		})
	}
}

func TestErrorAndKindStrings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		got, want string
	}{
		{(&CondError{Index: 2, Cond: Cond{Kind: CondRev, Bucket: "b", Key: "k", Rev: 7}}).Error(), `raftstore: condition 2 failed: rev "b"/"k" rev 7`},
		{(&CondError{Index: 0, Cond: Cond{Kind: CondAbsent, Bucket: "b", Key: "k"}}).Error(), `raftstore: condition 0 failed: absent "b"/"k"`},
		{(&CondError{Cond: Cond{Kind: CondExists, Bucket: "b"}}).Error(), `raftstore: condition 0 failed: exists "b"/""`},
		{CondKind(9).String(), "CondKind(9)"},
		{OpPut.String() + "," + OpDelete.String() + "," + OpKind(0).String(), "put,delete,OpKind(0)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
