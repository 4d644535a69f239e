package naming

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Answers of Java Nacos 1.4.8 to POST /v1/ns/instance?...&metadata=<raw>,
// checked on the reference server (nil: rendered "metadata":null).
func TestParseMetadataAsJackson(t *testing.T) {
	cases := []struct {
		raw  string
		want map[string]string
		bad  bool
	}{
		{raw: "null", want: nil},
		{raw: " null", want: nil},
		{raw: "null x", want: nil},
		{raw: "null,", want: nil},
		{raw: "nullx", bad: true},
		{raw: "NULL", bad: true},
		{raw: "truex", bad: true},
		{raw: "true", bad: true},
		{raw: "1", bad: true},
		{raw: `"x"`, bad: true},
		{raw: "[]", bad: true},
		{raw: "{} x", want: map[string]string{}},
		{raw: "{}}", want: map[string]string{}},
		{raw: `{"a":1}{`, want: map[string]string{"a": "1"}},
		{raw: "1 a=b", want: map[string]string{"1 a": "b"}},
		{raw: `{"a":[]}`, bad: true},
		{raw: `{"a":1.50}`, want: map[string]string{"a": "1.50"}},
		{raw: `{"a":1e3}`, want: map[string]string{"a": "1e3"}},
		{raw: `{"a":null}`, want: map[string]string{}},
		{raw: `{"a":-0}`, want: map[string]string{"a": "-0"}},
		{raw: `{"a":01}`, bad: true},
		{raw: "", want: map[string]string{}},
		// String.split drops trailing empty strings (the referee answers
		// ok to metadata=",")
		{raw: ",", want: map[string]string{}},
		{raw: ",,", want: map[string]string{}},
		{raw: "a=1,", want: map[string]string{"a": "1"}},
		{raw: "a=b=", want: map[string]string{"a": "b"}},
		{raw: "=b", want: map[string]string{"": "b"}},
		{raw: "a=", bad: true},
		{raw: "a=1,,b=2", bad: true},
	}
	for _, c := range cases {
		got, err := ParseMetadata(c.raw)
		if c.bad {
			if ce := asCompat(err); ce == nil || ce.Body != "caused: metadata format incorrect:"+c.raw+";" {
				t.Errorf("%q: want the format error, got %v %v", c.raw, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%q: got %#v %v, want %#v", c.raw, got, err, c.want)
		}
	}
}

// An expired Java client re-registers with metadata=null: the instance is
// listed again with "metadata":null (ephemeral) or {} (persistent, which
// Java reads back through its store), patch sets null, and batch metadata
// updates answer an empty list where Java's putAll throws.
func TestNullMetadataAsJava(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	svc := "DEFAULT_GROUP@@nullmeta"
	e.register(svc, "10.0.0.1", 80, func(in *Instance) { in.Metadata = nil; in.Weight = 0 })
	e.register(svc, "10.0.0.2", 80, func(in *Instance) { in.Metadata = nil; in.Ephemeral = false })
	b, err := e.reg.List(ListQuery{NamespaceID: DefaultNamespace, ServiceName: svc})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"ip":"10.0.0.1","port":80,"valid":true,"healthy":true,"marked":false,"instanceId":"10.0.0.1#80#DEFAULT#DEFAULT_GROUP@@nullmeta","metadata":null,`) ||
		!strings.Contains(s, `"instanceId":"10.0.0.2#80#DEFAULT#DEFAULT_GROUP@@nullmeta","metadata":{},`) {
		t.Fatalf("list: %s", s)
	}
	batch := func(md map[string]string, del bool, ct string) string {
		updated, err := e.reg.MetadataBatch(ctx, MetadataBatchForm{NamespaceID: DefaultNamespace, ServiceName: svc,
			ConsistencyType: ct, Metadata: md, Delete: del})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string][]string{"updated": updated})
		return string(b)
	}
	for _, c := range []struct {
		md   map[string]string
		del  bool
		ct   string
		want string
	}{
		{nil, false, "ephemeral", `{"updated":[]}`},
		{nil, true, "persist", `{"updated":[]}`},
		{map[string]string{"k": "v"}, false, "ephemeral", `{"updated":[]}`}, // putAll on a null map
		{map[string]string{}, true, "ephemeral", `{"updated":["10.0.0.1:80:unknown:DEFAULT:ephemeral"]}`},
		{map[string]string{"k": "v"}, false, "persist", `{"updated":["10.0.0.2:80:unknown:DEFAULT:persist"]}`},
		{map[string]string{"k": "v"}, false, "other", `{"updated":[]}`},
	} {
		if got := batch(c.md, c.del, c.ct); got != c.want {
			t.Errorf("batch %v del=%v %s: %s, want %s", c.md, c.del, c.ct, got, c.want)
		}
	}
	detail := func() string {
		b, err := e.reg.Detail(DefaultNamespace, svc, DefaultCluster, "10.0.0.1", 80)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	patch := func(md map[string]string, set bool) {
		err := e.reg.Patch(ctx, PatchForm{NamespaceID: DefaultNamespace, ServiceName: svc, ClusterName: DefaultCluster,
			IP: "10.0.0.1", Port: 80, Metadata: md, SetMetadata: set})
		if err != nil {
			t.Fatal(err)
		}
	}
	patch(map[string]string{"a": "b"}, true)
	if d := detail(); !strings.HasSuffix(d, `"metadata":{"a":"b"}}`) {
		t.Fatalf("after patch a=b: %s", d)
	}
	patch(nil, false)
	if d := detail(); !strings.HasSuffix(d, `"metadata":{"a":"b"}}`) {
		t.Fatalf("patch without metadata changed it: %s", d)
	}
	patch(nil, true)
	if d := detail(); !strings.HasSuffix(d, `"metadata":null}`) {
		t.Fatalf("after patch metadata=null: %s", d)
	}
}
