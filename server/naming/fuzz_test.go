package naming

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/nacosd/nacosd/compat"
)

func FuzzParseBeat(f *testing.F) {
	for _, s := range []string{
		`{"cluster":"DEFAULT","ip":"10.0.0.5","metadata":{},"period":5000,"port":8080,"scheduled":false,"serviceName":"DEFAULT_GROUP@@demo","stopped":false,"weight":1.0}`,
		`{"ip":"1.1.1.1","port":80,"weight":1,"serviceName":"DEFAULT_GROUP@@svc","cluster":"c","metadata":{"a":"b"},"scheduled":false}`,
		`{"ip":1}`, `{`, `null`, `[]`, `{"port":"80"}`, `{"ephemeral":false,"metadata":null}`,
		`{"IP":"1.1.1.1"}`, `{"ip":"a","ip":"b"}`, `{"port":1e2}`, `{"port":-0,"weight":-1.5e-3}`, `{"port":08}`,
		`{"metadata":{"a":"b","a":"c"}} trailing`, `{"metadata":{"a":1}}`, `{"ip":"\u0041"}`, `{"weight":1e400}`,
		` {"ip" : "x" , "period":5000 ,"stopped":true,"x":null}`, `{"ephemeral":true}`, `{"ip":"\xff"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		// the fast path, when it accepts, reads exactly what encoding/json reads
		var fast BeatInfo
		if parseBeatFast(raw, &fast) {
			std, err := parseBeatStd(raw)
			if err != nil {
				t.Fatalf("fast path accepted %q, encoding/json: %v", raw, err)
			}
			fm := fast.MetadataMap()
			if fast.IP != std.IP || fast.Port != std.Port || fast.ServiceName != std.ServiceName || fast.Cluster != std.Cluster ||
				fast.Weight != std.Weight || (fast.Ephemeral == nil) != (std.Ephemeral == nil) ||
				fast.Ephemeral != nil && *fast.Ephemeral != *std.Ephemeral || (fm == nil) != (std.Metadata == nil) || !maps.Equal(fm, std.Metadata) {
				t.Fatalf("fast path read %q as %+v, encoding/json as %+v", raw, fast, std)
			}
		}
		b, err := ParseBeat(raw)
		if err != nil {
			ce := asCompat(err)
			if ce == nil || ce.Status != 500 || !strings.HasPrefix(ce.Body, "caused: errCode: 101, errMsg: Nacos deserialize for class [com.alibaba.nacos.naming.healthcheck.RsInfo] failed.  ;") {
				t.Fatalf("unexpected error shape: %v", err)
			}
			return
		}
		if b == nil {
			t.Fatal("nil beat without error")
		}
	})
}

func FuzzParseMetadata(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"a":"b"}`, `{"n":1,"b":true,"z":null}`, `a=b,c=d`, `a=b=c`, `{"o":{}}`, `,`, `=`, `{"a":"b"} x`, `null`, ` null x`, `nullx`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		m, err := ParseMetadata(raw)
		if err != nil {
			ce := asCompat(err)
			if ce == nil || ce.Status != 500 || ce.Body != "caused: metadata format incorrect:"+raw+";" {
				t.Fatalf("unexpected error shape for %q: %v", raw, err)
			}
			return
		}
		if m == nil && !strings.HasPrefix(strings.TrimLeft(raw, " \t\r\n"), "null") {
			t.Fatalf("nil map without error for %q", raw)
		}
	})
}

func FuzzServiceNames(f *testing.F) {
	for _, s := range []string{"a@@b", "@@b", "a@@", "a@@b@@c", "", "@@", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = CheckServiceNameFormat(s)
		_ = BareName(s)
		_ = GroupOf(s)
		_ = GroupedName(s, "g")
		_ = newRules().serviceName(s)
		_ = ParseAgent(s)
	})
}

// FuzzCheckServiceNameFormat compares the split-free check with Java's
// reading (split on "@@", trailing empty parts dropped).
func FuzzCheckServiceNameFormat(f *testing.F) {
	for _, s := range []string{"", "a", "a@@b", "@@b", "@@", "@@@", "a@@", "a@@@", "a@@@@b", "@@@@", "x@@@@", "@", "a@b", "DEFAULT_GROUP@@svc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts := compat.JavaSplit(s, GroupSeparator)
		var want error
		switch {
		case len(parts) <= 1:
			want = compat.ErrServiceNameFormat()
		case parts[0] == "":
			want = compat.ErrEmptyGroup()
		}
		got := CheckServiceNameFormat(s)
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Fatalf("CheckServiceNameFormat(%q) = %v, Java's split gives %v", s, got, want)
		}
	})
}

func FuzzDecodeInstance(f *testing.F) {
	for _, s := range []string{
		`{"instanceId":"10.0.0.1#8080#DEFAULT#DEFAULT_GROUP@@svc","ip":"10.0.0.1","port":8080,"weight":1,"healthy":true,"enabled":true,"ephemeral":false,"clusterName":"DEFAULT","serviceName":"DEFAULT_GROUP@@svc","metadata":{"k":"v"},"lastBeat":1796320128093,"marked":false}`,
		`{"ip":"1.1.1.1","metadata":null,"app":"a"}`, `{"ip":"a","ip":"b"}`, `{"IP":"x"}`, `{"port":1.5}`, `{"port":"80"}`,
		`{"metadata":{"a":"b","a":"c"}}`, `{"metadata":{"a":1}}`, `{"ip":"\u0041"}`, `{"weight":1e400}`, `{} x`, `{"x":[1]}`,
		` {"healthy" : true , "x":null, "y":"z"} `, `{"lastBeat":-0,"weight":-1.5e-3}`, `{"ip":"\xff"}`, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast Instance
		if !decodeInstanceFast(raw, &fast) {
			return
		}
		var std Instance
		if err := json.Unmarshal(raw, &std); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(fast, std) {
			t.Fatalf("fast path read %q as %+v, encoding/json as %+v", raw, fast, std)
		}
	})
}
