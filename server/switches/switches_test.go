package switches

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nacosd/nacosd/compat"
)

func readSwitchGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "compat", "testdata", "switches", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustApply(t *testing.T, s *Domain, entry, value string) {
	t.Helper()
	if err := s.Apply(entry, value); err != nil {
		t.Fatalf("Apply(%q, %q): %v", entry, value, err)
	}
}

func TestSwitchesDefaultJSON(t *testing.T) {
	t.Parallel()
	s := Default()
	if got, want := string(s.JSON()), readSwitchGolden(t, "default.json"); got != want {
		t.Fatalf("default switches JSON\n got %s\nwant %s", got, want)
	}
}

func TestSwitchesApplyGolden(t *testing.T) {
	t.Parallel()
	s := Default()
	for _, kv := range [][2]string{
		{"distroThreshold", "0.5"},
		{"pushVersion", "java:1.2.3"},
		{"pushVersion", "go:2.0.0"},
		{"limitedUrlMap", "/b:404,/q:503"}, // HashMap order: "/q" (bucket 2) before "/b" (bucket 3)
		{"masters", "10.0.0.1,10.0.0.2"},
		{"check", "false"},
		{"pushCacheMillis", "20000"},
		{"defaultCacheMillis", "1000"},
		{"healthCheckTimes", "5"},
		{"overriddenServerStatus", "null"},
		{"enableStandalone", "false"}, // the Java bug: a non-empty value is ignored
		{"lightBeatEnabled", "off"},
		{"autoChangeHealthCheckEnabled", "no"},
		{"distroServerExpiredMillis", "30000"},
		{"clientBeatInterval", "7000"},
		{"noSuchEntry", "whatever"},
	} {
		mustApply(t, &s, kv[0], kv[1])
	}
	if got, want := string(s.JSON()), readSwitchGolden(t, "applied.json"); got != want {
		t.Fatalf("switches JSON after Apply\n got %s\nwant %s", got, want)
	}
}

func TestSwitchesBatchGolden(t *testing.T) {
	t.Parallel()
	s := Default()
	mustApply(t, &s, "batch", readSwitchGolden(t, "batch.in.json"))
	if got, want := string(s.JSON()), readSwitchGolden(t, "batch.json"); got != want {
		t.Fatalf("switches JSON after batch\n got %s\nwant %s", got, want)
	}
	// batch keeps the current enableStandalone, whatever the JSON says
	s.EnableStandalone = false
	mustApply(t, &s, "batch", `{"enableStandalone":true}`)
	if s.EnableStandalone {
		t.Fatal("batch changed enableStandalone")
	}
}

const deserPrefix = "caused: errCode: 101, errMsg: Nacos deserialize for class [com.alibaba.nacos.naming.misc.SwitchDomain] failed.  ;caused: "

