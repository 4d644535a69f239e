package settings

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	in := "# comment\n" +
		"! also a comment\n" +
		"   \n" +
		"a=1\n" +
		"  b = two words  \n" + // leading blanks skipped, trailing kept
		"c:3\n" +
		"d 4\n" +
		"e\t=\t5\n" +
		"long=first \\\n     second\\\n third\n" +
		"esc=tab\\there\\nnl\\u0041\\=\\:\\\\x\n" +
		"key\\ with\\ space=v\n" +
		"empty=\n" +
		"novalue\n" +
		"list[]=x,y\\,z,w\n" +
		"crlf=yes\r\n" +
		"latin=caf\xe9\n" +
		"#---\n" +
		"a=override\n" +
		"last=no newline"
	got, err := ParseProperties(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{"a", "1", 4}, {"b", "two words  ", 5}, {"c", "3", 6}, {"d", "4", 7}, {"e", "5", 8},
		{"long", "first secondthird", 9},
		{"esc", "tab\there\nnlA=:\\x", 12},
		{"key with space", "v", 13}, {"empty", "", 14}, {"novalue", "", 15},
		{"list[0]", "x", 16}, {"list[1]", "y,z", 16}, {"list[2]", "w", 16},
		{"crlf", "yes", 17}, {"latin", "café", 18},
		{"a", "override", 20}, {"last", "no newline", 21},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
}

func TestParsePropertiesBadUnicode(t *testing.T) {
	_, err := ParseProperties(strings.NewReader("ok=1\nbad=\\u12x4\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v, want malformed \\u on line 2", err)
	}
}

func TestPlaceholders(t *testing.T) {
	env := map[string]string{"NACOS_APPLICATION_PORT": "9000", "X": "${Y:inner}", "LOOP": "${LOOP2}", "LOOP2": "${LOOP}"}
	s := newSources(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	s.set(layerFile, "server.port", "${NACOS_APPLICATION_PORT:8848}", "f:1")
	s.set(layerFile, "p.default", "${UNSET:8848}", "f:2")
	s.set(layerFile, "p.nested", "a${UNSET:${X}}b", "f:3")
	s.set(layerFile, "p.quotes", `${UNSET:""}`, "f:4")
	s.set(layerFile, "p.missing", "${UNSET}", "f:5")
	s.set(layerFile, "p.loop", "${LOOP}", "f:6")
	s.set(layerFile, "p.ref", "${server.port}/x", "f:7")
	s.set(layerFile, "p.open", "${unterminated", "f:8")
	for name, want := range map[string]string{"server.port": "9000", "p.default": "8848", "p.nested": "ainnerb", "p.quotes": `""`, "p.ref": "9000/x", "p.open": "${unterminated"} {
		v, ok, err := s.lookup(name)
		if err != nil || !ok || v.raw != want {
			t.Errorf("%s = %q %v %v, want %q", name, v.raw, ok, err, want)
		}
	}
	for _, name := range []string{"p.missing", "p.loop"} {
		if _, _, err := s.lookup(name); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err %v, want an error naming it", name, err)
		}
	}
}

func TestEnvNames(t *testing.T) {
	for name, want := range map[string]string{
		"server.port":                             "SERVER_PORT",
		"server.servlet.contextPath":              "SERVER_SERVLET_CONTEXTPATH",
		"server.servlet.context-path":             "SERVER_SERVLET_CONTEXTPATH",
		"nacos.core.auth.enabled":                 "NACOS_CORE_AUTH_ENABLED",
		"nacos.inetutils.prefer-hostname-over-ip": "NACOS_INETUTILS_PREFER_HOSTNAME_OVER_IP",
		"nacos.home":                              "NACOS_HOME",
	} {
		found := false
		for _, n := range envNames(name) {
			found = found || n == want
		}
		if !found {
			t.Errorf("%s: %v lacks %s", name, envNames(name), want)
		}
	}
}
