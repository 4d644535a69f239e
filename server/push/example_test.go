package push_test

import (
	"fmt"
	"net"
	"time"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/server/push"
)

// Example shows the wiring naming does: a Renderer, Subscribe from
// instance/list, ServiceChanged from every instance change, and the
// operator/push/state body. A fake clock makes the debounce explicit.
func Example() {
	clk := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg := push.DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.Clock = clk
	cfg.Nano = func() int64 { return 1234567890123 }
	cfg.Render = func(sub push.Subscriber) ([]byte, error) {
		return fmt.Appendf(nil, `{"name":%q,"clusters":%q,"cacheMillis":10000,"hosts":[]}`, sub.Service, sub.Clusters), nil
	}
	svc, err := push.New(cfg)
	if err != nil {
		panic(err)
	}
	defer svc.Close()

	// A client's push receiver.
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		panic(err)
	}
	defer conn.Close()

	svc.Subscribe(push.Subscriber{
		NamespaceID: "public", Service: "DEFAULT_GROUP@@demo", Agent: "Nacos-Java-Client:v1.4.8",
		IP: "127.0.0.1", Port: conn.LocalAddr().(*net.UDPAddr).Port,
	})
	svc.ServiceChanged("public", "DEFAULT_GROUP@@demo")
	svc.ServiceChanged("public", "DEFAULT_GROUP@@demo") // debounced
	clk.Advance(time.Second)

	buf := make([]byte, 65536)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, from, err := conn.ReadFromUDP(buf)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", buf[:n])
	fmt.Println(string(svc.RenderState(svc.State(false, false), false)))

	// The Java client's ack, sent back to the packet's source.
	_, _ = conn.WriteToUDP([]byte(`{"type": "push-ack", "lastRefTime":"1234567890123", "data":""}`), from)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if svc.State(false, false).Succeed == 1 {
			break
		}
	}
	fmt.Println(string(svc.RenderState(svc.State(false, false), false)))
	// Output:
	// {"type":"dom","data":"{\"name\":\"DEFAULT_GROUP@@demo\",\"clusters\":\"\",\"cacheMillis\":10000,\"hosts\":[]}","lastRefTime":1234567890123}
	// {"succeed":0,"total":1,"ratio":0.0,"reset":false}
	// {"succeed":1,"total":1,"ratio":1.0,"reset":false}
}