func TestSwitchesApplyErrors(t *testing.T) {
	t.Parallel()
	versionMsg := `caused: illegal version, must match: [0-9]+\.[0-9]+\.[0-9]+;`
	tests := []struct {
		entry, value string
		status       int
		body         string
		prefix       bool // body is a prefix (Jackson's own message is not reproduced)
	}{
		{"distroThreshold", "0", 400, "caused: distroThreshold can not be zero or negative: 0.0;", false},
		{"distroThreshold", "-1.5", 400, "caused: distroThreshold can not be zero or negative: -1.5;", false},
		{"distroThreshold", "-0", 400, "caused: distroThreshold can not be zero or negative: -0.0;", false},
		{"distroThreshold", "abc", 400, `caused: For input string: "abc";`, false},
		{"distroThreshold", " 1x ", 400, `caused: For input string: "1x";`, false},
		{"distroThreshold", "inf", 400, `caused: For input string: "inf";`, false},
		{"distroThreshold", "-Infinity", 400, "caused: distroThreshold can not be zero or negative: -Infinity;", false},
		{"distroThreshold", "1e-50", 400, "caused: distroThreshold can not be zero or negative: 0.0;", false},
		{"distroThreshold", "NaNf", 400, `caused: For input string: "NaNf";`, false},
		{"distroThreshold", "0x1", 400, `caused: For input string: "0x1";`, false},
		{"distroThreshold", ".", 400, `caused: For input string: ".";`, false},
		{"distroThreshold", "1_0", 400, `caused: For input string: "1_0";`, false},
		{"distroThreshold", "", 400, "caused: empty String;", false},
		{"clientBeatInterval", "x", 400, `caused: For input string: "x";`, false},
		{"clientBeatInterval", "", 400, `caused: For input string: "";`, false},
		{"clientBeatInterval", "1.5", 400, `caused: For input string: "1.5";`, false},
		{"clientBeatInterval", "99999999999999999999", 400, `caused: For input string: "99999999999999999999";`, false},
		{"pushVersion", "java", 500, "caused: 1;", false},
		{"pushVersion", ":", 500, "caused: 0;", false},
		{"pushVersion", "java:", 500, "caused: 1;", false},
		{"pushVersion", "java:1.2", 400, versionMsg, false},
		{"pushVersion", "java:v1.2.3", 400, versionMsg, false},
		{"pushVersion", "ruby:x", 400, versionMsg, false},
		{"pushVersion", "csharp:1.0.0", 400, "caused: unsupported client type: csharp;", false},
		{"pushVersion", "JAVA:1.0.0", 400, "caused: unsupported client type: JAVA;", false},
		{"pushVersion", ":1.0.0", 400, "caused: unsupported client type: ;", false},
		{"pushCacheMillis", "9999", 400, "caused: min cache time for http or tcp is too small(<10000);", false},
		{"pushCacheMillis", "ten", 400, `caused: For input string: "ten";`, false},
		{"defaultCacheMillis", "999", 400, "caused: min default cache time  is too small(<1000);", false},
		{"serviceStatusSynchronizationPeriodMillis", "4999", 400, "caused: serviceStatusSynchronizationPeriodMillis is too small(<5000);", false},
		{"serverStatusSynchronizationPeriodMillis", "999", 400, "caused: serverStatusSynchronizationPeriodMillis is too small(<15000);", false},
		{"healthCheckTimes", "2147483648", 400, `caused: For input string: "2147483648";`, false},
		{"healthCheckTimes", "three", 400, `caused: For input string: "three";`, false},
		{"limitedUrlMap", "a", 400, "caused: invalid input for limited urls;", false},
		{"limitedUrlMap", "a:", 400, "caused: invalid input for limited urls;", false},
		{"limitedUrlMap", "a:1,,b:2", 400, "caused: invalid input for limited urls;", false},
		{"limitedUrlMap", ",a:1", 400, "caused: invalid input for limited urls;", false},
		{"limitedUrlMap", ":200", 400, "caused: url can not be empty, url: ;", false},
		{"limitedUrlMap", "a:0", 400, "caused: illegal normal status code: 0;", false},
		{"limitedUrlMap", "a:200,b:-5", 400, "caused: illegal normal status code: -5;", false},
		{"limitedUrlMap", "a:x", 400, `caused: For input string: "x";`, false},
		{"distroServerExpiredMillis", "soon", 400, `caused: For input string: "soon";`, false},
		{"batch", `{"httpHealthParams":{"min":499}}`, 400, "caused: min check time for http or tcp is too small(<500);", false},
		{"batch", `{"tcpHealthParams":{"min":499}}`, 400, "caused: min check time for http or tcp is too small(<500);", false},
		{"batch", `{"httpHealthParams":{"max":2999}}`, 400, "caused: max check time for http or tcp is too small(<3000);", false},
		{"batch", `{"tcpHealthParams":{"max":2999,"min":1}}`, 400, "caused: min check time for http or tcp is too small(<500);", false},
		{"batch", `{"httpHealthParams":{"factor":1.01}}`, 400, "caused: malformed factor;", false},
		{"batch", `{"tcpHealthParams":{"factor":-0.1}}`, 400, "caused: malformed factor;", false},
		{"batch", `{"httpHealthParams":null}`, 500, "", false},
		{"batch", `null`, 500, "", false},
		{"batch", ``, 500, deserPrefix, true},
		{"batch", `[1]`, 500, deserPrefix, true},
		{"batch", `{"checkTimes":"abc"}`, 500, deserPrefix, true},
		{"batch", `{"checkTimes":3000000000}`, 500, deserPrefix, true},
		{"batch", `{"masters":"a"}`, 500, deserPrefix, true},
		{"batch", `{"pushJavaVersion":{}}`, 500, deserPrefix, true},
		{"batch", `{"distroEnabled":`, 500, deserPrefix, true},
	}
	for _, tc := range tests {
		s := Default()
		mustApply(t, &s, "limitedUrlMap", "/keep:1")
		before := string(s.JSON())
		err := s.Apply(tc.entry, tc.value)
		var ce *compat.Error
		if !errors.As(err, &ce) {
			t.Errorf("Apply(%q, %q) = %v, want *compat.Error", tc.entry, tc.value, err)
			continue
		}
		okBody := ce.Body == tc.body || (tc.prefix && strings.HasPrefix(ce.Body, tc.body) && len(ce.Body) > len(tc.body)+1)
		if ce.Status != tc.status || !okBody {
			t.Errorf("Apply(%q, %q) = %d %q, want %d %q", tc.entry, tc.value, ce.Status, ce.Body, tc.status, tc.body)
		}
		if after := string(s.JSON()); after != before {
			t.Errorf("Apply(%q, %q) failed but changed the switches:\n%s", tc.entry, tc.value, after)
		}
	}
}

func TestSwitchesApplyValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps [][2]string
		check func(s Domain) bool
	}{
		{"enableStandalone ignored when non-empty", [][2]string{{"enableStandalone", "false"}}, func(s Domain) bool { return s.EnableStandalone }},
		{"enableStandalone empty sets false", [][2]string{{"enableStandalone", ""}}, func(s Domain) bool { return !s.EnableStandalone }},
		{"masters empty", [][2]string{{"masters", ""}}, func(s Domain) bool { return reflect.DeepEqual(s.Masters, []string{""}) }},
		{"masters trailing empties", [][2]string{{"masters", "a,,b,,"}}, func(s Domain) bool { return reflect.DeepEqual(s.Masters, []string{"a", "", "b"}) }},
		{"masters only commas", [][2]string{{"masters", ",,,"}}, func(s Domain) bool { return s.Masters != nil && len(s.Masters) == 0 }},
		{"distro TRUE", [][2]string{{"distro", "false"}, {"distro", "TRUE"}}, func(s Domain) bool { return s.DistroEnabled }},
		{"distro yes is false", [][2]string{{"distro", "yes"}}, func(s Domain) bool { return !s.DistroEnabled }},
		{"pushEnabled", [][2]string{{"pushEnabled", "false"}}, func(s Domain) bool { return !s.PushEnabled }},
		{"disableAddIP", [][2]string{{"disableAddIP", "true"}}, func(s Domain) bool { return s.DisableAddIP }},
		{"sendBeatOnly", [][2]string{{"sendBeatOnly", "True"}}, func(s Domain) bool { return s.SendBeatOnly }},
		{"defaultInstanceEphemeral", [][2]string{{"defaultInstanceEphemeral", "no"}}, func(s Domain) bool { return !s.DefaultInstanceEphemeral }},
		{"lightBeat y", [][2]string{{"lightBeatEnabled", "false"}, {"lightBeatEnabled", "Y"}}, func(s Domain) bool { return s.LightBeatEnabled }},
		{"lightBeat 1 is false", [][2]string{{"lightBeatEnabled", "1"}}, func(s Domain) bool { return !s.LightBeatEnabled }},
		{"overridden status", [][2]string{{"overriddenServerStatus", "DOWN"}}, func(s Domain) bool {
			return s.OverriddenServerStatus != nil && *s.OverriddenServerStatus == "DOWN"
		}},
		{"limitedUrlMap empty keeps", [][2]string{{"limitedUrlMap", "a:1"}, {"limitedUrlMap", ""}}, func(s Domain) bool { v, ok := s.LimitedURLMap.Get("a"); return ok && v == 1 }},
		{"limitedUrlMap dup and extra parts", [][2]string{{"limitedUrlMap", "a:1:9,a:2"}}, func(s Domain) bool {
			return reflect.DeepEqual(s.LimitedURLMap.Keys, []string{"a"}) && s.LimitedURLMap.Values["a"] == 2
		}},
		{"threshold NaN", [][2]string{{"distroThreshold", "NaN"}}, func(s Domain) bool { return math.IsNaN(float64(s.DistroThreshold)) }},
		{"threshold signed NaN", [][2]string{{"distroThreshold", "-NaN"}}, func(s Domain) bool { return math.IsNaN(float64(s.DistroThreshold)) }},
		{"threshold -Infinity", [][2]string{{"distroThreshold", "2"}, {"distroThreshold", "+Infinity"}}, func(s Domain) bool { return math.IsInf(float64(s.DistroThreshold), 1) }},
		{"threshold overflow", [][2]string{{"distroThreshold", "1e50"}}, func(s Domain) bool { return math.IsInf(float64(s.DistroThreshold), 1) }},
		{"threshold suffix", [][2]string{{"distroThreshold", " 0.25f "}}, func(s Domain) bool { return s.DistroThreshold == 0.25 }},
		{"threshold hex", [][2]string{{"distroThreshold", "0x1p-2"}}, func(s Domain) bool { return s.DistroThreshold == 0.25 }},
		{"pushVersion extra part", [][2]string{{"pushVersion", "python:1.2.3:x"}}, func(s Domain) bool { return s.PushPythonVersion == "1.2.3" }},
		{"pushVersion c", [][2]string{{"pushVersion", "c:9.9.9"}}, func(s Domain) bool { return s.PushVersionFor("c") == "9.9.9" }},
		{"server sync lower bound", [][2]string{{"serverStatusSynchronizationPeriodMillis", "1000"}}, func(s Domain) bool { return s.ServerStatusSynchronizationPeriodMillis == 1000 }},
		{"long with plus", [][2]string{{"clientBeatInterval", "+42"}}, func(s Domain) bool { return s.ClientBeatInterval == 42 }},
		{"healthCheckTimes negative", [][2]string{{"healthCheckTimes", "-1"}}, func(s Domain) bool { return s.CheckTimes == -1 }},
	}
	for _, tc := range tests {
		s := Default()
		for _, st := range tc.steps {
			mustApply(t, &s, st[0], st[1])
		}
		if !tc.check(s) {
			t.Errorf("%s: unexpected result %s", tc.name, s.JSON())
		}
	}
}

