package config

import (
	"encoding/binary"
	"encoding/json"
	"reflect"
	"testing"
)

// The fast path reads what encode writes (else it would never be taken),
// including the optional fields and the tags.
func TestDecodeInfoFastReadsEncodedHeaders(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, in := range []*Info{
		{DataID: "d", Group: "G", Content: "c"},
		{ID: 1102644204451926016, DataID: "start-76336.yaml", Group: "START", MD5: MD5Hex(""), Created: 1796320104480, // a snowflake id
			Modified: 1796320104480, SrcIP: "127.0.0.1", Type: "text"},
		{ID: 1 << 40, DataID: "app.yaml", Group: "DEFAULT_GROUP", Tenant: "ns-1", AppName: "app", Content: "a: 1\n", MD5: MD5Hex("a: 1\n"),
			Created: 1796320128093, Modified: 1796320128094, SrcUser: s("nacos"), SrcIP: "127.0.0.1", Desc: s("d"), Use: s(""),
			Effect: s("e"), Type: "yaml", Schema: s("s"), Tags: []string{"t1", "t2"}},
		{DataID: "中文", Group: "G", Tags: []string{}},
	} {
		b := encode(in)
		n, k := binary.Uvarint(b[1:])
		var fast Info
		if !decodeInfoFast(b[1+k:1+k+int(n)], &fast) {
			t.Fatalf("fast path refused the header of %+v: %q", in, b[1+k:1+k+int(n)])
		}
		var out Info
		if err := decode(b, &out); err != nil {
			t.Fatal(err)
		}
		want := *in
		if len(want.Tags) == 0 {
			want.Tags = nil // omitempty
		}
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("decoded %+v, want %+v", out, want)
		}
	}
}

func FuzzDecodeInfo(f *testing.F) {
	for _, s := range []string{
		`{"id":7,"dataId":"d","group":"G","content":"","md5":"x","created":1,"modified":2,"srcUser":"nacos","tags":["t1"]}`,
		`{"dataId":"d","srcUser":null,"tags":null}`, `{"tags":[]}`, `{"tags":["a",1]}`, `{"tags":[null]}`, `{"desc":""}`,
		`{"dataId":"a","dataId":"b"}`, `{"DATAID":"x"}`, `{"id":1.5}`, `{"id":"1"}`, `{"dataId":"\u0041"}`, `{} x`,
		`{"x":{"a":1}}`, ` {"type" : "yaml" , "x":null, "y":"z"} `, `{"id":-0}`, `{"group":"\xff"}`, `null`, `[]`,
		`{"id":123456789012345678}`, `{"id":1234567890123456789}`, `{"id":9223372036854775808}`, `{"id":-9223372036854775808}`, `{"tags":["a" , "b" ]}`, `{"tags":[,]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast Info
		if !decodeInfoFast(raw, &fast) {
			return
		}
		var std Info
		if err := json.Unmarshal(raw, &std); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(fast, std) {
			t.Fatalf("fast path read %q as %+v, encoding/json as %+v", raw, fast, std)
		}
	})
}
