package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server/servertest"
)

// fastNode is a nacosd whose beat sweep runs every 100 ms.
func fastNode(t *testing.T, name string) *api {
	cfg := servertest.Config(t)
	cfg.Naming.BeatCheckInterval = 100 * time.Millisecond
	n := servertest.Start(t, cfg)
	return &api{t: t, name: name, base: n.URL("/nacos")}
}

// healthyOn reports whether the instance is listed healthy on a.
func healthyOn(a *api, service, ip string) (bool, error) {
	st, body := a.do("GET", "/v1/ns/catalog/instances", v("serviceName", service, "groupName", "DEFAULT_GROUP", "clusterName", "DEFAULT",
		"pageNo", "1", "pageSize", "10"), nil)
	if st != 200 {
		return false, nil // no such service (yet, or any more)
	}
	var il instanceList
	if err := json.Unmarshal([]byte(body), &il); err != nil {
		return false, err
	}
	for _, in := range il.List {
		if in.IP == ip {
			return in.Healthy, nil
		}
	}
	return false, nil
}

// TestBridgeCutover: a client beating the old server is mirrored to the new
// one; when it moves to the new server, consumers on both sides keep seeing
// it healthy the whole time; once it stops beating everywhere, both copies
// expire (the bridge keeps nothing alive by itself). Real time, with the
// instance's preserved.* timeouts shortened to 1.5 s / 3 s and beats every
// 200 ms (a 1.4 client beats every 5 s against 15 s / 30 s). The old
// server is a nacosd here; TestMigrateFromJavaOnMariaDB runs the same
// cut-over against Java Nacos.
func TestBridgeCutover(t *testing.T) {
	cutover(t, fastNode(t, "old"), fastNode(t, "new"), cutoverTiming{beat: 200 * time.Millisecond, timeout: 1500 * time.Millisecond,
		interval: 150 * time.Millisecond, live: 800 * time.Millisecond, hold: 6 * time.Second}, Options{})
}

type cutoverTiming struct{ beat, timeout, interval, live, hold time.Duration }

func cutover(t *testing.T, java, nacosd *api, tm cutoverTiming, creds Options) {
	t.Helper()
	const ip, svc = "127.0.0.31", "bridged"
	meta := fmt.Sprintf(`{"preserved.heart.beat.timeout":"%d","preserved.ip.delete.timeout":"%d","preserved.heart.beat.interval":"%d"}`,
		tm.timeout.Milliseconds(), 2*tm.timeout.Milliseconds(), tm.beat.Milliseconds())
	java.must("POST", "/v1/ns/instance", v("serviceName", svc, "ip", ip, "port", "8080", "ephemeral", "true", "metadata", meta), nil, "ok")

	var target atomic.Pointer[api] // where the client beats; nil: stopped
	target.Store(java)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Add(2)
	go func() { // the client: light beats, re-registering on 20404 as the 1.4 client does
		defer wg.Done()
		for ctx.Err() == nil {
			if a := target.Load(); a != nil {
				st, body := a.do("PUT", "/v1/ns/instance/beat", v("serviceName", "DEFAULT_GROUP@@"+svc, "ip", ip, "port", "8080", "clusterName", "DEFAULT"), nil)
				if st == 200 && strings.Contains(body, "20404") {
					a.do("POST", "/v1/ns/instance", v("serviceName", svc, "ip", ip, "port", "8080", "ephemeral", "true", "metadata", meta), nil)
				}
			}
			time.Sleep(tm.beat)
		}
	}()
	var rounds atomic.Int64
	go func() {
		defer wg.Done()
		o := creds
		o.From, o.To = java.base, nacosd.base
		err := Bridge(ctx, o, BridgeOptions{Interval: tm.interval, Live: tm.live,
			Report: func(BridgeRound) { rounds.Add(1) }})
		if err != nil {
			t.Error(err)
		}
	}()

	servertest.Eventually(t, 10*time.Second, func() error {
		if ok, err := healthyOn(nacosd, svc, ip); !ok {
			return fmt.Errorf("not mirrored to the new server yet (%v)", err)
		}
		return nil
	})
	target.Store(nacosd) // the client moves
	// consumers on either side see it healthy throughout, well past the old
	// server's delete timeout
	deadline := time.Now().Add(tm.hold)
	for time.Now().Before(deadline) {
		for _, a := range []*api{java, nacosd} {
			if ok, err := healthyOn(a, svc, ip); !ok {
				t.Fatalf("instance not healthy on the %s server during the cut-over (%v)", a.name, err)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	target.Store(nil) // the client dies
	servertest.Eventually(t, 4*tm.timeout+10*time.Second, func() error {
		for _, a := range []*api{java, nacosd} {
			if ok, _ := healthyOn(a, svc, ip); ok {
				return fmt.Errorf("still healthy on the %s server after its client stopped", a.name)
			}
		}
		return nil
	})
	if rounds.Load() < 10 {
		t.Errorf("only %d bridge rounds", rounds.Load())
	}
}
