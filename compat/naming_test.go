package compat

import (
	"os"
	"path/filepath"
	"testing"
)

func golden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "naming", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The golden files are the examples of naming-v1.md (§3.2, §3.3, §3.1.7,
// §3.4) typed in by hand, not output of this package.
func TestNamingGolden(t *testing.T) {
	t.Parallel()
	host := Host{IP: "10.0.0.5", Port: 8080, Valid: true, InstanceID: "10.0.0.5#8080#DEFAULT#DEFAULT_GROUP@@demo",
		Metadata: map[string]string{"k": "v"}, Enabled: true, Weight: 1, ClusterName: "DEFAULT", ServiceName: "DEFAULT_GROUP@@demo", Ephemeral: true}
	render := func(f func(w *JSON)) string {
		w := NewJSON(0)
		f(w)
		return w.String()
	}
	cases := []struct {
		file string
		got  string
	}{
		{"list_java.json", render(func(w *JSON) {
			AppendServiceInfo(w, ServiceInfo{Hosts: []Host{host}, Dom: "DEFAULT_GROUP@@demo", Name: "DEFAULT_GROUP@@demo", CacheMillis: 10000,
				LastRefTime: 1700000000000, Checksum: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", Metadata: map[string]string{}})
		})},
		{"list_empty.json", render(func(w *JSON) {
			AppendServiceInfo(w, ServiceInfo{Dom: "demo", Name: "DEFAULT_GROUP@@demo", CacheMillis: 3000, LastRefTime: 1700000000000,
				Checksum: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", Clusters: "DEFAULT", Metadata: map[string]string{}})
		})},
		{"list_all_filtered.json", render(func(w *JSON) {
			AppendServiceInfo(w, ServiceInfo{Hosts: []Host{}, Dom: "demo", Name: "DEFAULT_GROUP@@demo", CacheMillis: 3000, LastRefTime: 1700000000000,
				Checksum: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", Metadata: map[string]string{}})
		})},
		{"list_absent.json", render(func(w *JSON) { AppendAbsentServiceInfo(w, "DEFAULT_GROUP@@nope", "", 3000) })},
		{"beat_ok.json", string(BeatResult{ClientBeatInterval: 5000, Code: BeatOK, LightBeatEnabled: true}.JSON())},
		{"beat_not_found.json", string(BeatResult{ClientBeatInterval: 5000, Code: BeatNotFound}.JSON())},
		{"detail.json", string(InstanceDetail{Service: "DEFAULT_GROUP@@demo", IP: "10.0.0.5", Port: 8080, ClusterName: "DEFAULT", Weight: 1,
			Healthy: true, InstanceID: "10.0.0.5#8080#DEFAULT#DEFAULT_GROUP@@demo", Metadata: map[string]string{"k": "v"}}.JSON())},
		{"service_list.json", string(ServiceList([]string{"a", "b"}, 5))},
	}
	for _, c := range cases {
		if want := golden(t, c.file); c.got != want {
			t.Errorf("%s\n got %s\nwant %s", c.file, c.got, want)
		}
	}
}

func TestNamingErrorBodies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    *Error
		status int
		body   string
	}{
		{ErrNoService("DEFAULT_GROUP@@x"), 500, "caused: no service DEFAULT_GROUP@@x found!;"},
		{ErrNoIPsInCluster("c", "G@@s"), 500, "caused: no ips found for cluster c in service G@@s;"},
		{ErrNoMatchedIP(), 500, "caused: no matched ip found!;"},
		{ErrServiceNotFoundBeat("G@@s", "public"), 500, "caused: service not found: G@@s@public;"},
		{ErrServiceIsNotFound("G@@s"), 500, "caused: service G@@s is not found!;"},
		{ErrServiceDisabled(), 500, "caused: service is disabled now.;"},
		{ErrWeightRange(), 500, "caused: instance format invalid: The weights range from 0.0 to 10000.0;"},
		{ErrClusterName("a_b"), 400, "caused: cluster name can only have these characters: 0-9a-zA-Z-, current: a_b;"},
		{ErrServiceName("G@@a b"), 400, "caused: dom name can only have these characters: 0-9a-zA-Z-._:, current: G@@a b;"},
		{ErrServiceNameFormat(), 400, "caused: Param 'serviceName' is illegal, it should be format as 'groupName@@serviceName';"},
		{ErrEmptyGroup(), 400, "caused: Param 'serviceName' is illegal, groupName can't be empty;"},
		{ErrMetadataFormat("a=b=c"), 500, "caused: metadata format incorrect:a=b=c;"},
		{ParamRequired("ip"), 400, "caused: Param 'ip' is required.;"},
		{NumberFormat("x"), 400, `caused: For input string: "x";`},
		{MissingRequestParam("serviceName", "String"), 500, "caused: Required request parameter 'serviceName' for method parameter type String is not present;"},
		{DeserializeError("com.alibaba.nacos.naming.healthcheck.RsInfo", "Unexpected end-of-input"), 500,
			"caused: errCode: 101, errMsg: Nacos deserialize for class [com.alibaba.nacos.naming.healthcheck.RsInfo] failed.  ;caused: Unexpected end-of-input;"},
		{ServerError(""), 500, ""},
	}
	for _, c := range cases {
		if c.err.Status != c.status || c.err.Body != c.body {
			t.Errorf("got %d %q, want %d %q", c.err.Status, c.err.Body, c.status, c.body)
		}
	}
}
