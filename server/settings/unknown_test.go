package settings

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nacosd/nacosd/server"
)

// TestUnknownProperties: every nacos.*, server.* and spring.* property of
// application.properties that nacosd neither reads nor ignores on purpose
// gets one warning naming it and its line; Java's defaults do not.
func TestUnknownProperties(t *testing.T) {
	conf := `server.port=8850
server.prot=8851
nacos.core.auth.enabeld=true
nacos.istio.mcp.server.enabled=true
nacos.cmdb.loadDataAtStart=false
nacos.naming.distro.taskDispatchPeriod=200
spring.profiles.active=dev
nacos.inetutils.preferred-networks[0]=10.0
nacos.core.auth.default.token.secret.kee=c2VjcmV0LWtleS1vZi1hdC1sZWFzdC0zMi1ieXRlcy0tLS0=
maxContent=1024
mything.enabled=true
`
	st := mustLoad(t, conf, nil)
	file := filepath.Join(st.Config.Home, "conf", "application.properties")
	want := []string{
		"property nacos.core.auth.default.token.secret.kee (" + file + ":9) is not used by nacosd",
		"property nacos.core.auth.enabeld (" + file + ":3) is not used by nacosd",
		"property nacos.istio.mcp.server.enabled=true (" + file + ":4) is not used by nacosd",
		"property server.prot (" + file + ":2) is not used by nacosd",
		"property spring.profiles.active (" + file + ":7) is not used by nacosd",
	}
	if len(st.Warnings) != len(want) {
		t.Fatalf("%d warnings, want %d:\n%s", len(st.Warnings), len(want), strings.Join(st.Warnings, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(st.Warnings[i], w) {
			t.Errorf("warning %d = %q, want it to start with %q", i, st.Warnings[i], w)
		}
	}
	if strings.Contains(strings.Join(st.Warnings, "\n"), "c2VjcmV0") {
		t.Error("a warning shows a value that may be a secret")
	}
	// the same keys from the environment or flags are not the file's
	if st := mustLoad(t, "", env{"SERVER_PROT": "1"}, "-Dnacos.core.auth.enabeld=true"); len(st.Warnings) != 0 {
		t.Errorf("warnings for non-file sources: %q", st.Warnings)
	}
}

// TestHonouredCoversReads: every nacos.*, server.* and spring.* property
// the reader looks up, under each branch, is in the honoured list, so a
// property nacosd reads is never called unused.
func TestHonouredCoversReads(t *testing.T) {
	known := map[string]bool{}
	for _, k := range honoured {
		known[canonical(k)] = true
	}
	for _, e := range []env{
		{},
		{"NACOS_SERVERS": "a:8848 b:8848", "MODE": "cluster"},
		{"NACOS_INETUTILS_PREFER_HOSTNAME_OVER_IP": "true"},
		{"SPRING_DATASOURCE_PLATFORM": "mysql", "MYSQL_SERVICE_HOST": "db"},
	} {
		src := newSources(e.lookup)
		if _, err := src.addImageVars(); err != nil {
			t.Fatal(err)
		}
		st := &Settings{Config: server.DefaultConfig()}
		home := t.TempDir()
		if err := (&reader{src: src}).fill(st, home, Options{WorkDir: home, Interfaces: fakeIfs}); err != nil {
			t.Fatal(err)
		}
		for k := range src.read {
			if (strings.HasPrefix(k, "nacos.") || strings.HasPrefix(k, "server.") || strings.HasPrefix(k, "spring.")) &&
				!known[javaIndex.ReplaceAllString(k, "")] {
				t.Errorf("%s is read but not in the honoured list", k)
			}
		}
	}
}
