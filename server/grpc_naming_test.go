package server_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/servertest"
)

// namingOpts are a Java 2.x naming client's connection options.
func namingOpts() remoteclient.Options {
	return remoteclient.Options{Labels: map[string]string{"source": "sdk", "module": "naming", "AppName": "test"}}
}

func gInstance(ip string, port int, cluster string, weight float64, meta map[string]string) *remote.Instance {
	in := remote.NewInstance()
	in.IP, in.HasIP, in.Port, in.ClusterName, in.HasCluster, in.Weight = ip, true, port, cluster, true, weight
	if meta != nil {
		in.Metadata = meta
	}
	return &in
}

func gRegister(ns, group, svc string, in *remote.Instance) *remote.InstanceRequest {
	return &remote.InstanceRequest{NamingKey: remote.NamingKey{Namespace: ns, ServiceName: svc, GroupName: group},
		Op: remote.RegisterInstance, HasOp: true, Instance: in}
}

// hostsOf renders a ServiceInfo's hosts as sorted "ip:port/cluster/weight/healthy/meta" strings.
func infoHosts(si *remote.ServiceInfo) string {
	var out []string
	for _, h := range si.Hosts {
		var meta []string
		for k, v := range h.Metadata {
			meta = append(meta, k+"="+v)
		}
		sort.Strings(meta)
		out = append(out, fmt.Sprintf("%s:%d/%s/%v/%v/%s", h.IP, h.Port, h.ClusterName, h.Weight, h.Healthy, strings.Join(meta, ",")))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// waitNotify waits for a NotifySubscriberRequest whose hosts render as
// want, and returns the last ServiceInfo seen.
func waitNotify(t *testing.T, c *remoteclient.Client, want string, d time.Duration) *remote.ServiceInfo {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var last *remote.ServiceInfo
	for {
		select {
		case p := <-c.Pushes():
			if p.Metadata.Type != remote.TypeNotifySubscriberRequest {
				continue
			}
			si, err := remote.ParseServiceInfo(p.Body)
			if err != nil {
				t.Fatal(err)
			}
			last = si
			if infoHosts(si) == want {
				return si
			}
		case <-timer.C:
			got := "(no push)"
			if last != nil {
				got = infoHosts(last)
			}
			t.Fatalf("no push of %q within %v; last: %s", want, d, got)
			return nil
		}
	}
}

// TestGRPCNamingMixedWithUDP: a 2.x subscriber and a 1.x (UDP)
// subscriber of one service see each other's instances — clusters,
// metadata, weights, health and enabled — and a 2.x client's instance
// leaves every list when its connection ends (after the drop grace).
func TestGRPCNamingMixedWithUDP(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.GRPC.HeldDropGrace = 300 * time.Millisecond
	n := servertest.Start(t, cfg)
	sub := dial(t, n, namingOpts())
	pub := dial(t, n, namingOpts())

	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	u := &udpClient{conn}
	port := strconv.Itoa(conn.LocalAddr().(*net.UDPAddr).Port)
	list1x := func() string {
		return n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"G@@mix"}, "udpPort": {port}, "clientIP": {"127.0.0.1"}},
			nil, map[string]string{"User-Agent": javaUA}).Body
	}
	list1x()

	d := rdo(t, sub, &remote.SubscribeServiceRequest{NamingKey: remote.NamingKey{Namespace: "public", ServiceName: "mix", GroupName: "G"}, Subscribe: true})
	if !d.Success() {
		t.Fatalf("subscribe: %+v", d)
	}
	// a 2.x registration reaches the 2.x subscriber, the 1.x list and the UDP subscriber
	in := gInstance("10.0.0.1", 8080, "c1", 2, map[string]string{"k": "v"})
	if d := rdo(t, pub, gRegister("public", "G", "mix", in)); !d.Success() {
		t.Fatalf("register: %+v", d)
	}
	waitNotify(t, sub, "10.0.0.1:8080/c1/2/true/k=v", 5*time.Second)
	if body := list1x(); !strings.Contains(body, `"ip":"10.0.0.1","port":8080,"valid":true,"healthy":true,"marked":false,"instanceId":"10.0.0.1#8080#c1#G@@mix","metadata":{"k":"v"},"enabled":true,"weight":2.0,"clusterName":"c1"`) {
		t.Fatalf("1.x list: %s", body)
	}
	servertest.Eventually(t, 5*time.Second, func() error {
		p, err := u.read(t, time.Second)
		if err != nil {
			return err
		}
		u.ack(t, p)
		if !strings.Contains(p.Data, `"ip":"10.0.0.1","port":8080`) {
			return fmt.Errorf("udp push without the 2.x instance: %s", p.Data)
		}
		return nil
	})

	// a 1.x registration reaches the 2.x subscriber
	r := n.Do("POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"G@@mix"}, "ip": {"10.0.0.2"}, "port": {"9090"}, "clusterName": {"c2"},
		"weight": {"3"}, "metadata": {`{"v1":"yes"}`}}, nil, map[string]string{"User-Agent": javaUA})
	if r.Body != "ok" {
		t.Fatal(r.Body)
	}
	waitNotify(t, sub, "10.0.0.1:8080/c1/2/true/k=v 10.0.0.2:9090/c2/3/true/v1=yes", 5*time.Second)
	// disabled by a 1.x update: gone from the 2.x view (enabled only)
	r = n.Do("PUT", "/nacos/v1/ns/instance", url.Values{"serviceName": {"G@@mix"}, "ip": {"10.0.0.2"}, "port": {"9090"}, "clusterName": {"c2"},
		"weight": {"3"}, "enabled": {"false"}, "metadata": {`{"v1":"yes"}`}}, nil, map[string]string{"User-Agent": javaUA})
	if r.Body != "ok" {
		t.Fatal(r.Body)
	}
	waitNotify(t, sub, "10.0.0.1:8080/c1/2/true/k=v", 5*time.Second)

	// a query sees the same
	raw, q, err := sub.Do(context.Background(), &remote.ServiceQueryRequest{NamingKey: remote.NamingKey{Namespace: "public", ServiceName: "mix", GroupName: "G"}})
	if err != nil {
		t.Fatal(err)
	}
	si, _ := remote.ParseServiceInfo(raw.Body)
	if !q.Success() || infoHosts(si) != "10.0.0.1:8080/c1/2/true/k=v" {
		t.Fatalf("query: %+v %s", q, raw.Body)
	}

	// the publishing connection ends: its instance leaves every list
	pub.Close()
	waitNotify(t, sub, "", 5*time.Second)
	if body := list1x(); strings.Contains(body, "10.0.0.1") {
		t.Fatalf("1.x list still has the closed connection's instance: %s", body)
	}
}

