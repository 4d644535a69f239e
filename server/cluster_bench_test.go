package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nacosd/nacosd/server/servertest"
)

// BenchmarkClusterRegister registers ephemeral instances round robin on an
// in-process three-node cluster (so two thirds are proxied to their owner
// and every change is synced to two members): the cost of a register in
// cluster mode, for CPU profiles (-cpuprofile).
func BenchmarkClusterRegister(b *testing.B) {
	cfgs := servertest.ClusterConfigs(b, 3)
	for i := range cfgs {
		cfgs[i].ClusterTimings.SyncDelay = 0 // the production windows
		cfgs[i].ClusterTimings.VerifyInterval = 0
	}
	nodes := servertest.StartCluster(b, cfgs)
	servertest.WaitMembersUp(b, nodes)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var n atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := n.Add(1)
				if i > int64(b.N) {
					return
				}
				node := nodes[(int(i)+w)%3]
				url := fmt.Sprintf("http://%s/nacos/v1/ns/instance?serviceName=bench.svc.%d&ip=127.%d.%d.%d&port=8080&ephemeral=true",
					node.HTTPAddr(), i%100, 100+i/65536%100, i/256%256, i%256)
				req, _ := http.NewRequest("POST", url, nil)
				req.Header.Set("User-Agent", javaUA)
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
}
