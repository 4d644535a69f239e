package server_test

import (
	"net"
	"net/url"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/push"
	"github.com/nacosd/nacosd/server/servertest"
)

// setNonDefault gives every plain field (duration, number, bool, string) of
// the struct v points to a value different from its default, skipping the
// fields the server sets itself; it returns the names it set.
func setNonDefault(t *testing.T, v any, skip ...string) []string {
	t.Helper()
	rv := reflect.ValueOf(v).Elem()
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	var set []string
	for i := 0; i < rv.NumField(); i++ {
		f, name := rv.Field(i), rv.Type().Field(i).Name
		if skipped[name] || !rv.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.Int64:
			if f.Type() == reflect.TypeOf(time.Duration(0)) {
				f.SetInt(int64(7*time.Second + time.Duration(i)*time.Millisecond))
			} else {
				f.SetInt(int64(7 + i))
			}
		case reflect.Int:
			f.SetInt(int64(7 + i))
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.String:
			continue // ListenAddr: checked below
		default:
			continue // collaborators and hooks
		}
		set = append(set, name)
	}
	return set
}

// TestComponentSettingsTakeEffect: every setting of server.Config.Naming and
// server.Config.Push reaches the running component (the server used to copy
// four fields of each and silently drop the rest).
func TestComponentSettingsTakeEffect(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.Naming = naming.Config{}
	namingSet := setNonDefault(t, &cfg.Naming)
	cfg.Push = push.Config{}
	pushSet := setNonDefault(t, &cfg.Push, "LeadingEdge")
	cfg.Push.ListenAddr = "127.0.0.1:0"
	cfg.Naming.DisableHealthCheck = true // probing stays off in tests
	n := servertest.Start(t, cfg)

	gotN, gotP := reflect.ValueOf(n.Registry().Config()), reflect.ValueOf(n.PushService().Config())
	wantN, wantP := reflect.ValueOf(cfg.Naming), reflect.ValueOf(cfg.Push)
	for _, f := range namingSet {
		t.Run("naming."+f, func(t *testing.T) {
			if g, w := gotN.FieldByName(f).Interface(), wantN.FieldByName(f).Interface(); g != w {
				t.Fatalf("registry runs with %v, configured %v", g, w)
			}
		})
	}
	for _, f := range pushSet {
		t.Run("push."+f, func(t *testing.T) {
			if g, w := gotP.FieldByName(f).Interface(), wantP.FieldByName(f).Interface(); g != w {
				t.Fatalf("push runs with %v, configured %v", g, w)
			}
		})
	}
	t.Run("push.ListenAddr", func(t *testing.T) {
		if ip := n.PushAddr().IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
			t.Fatalf("push socket bound to %v, configured 127.0.0.1:0", n.PushAddr())
		}
	})
	if len(namingSet) < 7 || len(pushSet) < 6 {
		t.Fatalf("only %v and %v checked", namingSet, pushSet)
	}
}

// TestPushCacheMillisSwitchReachesPush: a subscriber lives for the
// defaultPushCacheMillis switch (Java's PushService uses it as the zombie
// age), not for a fixed 10 s.
func TestPushCacheMillisSwitchReachesPush(t *testing.T) {
	cfg := servertest.Config(t)
	clk := clocktest.New(time.Now())
	cfg.Clock = clk
	n := servertest.Start(t, cfg)
	if r := n.Do("PUT", "/nacos/v1/ns/operator/switches", url.Values{"entry": {"pushCacheMillis"}, "value": {"60000"}}, nil, nil); r.Body != "ok" {
		t.Fatalf("switch: %d %s", r.Status, r.Body)
	}
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	q := url.Values{"serviceName": {"DEFAULT_GROUP@@ttl"}, "udpPort": {strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)}, "clientIP": {"127.0.0.1"}}
	if r := n.Do("GET", "/nacos/v1/ns/instance/list", q, nil, map[string]string{"User-Agent": javaUA}); r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	subscribers := func() int { return len(n.PushService().Stored()) }
	if subscribers() != 1 {
		t.Fatalf("%d subscribers after the list, want 1", subscribers())
	}
	clk.Advance(41 * time.Second) // two zombie sweeps: older than 10 s, younger than 60 s
	if got := subscribers(); got != 1 {
		t.Fatalf("subscriber swept after 41 s with pushCacheMillis 60000 (%d left)", got)
	}
	clk.Advance(40 * time.Second) // 81 s: a zombie by the switch
	if got := subscribers(); got != 0 {
		t.Fatalf("%d subscribers after 81 s with pushCacheMillis 60000, want 0", got)
	}
}