// TestGRPCNamingHeldInstanceLivesWithoutBeats: a 2.x instance is kept
// alive by its member (no client beats) past the 1.x expiry, on the real
// clock.
func TestGRPCNamingHeldInstanceLivesWithoutBeats(t *testing.T) {
	testtier.Require(t, testtier.Integration) // real-time test: 35 s
	n := servertest.Start(t, servertest.Config(t))
	pub := dial(t, n, namingOpts())
	if d := rdo(t, pub, gRegister("public", "G", "alive", gInstance("10.0.0.7", 1, "DEFAULT", 1, nil))); !d.Success() {
		t.Fatalf("register: %+v", d)
	}
	deadline := time.Now().Add(35 * time.Second) // past unhealthy (15 s) and deletion (30 s)
	for time.Now().Before(deadline) {
		body := n.Do("GET", "/nacos/v1/ns/instance", url.Values{"serviceName": {"G@@alive"}, "ip": {"10.0.0.7"}, "port": {"1"}}, nil, nil).Body
		if !strings.Contains(body, `"healthy":true`) {
			t.Fatalf("held instance not listed healthy: %s", body)
		}
		time.Sleep(time.Second)
	}
	if c := n.HeldInstances().Count(); c != 1 {
		t.Fatalf("held %d", c)
	}
}