func TestSwitchesThresholdJSON(t *testing.T) {
	t.Parallel()
	s := Default()
	mustApply(t, &s, "distroThreshold", "NaN")
	if !strings.Contains(string(s.JSON()), `"distroThreshold":"NaN",`) {
		t.Fatalf("NaN threshold: %s", s.JSON())
	}
}

func batchWithNulls(t *testing.T) Domain {
	t.Helper()
	s := Default()
	mustApply(t, &s, "batch", readSwitchGolden(t, "batch.in.json"))
	mustApply(t, &s, "batch", `{"masters":null,"adWeightMap":null,"limitedUrlMap":null,"incrementalList":null,"healthCheckWhiteList":null,"pushJavaVersion":null,"pushPythonVersion":null,"pushCVersion":null,"pushGoVersion":null,"pushCSharpVersion":null,"mysqlHealthParams":null,"overriddenServerStatus":"UP","distroThreshold":"Infinity"}`)
	return s
}

func TestSwitchesBatchNulls(t *testing.T) {
	t.Parallel()
	s := batchWithNulls(t)
	got := string(s.JSON())
	for _, want := range []string{`"masters":null,"adWeightMap":null,`, `"distroThreshold":"Infinity",`, `"mysqlHealthParams":null,"incrementalList":null,`,
		`"limitedUrlMap":null,`, `"pushGoVersion":null,"pushJavaVersion":null,"pushPythonVersion":null,"pushCVersion":null,"pushCSharpVersion":null,`,
		`"overriddenServerStatus":"UP",`, `"healthCheckWhiteList":null,`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in %s", want, got)
		}
	}
	// pushVersion clears the null again
	mustApply(t, &s, "pushVersion", "go:1.0.0")
	if !strings.Contains(string(s.JSON()), `"pushGoVersion":"1.0.0",`) {
		t.Errorf("pushVersion after null: %s", s.JSON())
	}
}

func TestSwitchesMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	applied := Default()
	for _, kv := range [][2]string{{"limitedUrlMap", "/b:404,/q:503"}, {"masters", "a,b"}, {"overriddenServerStatus", "null"}, {"distroThreshold", "NaN"}} {
		mustApply(t, &applied, kv[0], kv[1])
	}
	batch := Default()
	mustApply(t, &batch, "batch", readSwitchGolden(t, "batch.in.json"))
	for name, s := range map[string]Domain{
		"default": Default(),
		"applied": applied,
		"batch":   batch,
		"nulls":   batchWithNulls(t),
	} {
		b, err := s.Marshal()
		if err != nil {
			t.Fatalf("%s: Marshal: %v", name, err)
		}
		got, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: Unmarshal: %v", name, err)
		}
		if string(got.JSON()) != string(s.JSON()) {
			t.Errorf("%s: JSON differs after round trip\n got %s\nwant %s", name, got.JSON(), s.JSON())
		}
		// NaN != NaN defeats DeepEqual; the JSON comparison above covers it.
		if name != "applied" && !reflect.DeepEqual(got, s) {
			t.Errorf("%s: round trip differs\n got %+v\nwant %+v", name, got, s)
		}
	}
	if _, err := Unmarshal([]byte(`{"v":2}`)); err == nil {
		t.Error("unknown version accepted")
	}
	if _, err := Unmarshal([]byte(`{`)); err == nil {
		t.Error("bad JSON accepted")
	}
}

