package remote

import (
	"encoding/base64"
	"testing"

	"github.com/nacosd/nacosd/compat"
)

// FuzzDecode: no Payload bytes and no body make the decoders panic; a
// decoded Payload encodes to bytes that decode to the same Payload.
func FuzzDecode(f *testing.F) {
	for _, r := range loadGolden(f) {
		raw, _ := base64.StdEncoding.DecodeString(r.Raw)
		f.Add(raw)
	}
	f.Add([]byte{0x12, 0x02, 0x1a, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Payload
		if err := p.Unmarshal(b); err != nil {
			return
		}
		if got := string(PeekType(b)); got != p.Metadata.Type {
			t.Fatalf("PeekType %q, decoded type %q", got, p.Metadata.Type)
		}
		var q Payload
		if err := q.Unmarshal(p.Marshal()); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if q.Metadata.Type != p.Metadata.Type || string(q.Body) != string(p.Body) || len(q.Metadata.Headers) != len(p.Metadata.Headers) {
			t.Fatalf("round trip %+v != %+v", q, p)
		}
		if req, err := DecodeRequest(&p); err == nil && req != nil {
			EncodeRequest(req, "127.0.0.1")
		}
		if d, err := DecodeResponse(p.Metadata.Type, p.Body); err == nil {
			w := compat.NewJSON(64)
			NewPlain(d.Type, d.Response).AppendJSON(w)
			d.Objects("x")
			d.Map("headers")
		}
	})
}

// FuzzDecodeBody: any JSON body of every request class decodes or is
// refused, never panics.
func FuzzDecodeBody(f *testing.F) {
	for _, r := range loadGolden(f) {
		f.Add(r.Type, []byte(r.Body))
	}
	f.Add(TypeConfigBatchListenRequest, []byte(`{"configListenContexts":[null,{"md5":1}],"listen":"x"}`))
	f.Add(TypeConnectionSetupRequest, []byte(`{"labels":{"a":null},"abilityTable":{"x":"yes"}}`))
	f.Fuzz(func(t *testing.T, typ string, body []byte) {
		p := &Payload{Metadata: Metadata{Type: typ, Headers: map[string]string{"a": "b"}}, Body: body}
		if req, err := DecodeRequest(p); err == nil && req != nil {
			EncodeRequest(req, "")
		}
	})
}

// A repeated property reads as its last value (Jackson), and is listed
// once.
func TestRepeatedPropertyLastWins(t *testing.T) {
	ob, release, err := parseObject("X", []byte(`{"a":"1","b":"x","a":"2","c":{"d":1,"d":2}}`))
	defer release()
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := ob.str("a"); s != "2" {
		t.Fatalf("a = %q, want the last value 2", s)
	}
	if k := ob.keys(); len(k) != 3 || k[0] != "b" || k[1] != "a" || k[2] != "c" {
		t.Fatalf("keys %v, want [b a c]", k)
	}
	sub, err := ob.sub("c", "Y")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := sub.int64("d"); n != 2 {
		t.Fatalf("c.d = %d, want 2", n)
	}
	if ob.get("missing") != nil {
		t.Fatal("a missing property has a value")
	}
}
