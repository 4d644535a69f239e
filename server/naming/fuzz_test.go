package naming

import (
	"strings"
	"testing"
)

func FuzzParseBeat(f *testing.F) {
	for _, s := range []string{
		`{"cluster":"DEFAULT","ip":"10.0.0.5","metadata":{},"period":5000,"port":8080,"scheduled":false,"serviceName":"DEFAULT_GROUP@@demo","stopped":false,"weight":1.0}`,
		`{"ip":"1.1.1.1","port":80,"weight":1,"serviceName":"DEFAULT_GROUP@@svc","cluster":"c","metadata":{"a":"b"},"scheduled":false}`,
		`{"ip":1}`, `{`, `null`, `[]`, `{"port":"80"}`, `{"ephemeral":false,"metadata":null}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
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