func TestSwitchesClone(t *testing.T) {
	t.Parallel()
	s := Default()
	mustApply(t, &s, "limitedUrlMap", "a:1")
	mustApply(t, &s, "masters", "m")
	mustApply(t, &s, "overriddenServerStatus", "UP")
	c := s.Clone()
	c.LimitedURLMap.Values["a"] = 2
	c.LimitedURLMap.Keys[0] = "z"
	c.Masters[0] = "x"
	*c.OverriddenServerStatus = "DOWN"
	c.IncrementalList = append(c.IncrementalList, "i")
	if s.LimitedURLMap.Values["a"] != 1 || s.LimitedURLMap.Keys[0] != "a" || s.Masters[0] != "m" || *s.OverriddenServerStatus != "UP" || len(s.IncrementalList) != 0 {
		t.Fatalf("Clone shares memory: %s", s.JSON())
	}
	var zero Domain
	if z := zero.Clone(); z.Masters != nil || z.LimitedURLMap.Values != nil {
		t.Fatal("Clone turned nulls into empties")
	}
}

func TestSwitchesUpdateFrom(t *testing.T) {
	t.Parallel()
	live := Default()
	stored := Default()
	mustApply(t, &stored, "batch", `{"pushCSharpVersion":"2.0.0","healthCheckWhiteList":["svc"],"pushJavaVersion":"1.0.0","checkTimes":9}`)
	live.UpdateFrom(stored)
	if live.PushCSharpVersion != "0.9.0" || len(live.HealthCheckWhiteList) != 0 {
		t.Errorf("UpdateFrom copied pushCSharpVersion/healthCheckWhiteList: %s", live.JSON())
	}
	if live.PushJavaVersion != "1.0.0" || live.CheckTimes != 9 {
		t.Errorf("UpdateFrom missed fields: %s", live.JSON())
	}
	stored.LimitedURLMap.Values["x"] = 1
	if _, ok := live.LimitedURLMap.Get("x"); ok {
		t.Error("UpdateFrom shares maps")
	}
	if !stored.HealthCheckEnabledFor("svc") {
		t.Error("HealthCheckEnabledFor with health checks on")
	}
	mustApply(t, &stored, "check", "false")
	if !stored.HealthCheckEnabledFor("svc") || stored.HealthCheckEnabledFor("other") {
		t.Error("HealthCheckEnabledFor whitelist")
	}
}

func TestSwitchesPushVersionFor(t *testing.T) {
	t.Parallel()
	s := Default()
	for typ, want := range map[string]string{"java": "0.1.0", "go": "0.1.0", "python": "0.4.3", "dns": "0.4.3", "c": "1.0.12", "csharp": "0.9.0", "ruby": ""} {
		if got := s.PushVersionFor(typ); got != want {
			t.Errorf("PushVersionFor(%q) = %q, want %q", typ, got, want)
		}
	}
}

// TestSwitchesOldRecordsDecode reads records written by Marshal before the
// field table (testdata/switches-record/*.v1.json, with the GET body each
// produced): the stored form is on disk and must keep decoding.
func TestSwitchesOldRecordsDecode(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"default", "applied", "nulls"} {
		rec, err := os.ReadFile(filepath.Join("testdata", "switches-record", name+".v1.json"))
		if err != nil {
			t.Fatal(err)
		}
		wire, err := os.ReadFile(filepath.Join("testdata", "switches-record", name+".wire.json"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := Unmarshal(rec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := s.JSON(); string(got) != string(wire) {
			t.Errorf("%s: old record decodes to\n%s\nwant\n%s", name, got, wire)
		}
		again, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		s2, err := Unmarshal(again)
		if err != nil || string(s2.JSON()) != string(wire) {
			t.Errorf("%s: re-marshalled record differs: %v", name, err)
		}
	}
}

// TestSwitchFieldsCoverTheStruct: the table names every Domain field
// exactly once, so rendering, batch, record and updates cannot miss one.
func TestSwitchFieldsCoverTheStruct(t *testing.T) {
	t.Parallel()
	var s Domain
	seen := map[uintptr]string{}
	for _, f := range switchFields {
		p := reflect.ValueOf(f.ptr(&s)).Pointer()
		if prev, dup := seen[p]; dup {
			t.Errorf("%s and %s point at the same field", prev, f.name)
		}
		seen[p] = f.name
		if (f.entry == "") != (f.update == nil) {
			t.Errorf("%s: entry %q without an updater, or the reverse", f.name, f.entry)
		}
	}
	typ := reflect.TypeOf(s)
	exported := 0
	for i := range typ.NumField() {
		if typ.Field(i).IsExported() {
			exported++
			if _, ok := seen[reflect.ValueOf(&s).Elem().Field(i).Addr().Pointer()]; !ok {
				t.Errorf("Domain.%s is not in switchFields", typ.Field(i).Name)
			}
		}
	}
	if exported != len(switchFields) {
		t.Errorf("%d exported fields, %d in the table", exported, len(switchFields))
	}
}
