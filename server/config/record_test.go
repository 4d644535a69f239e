package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// Records carrying a content are stored as v2 (JSON header, raw content);
// v1 records (all JSON) written before still decode.
func TestRecordV2RoundTripAndV1(t *testing.T) {
	user := "nacos"
	contents := []string{"", "a: 1\nb: \"2\"\n", "中文 \u2028 \x00\x01 </script>", strings.Repeat("x", 1<<20)}
	for _, c := range contents {
		in := &Info{ID: 7, DataID: "d", Group: "G", Content: c, MD5: MD5Hex(c), Created: 1, Modified: 2, SrcUser: &user, Tags: []string{"t1"}}
		b := encode(in)
		if b[0] != recordV2 {
			t.Fatalf("encode(*Info) version %d, want %d", b[0], recordV2)
		}
		if in.Content != c {
			t.Fatal("encode changed the record it was given")
		}
		var out Info
		if err := decode(b, &out); err != nil {
			t.Fatal(err)
		}
		if out.Content != c || out.MD5 != in.MD5 || out.ID != 7 || *out.SrcUser != user || len(out.Tags) != 1 {
			t.Fatalf("round trip of %d bytes: got %+v", len(c), out)
		}
		h := &History{Nid: 3, ID: 7, DataID: "d", Group: "G", Content: c, MD5: MD5Hex(c), Op: "U", Modified: 9}
		var hout History
		if err := decode(encode(h), &hout); err != nil || hout.Content != c || hout.Op != "U" || hout.Nid != 3 {
			t.Fatalf("history round trip: %+v, %v", hout, err)
		}
		for _, v := range []any{&Beta{Content: c, BetaIps: "1.1.1.1"}, &Tag{Content: c, Tag: "x"}} {
			if err := decode(encode(v), v); err != nil || *contentOf(v) != c {
				t.Fatalf("%T round trip: %v", v, err)
			}
		}
		// a v1 record, as every store written before v2 holds
		raw, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var old Info
		if err := decode(append([]byte{recordV1}, raw...), &old); err != nil || old.Content != c || old.MD5 != in.MD5 {
			t.Fatalf("v1 record: %+v, %v", old, err)
		}
	}
	// records without content stay v1
	if b := encode(&Tenant{ID: "ns"}); b[0] != recordV1 {
		t.Fatalf("encode(*Tenant) version %d", b[0])
	}
}

func TestRecordV2Damaged(t *testing.T) {
	good := encode(&Info{DataID: "d", Content: "c"})
	for name, b := range map[string][]byte{
		"empty":          nil,
		"unknown":        {9, '{', '}'},
		"no length":      {recordV2},
		"length too big": {recordV2, 0x7f, '{', '}'},
		"bad header":     append([]byte{recordV2, 3}, "{x}c"...),
		"truncated":      good[:5],
	} {
		var in Info
		if err := decode(b, &in); err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, in)
		}
	}
	var tn Tenant // a v2 record into a type without content
	if err := decode(good, &tn); err == nil {
		t.Error("v2 into *Tenant: no error")
	}
}
