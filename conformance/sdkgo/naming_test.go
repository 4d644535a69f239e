package sdkgo_test

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/clients"
	"github.com/nacos-group/nacos-sdk-go/clients/naming_client"
	"github.com/nacos-group/nacos-sdk-go/common/constant"
	"github.com/nacos-group/nacos-sdk-go/model"
	"github.com/nacos-group/nacos-sdk-go/util"
	"github.com/nacos-group/nacos-sdk-go/vo"

	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/servertest"
)

// sdkFilterOnce makes nacos-sdk-go v1 send an empty clientIP, so the server
// pushes to 127.0.0.1 (Java's InetSocketAddress("", port)) instead of this
// machine's interface address: test traffic stays on loopback.
var sdkFilterOnce sync.Once

func newSDKNamingClient(t *testing.T, n *servertest.Node) naming_client.INamingClient {
	t.Helper()
	sdkFilterOnce.Do(func() {
		if err := util.SetFilterNetNumberAndMask("0.0.0.0/0"); err != nil {
			t.Fatal(err)
		}
	})
	host, portS, _ := net.SplitHostPort(n.HTTPAddr())
	port, _ := strconv.ParseUint(portS, 10, 64)
	// not t.TempDir: the client writes its cache files from its own
	// goroutines after the test (nacos-sdk-go v1 cannot be stopped)
	dir, err := os.MkdirTemp("", "nacosd-sdk-naming-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cc := constant.ClientConfig{TimeoutMs: 5000, NotLoadCacheAtStart: true, LogDir: dir + "/log", CacheDir: dir + "/cache",
		LogLevel: "warn", UpdateCacheWhenEmpty: true, Username: "nacos", Password: "nacos"} // log in, as apps with a username configured do
	sc := []constant.ServerConfig{{IpAddr: host, Port: port, ContextPath: "/nacos"}}
	c, err := clients.NewNamingClient(vo.NacosClientParam{ClientConfig: &cc, ServerConfigs: sc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSDKGoNaming drives nacosd with the real nacos-sdk-go v1.1.6 client:
// register, subscribe, a pushed add and remove, select, deregister.
func TestSDKGoNaming(t *testing.T) {
	testtier.Require(t, testtier.Integration)
	cfg := servertest.Config(t)
	cfg.Naming.BeatCheckInterval = 100 * time.Millisecond
	n := servertest.Start(t, cfg)
	c := newSDKNamingClient(t, n)

	ok, err := c.RegisterInstance(vo.RegisterInstanceParam{Ip: "127.0.0.1", Port: 8001, ServiceName: "sdk-demo", Weight: 1,
		Enable: true, Healthy: true, Ephemeral: true, Metadata: map[string]string{"v": "1"}})
	if err != nil || !ok {
		t.Fatalf("register: %v %v", ok, err)
	}
	var mu sync.Mutex
	var last []model.SubscribeService
	updates := make(chan time.Time, 16)
	err = c.Subscribe(&vo.SubscribeParam{ServiceName: "sdk-demo", SubscribeCallback: func(s []model.SubscribeService, err error) {
		mu.Lock()
		last = s
		mu.Unlock()
		updates <- time.Now()
	}})
	if err != nil {
		t.Fatal(err)
	}
	hosts := func() map[uint64]bool {
		mu.Lock()
		defer mu.Unlock()
		out := map[uint64]bool{}
		for _, s := range last {
			out[s.Port] = true
		}
		return out
	}
	servertest.Eventually(t, 10*time.Second, func() error {
		if h := hosts(); !h[8001] {
			return fmt.Errorf("subscriber has %v", h)
		}
		return nil
	})

	// a second instance must arrive by UDP push, far before the 10 s poll
	start := time.Now()
	ok, err = c.RegisterInstance(vo.RegisterInstanceParam{Ip: "127.0.0.1", Port: 8002, ServiceName: "sdk-demo", Weight: 1, Enable: true, Healthy: true, Ephemeral: true})
	if err != nil || !ok {
		t.Fatalf("register 2: %v %v", ok, err)
	}
	servertest.Eventually(t, 5*time.Second, func() error {
		if h := hosts(); !h[8002] {
			return fmt.Errorf("push of the new instance not received: %v", h)
		}
		return nil
	})
	t.Logf("add reached the subscriber after %v", time.Since(start))

	inst, err := c.SelectInstances(vo.SelectInstancesParam{ServiceName: "sdk-demo", HealthyOnly: true})
	if err != nil || len(inst) != 2 {
		t.Fatalf("select: %v %v", inst, err)
	}
	one, err := c.SelectOneHealthyInstance(vo.SelectOneHealthInstanceParam{ServiceName: "sdk-demo"})
	if err != nil || one == nil {
		t.Fatalf("select one: %v %v", one, err)
	}

	start = time.Now()
	ok, err = c.DeregisterInstance(vo.DeregisterInstanceParam{Ip: "127.0.0.1", Port: 8002, ServiceName: "sdk-demo", Ephemeral: true})
	if err != nil || !ok {
		t.Fatalf("deregister: %v %v", ok, err)
	}
	servertest.Eventually(t, 5*time.Second, func() error {
		if h := hosts(); h[8002] || !h[8001] {
			return fmt.Errorf("removal not pushed: %v", h)
		}
		return nil
	})
	t.Logf("removal reached the subscriber after %v", time.Since(start))

	// expiry: an instance nobody beats for (registered over HTTP with 1.5 s /
	// 3 s timeouts) turns unhealthy, then disappears from the subscriber
	r := n.Do("POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"DEFAULT_GROUP@@sdk-demo"}, "ip": {"127.0.0.1"}, "port": {"8003"},
		"metadata": {`{"preserved.heart.beat.timeout":"1500","preserved.ip.delete.timeout":"3000"}`}}, nil, nil)
	if r.Body != "ok" {
		t.Fatal(r.Body)
	}
	servertest.Eventually(t, 5*time.Second, func() error {
		if h := hosts(); !h[8003] {
			return fmt.Errorf("ghost not pushed: %v", h)
		}
		return nil
	})
	start = time.Now()
	servertest.Eventually(t, 10*time.Second, func() error {
		if h := hosts(); h[8003] || !h[8001] {
			return fmt.Errorf("expired instance still at the subscriber: %v", h)
		}
		return nil
	})
	t.Logf("expiry reached the subscriber %v after it was seen", time.Since(start))

	list, err := c.GetAllServicesInfo(vo.GetAllServiceInfoParam{PageNo: 1, PageSize: 10})
	if err != nil || list.Count != 1 || list.Doms[0] != "sdk-demo" {
		t.Fatalf("service list: %+v %v", list, err)
	}
}
