package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Exchange is one recorded HTTP exchange between two Java Nacos 1.4.8
// nodes (testdata/distro/java148, captured on loopback from a three-node
// Java cluster: see docs/cluster.md).
type Exchange struct {
	ReqHead, ReqBody, RespHead, RespBody string
}

func readExchange(t *testing.T, name string) Exchange {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "distro", "java148", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	req, resp, ok := strings.Cut(string(b), "\n=== response\n")
	if !ok {
		t.Fatalf("%s: no response part", name)
	}
	var e Exchange
	e.ReqHead, e.ReqBody, _ = strings.Cut(req, "\n\n")
	e.RespHead, e.RespBody, _ = strings.Cut(resp, "\n\n")
	e.ReqBody = strings.TrimSuffix(e.ReqBody, "\n")
	e.RespBody = strings.TrimSuffix(e.RespBody, "\n")
	return e
}

// TestDistroPayloadsAsJava parses the datum maps Java nodes sent each other
// and writes them back: every byte (property order, Java number formats,
// metadata maps, the instanceIdGenerator quirk, key order of the Java maps)
// must come out as Java wrote it.
func TestDistroPayloadsAsJava(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		response bool
		capacity int
	}{
		{"datum-put", false, DatumBatchCapacity},
		{"datum-put-metadata", false, DatumBatchCapacity},
		{"datum-get", true, DatumBatchCapacity},
		{"datums-get", true, DatumSnapshotCapacity},
	} {
		e := readExchange(t, tc.name)
		body := e.ReqBody
		if tc.response {
			body = e.RespBody
		}
		m, err := ParseDatums([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var ds []Datum
		for _, d := range m {
			ds = append(ds, d)
		}
		if got := string(DatumsJSON(ds, tc.capacity)); got != body {
			t.Errorf("%s: written back differs\n got %s\nwant %s", tc.name, got, body)
		}
	}
}

// TestDistroChecksumsAsJava: the verify payload's key order, and the
// Instances checksum Java sent for the state it held (the first two
// instances of rec.a, healthy).
func TestDistroChecksumsAsJava(t *testing.T) {
	t.Parallel()
	e := readExchange(t, "checksum-put")
	sums := map[string]string{}
	for _, kv := range strings.Split(strings.Trim(e.ReqBody, "{}"), ",") {
		k, v, _ := strings.Cut(kv, ":")
		sums[strings.Trim(k, `"`)] = strings.Trim(v, `"`)
	}
	if got := string(ChecksumsJSON(sums)); got != e.ReqBody {
		t.Errorf("checksum map\n got %s\nwant %s", got, e.ReqBody)
	}
	m, err := ParseDatums([]byte(readExchange(t, "datum-put").ReqBody))
	if err != nil {
		t.Fatal(err)
	}
	var list []DistroInstance
	for _, d := range m {
		for _, in := range d.Instances {
			if in.IP == "127.0.9.1" || in.IP == "127.0.9.2" {
				in.Healthy = true
				list = append(list, in)
			}
		}
	}
	one := readExchange(t, "checksum-put-one")
	if got := InstancesChecksum(list); !strings.Contains(one.ReqBody, got) {
		t.Errorf("Instances checksum %s not in Java's %s", got, one.ReqBody)
	}
	if got := InstancesChecksum(nil); got != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Errorf("empty list checksum %s", got)
	}
}

// TestMemberReportAsJava reads a Java node's report and writes the member
// as Java renders it.
func TestMemberReportAsJava(t *testing.T) {
	t.Parallel()
	e := readExchange(t, "cluster-report")
	m, ok, err := ParseReportedMember([]byte(e.ReqBody))
	if err != nil || !ok || !m.Check() {
		t.Fatalf("parse: %v %v %+v", ok, err, m)
	}
	got := string(Member{IP: m.IP, Port: m.Port, State: m.State, ExtendInfo: m.ExtendInfo}.JSON())
	if got != e.ReqBody {
		t.Errorf("member\n got %s\nwant %s", got, e.ReqBody)
	}
	if e.RespBody != string(RestResultString("true")) {
		t.Errorf("report answer %s", e.RespBody)
	}
}

// TestParseDatumsLenient: values Java nodes never write but Jackson reads
// (numbers as metadata values, a numeric string port) take the lenient path.
func TestParseDatumsLenient(t *testing.T) {
	t.Parallel()
	m, err := ParseDatums([]byte(`{"k":{"key":"k","value":{"instanceList":[{"ip":"1.1.1.1","port":"80","metadata":{"a":1,"b":true}}]},"timestamp":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	in := m["k"].Instances[0]
	if in.Port != 80 || in.Metadata["a"] != "1" || in.Metadata["b"] != "true" || !in.Healthy || in.Weight != 1 {
		t.Fatalf("%+v", in)
	}
}

func BenchmarkParseDatums(b *testing.B) {
	var ds []Datum
	for s := range 20 {
		d := Datum{Key: EphemeralKey("public", "DEFAULT_GROUP@@svc"+string(rune('a'+s))), Timestamp: 1}
		for i := range 100 {
			d.Instances = append(d.Instances, DistroInstance{InstanceID: "x", IP: "10.0.0." + string(rune('0'+i%10)), Port: 8080 + i,
				Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: "DEFAULT", ServiceName: "DEFAULT_GROUP@@svc",
				Metadata: map[string]string{"version": "1.0"}, LastBeat: 1700000000000, App: "DEFAULT"})
		}
		ds = append(ds, d)
	}
	body := DatumsJSON(ds, DatumBatchCapacity)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var p DatumParser
	for b.Loop() {
		if _, err := p.Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}
