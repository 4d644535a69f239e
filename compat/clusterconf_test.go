package compat

import (
	"reflect"
	"testing"
)

func TestParseClusterConf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       []string
		bad        bool
	}{
		{"plain", "10.0.0.2:8848\n10.0.0.1:8848\n", []string{"10.0.0.1:8848", "10.0.0.2:8848"}, false},
		{"default port, comments, blank", "#2024-01-02T03:04:05.123\n\n10.0.0.1\n  10.0.0.3:9848 # node c\n", []string{"10.0.0.1:8848", "10.0.0.3:9848"}, false},
		{"several on a line", "10.0.0.1:8848,10.0.0.2:8848, 10.0.0.3\n", []string{"10.0.0.1:8848", "10.0.0.2:8848", "10.0.0.3:8848"}, false},
		{"ipv6", "[::1]:8848\n[fe80::1]\n", []string{"[::1]:8848", "[fe80::1]:8848"}, false},
		{"hostname", "nacos-0.nacos:8848\n", []string{"nacos-0.nacos:8848"}, false},
		{"duplicates", "10.0.0.1\n10.0.0.1:8848\n", []string{"10.0.0.1:8848"}, false},
		{"query string", "1.2.3.4:8848?raft_port=7848\n", nil, true},
		{"blank line part", "10.0.0.1:8848\n   \n", nil, true},
		{"bad port", "10.0.0.1:x\n", nil, true},
		{"bad ipv6", "[zz::1]:8848\n", nil, true},
	} {
		got, err := ParseClusterConf(tc.text)
		if (err != nil) != tc.bad {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.bad)
			continue
		}
		if !tc.bad && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestParseReportedMember(t *testing.T) {
	t.Parallel()
	body := []byte(`{"ip":"127.0.0.1","port":8848,"state":"UP","extendInfo":{"lastRefreshTime":1700000000000,"raftMetaData":{"metaDataMap":{"naming_persistent_service":{"leader":"127.0.0.1:7848","raftGroupMember":["127.0.0.1:7848"],"term":3}}},"raftPort":"7848","version":"1.4.8"},"address":"127.0.0.1:8848","failAccessCnt":0}`)
	m, ok, err := ParseReportedMember(body)
	if err != nil || !ok || !m.Check() {
		t.Fatalf("parse: %+v %v %v", m, ok, err)
	}
	if m.EffectiveAddress() != "127.0.0.1:8848" || m.State != MemberUp || m.ExtendInfo["version"] != "1.4.8" {
		t.Fatalf("parsed %+v", m)
	}
	// Round trip through the Member writer keeps numbers and nested maps as sent.
	out := Member{IP: m.IP, Port: m.Port, State: m.State, ExtendInfo: m.ExtendInfo}.JSON()
	if string(out) != string(body) {
		t.Fatalf("round trip\n got %s\nwant %s", out, body)
	}
	if _, _, err := ParseReportedMember([]byte(`{"ip":"a","port":1,"state":"WHAT"}`)); err == nil {
		t.Fatal("bad state accepted")
	}
	m, ok, _ = ParseReportedMember([]byte(`{"ip":"10.0.0.1","port":8848}`))
	if !ok || m.Check() || m.EffectiveAddress() != "10.0.0.1:8848" {
		t.Fatalf("no address: %+v check=%v", m, m.Check())
	}
}
