package sdkgo_test

import (
	"encoding/json"
	"net"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/clients"
	"github.com/nacos-group/nacos-sdk-go/clients/config_client"
	"github.com/nacos-group/nacos-sdk-go/common/constant"
	"github.com/nacos-group/nacos-sdk-go/vo"

	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/servertest"
)

// configPort starts nacosd and returns its HTTP port.
func configPort(t *testing.T) (*servertest.Node, uint64) {
	t.Helper()
	n := servertest.Start(t, servertest.Config(t))
	_, p, err := net.SplitHostPort(n.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	return n, port
}

// watchers is the number of long polls nacosd holds for the config
// (GET /v1/cs/configs/listener).
func watchers(t *testing.T, n *servertest.Node, dataID, tenant string) int {
	t.Helper()
	r := n.Do("GET", "/nacos/v1/cs/configs/listener", url.Values{"dataId": {dataID}, "group": {"DEFAULT_GROUP"}, "tenant": {tenant}}, nil, nil)
	var v struct {
		LisentersGroupkeyStatus map[string]string `json:"lisentersGroupkeyStatus"`
	}
	if r.Status != 200 || json.Unmarshal([]byte(r.Body), &v) != nil {
		t.Fatalf("listeners of %s: %d %s", dataID, r.Status, r.Body)
	}
	return len(v.LisentersGroupkeyStatus)
}

func newSDKConfigClient(t *testing.T, port uint64, namespace string) config_client.IConfigClient {
	t.Helper()
	// not t.TempDir: the client keeps writing its cache files from its own
	// goroutines after the test (nacos-sdk-go v1 cannot be stopped), which
	// made TempDir's cleanup fail with "directory not empty"
	dir, err := os.MkdirTemp("", "nacosd-sdk-config-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cc := constant.ClientConfig{TimeoutMs: 5000, NamespaceId: namespace, NotLoadCacheAtStart: true,
		LogDir: dir + "/log", CacheDir: dir + "/cache", LogLevel: "warn"}
	sc := []constant.ServerConfig{{IpAddr: "127.0.0.1", Port: port, ContextPath: "/nacos"}}
	c, err := clients.NewConfigClient(vo.NacosClientParam{ClientConfig: &cc, ServerConfigs: sc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSDKGoConfig drives the config API with the real nacos-sdk-go v1.1.6
// client: publish, get, listen, a change reaching the listener, search,
// delete; with and without a namespace.
func TestSDKGoConfig(t *testing.T) {
	testtier.Require(t, testtier.Integration)
	n, port := configPort(t)
	for _, ns := range []string{"", "dev"} {
		t.Run("ns="+ns, func(t *testing.T) {
			c := newSDKConfigClient(t, port, ns)
			dataID := "sdk-" + ns + ".properties"
			ok, err := c.PublishConfig(vo.ConfigParam{DataId: dataID, Group: "DEFAULT_GROUP", Content: "a=1", Type: "properties"})
			if err != nil || !ok {
				t.Fatalf("publish: %v %v", ok, err)
			}
			got, err := c.GetConfig(vo.ConfigParam{DataId: dataID, Group: "DEFAULT_GROUP"})
			if err != nil || got != "a=1" {
				t.Fatalf("get: %q %v", got, err)
			}
			changes := make(chan string, 16)
			err = c.ListenConfig(vo.ConfigParam{DataId: dataID, Group: "DEFAULT_GROUP", OnChange: func(namespace, group, dataId, data string) {
				changes <- data
			}})
			if err != nil {
				t.Fatal(err)
			}
			// Wait until the client holds a long poll, then change the config.
			deadline := time.Now().Add(10 * time.Second)
			for watchers(t, n, dataID, ns) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("client never started long polling")
				}
				time.Sleep(5 * time.Millisecond)
			}
			start := time.Now()
			if ok, err := c.PublishConfig(vo.ConfigParam{DataId: dataID, Group: "DEFAULT_GROUP", Content: "a=2"}); err != nil || !ok {
				t.Fatalf("republish: %v %v", ok, err)
			}
			select {
			case d := <-changes:
				if d != "a=2" {
					t.Fatalf("listener got %q", d)
				}
				t.Logf("change reached the listener in %s", time.Since(start))
			case <-time.After(5 * time.Second):
				t.Fatal("listener not called")
			}
			page, err := c.SearchConfig(vo.SearchConfigParam{Search: "accurate", DataId: dataID, Group: "DEFAULT_GROUP", PageNo: 1, PageSize: 10})
			if err != nil || page.TotalCount != 1 || len(page.PageItems) != 1 || page.PageItems[0].Content != "a=2" {
				t.Fatalf("search: %+v %v", page, err)
			}
			if ok, err := c.DeleteConfig(vo.ConfigParam{DataId: dataID, Group: "DEFAULT_GROUP"}); err != nil || !ok {
				t.Fatalf("delete: %v %v", ok, err)
			}
			got, err = c.GetConfig(vo.ConfigParam{DataId: dataID, Group: "DEFAULT_GROUP"})
			if err != nil || got != "" {
				t.Fatalf("get after delete: %q %v", got, err)
			}
		})
	}
}
