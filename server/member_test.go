package server_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server/servertest"
)

// TestSelfMemberStandalone: the self member as the 1.4.8 reference renders
// it once settled in standalone mode: extendInfo lastRefreshTime (the start),
// raftPort, version; on /v1/ns/operator/servers and /v1/core/cluster/self.
func TestSelfMemberStandalone(t *testing.T) {
	before := time.Now().UnixMilli()
	n := servertest.Start(t, servertest.Config(t))
	after := time.Now().UnixMilli()
	addr := n.HTTPAddr()
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	p, _ := strconv.Atoi(port)
	re := regexp.MustCompile(`"lastRefreshTime":(\d+)`)
	member := func(body string) string {
		m := re.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no lastRefreshTime in %s", body)
		}
		if ms, _ := strconv.ParseInt(m[1], 10, 64); ms < before || ms > after {
			t.Errorf("lastRefreshTime %d outside the start [%d, %d]", ms, before, after)
		}
		return re.ReplaceAllString(body, `"lastRefreshTime":0`)
	}
	want := fmt.Sprintf(`{"ip":"127.0.0.1","port":%d,"state":"UP","extendInfo":{"lastRefreshTime":0,"raftPort":"%d","version":"1.4.8"},"address":"127.0.0.1:%d","failAccessCnt":0}`, p, p-1000, p)
	if r := n.Do("GET", "/nacos/v1/ns/operator/servers", nil, nil, nil); r.Status != 200 || member(r.Body) != `{"servers":[`+want+`]}` {
		t.Errorf("operator/servers: %d %s\nwant %s", r.Status, r.Body, want)
	}
	if r := n.Do("GET", "/nacos/v1/core/cluster/self", nil, nil, nil); r.Status != 200 || member(r.Body) != `{"code":200,"message":null,"data":`+want+`}` {
		t.Errorf("core/cluster/self: %d %s\nwant %s", r.Status, r.Body, want)
	}
}
