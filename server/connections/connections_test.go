package connections

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/internal/testlog"
)

// fakeStream records what the manager sends; answer, when set, makes the
// "client" answer each request (through Ack, as the edge does).
type fakeStream struct {
	mu     sync.Mutex
	sent   []*remote.Payload
	closed bool
	block  chan struct{} // Send waits on it when set
	answer func(p *remote.Payload)
}

func (s *fakeStream) Send(p *remote.Payload) error {
	if s.block != nil {
		<-s.block
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("closed")
	}
	s.sent = append(s.sent, p)
	a := s.answer
	s.mu.Unlock()
	if a != nil {
		a(p)
	}
	return nil
}

func (s *fakeStream) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

func (s *fakeStream) types() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, p := range s.sent {
		out = append(out, p.Metadata.Type)
	}
	return out
}

func newManager(t *testing.T, mod func(*Config)) (*Manager, *clocktest.Fake) {
	t.Helper()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	cfg := DefaultConfig()
	cfg.Clock, cfg.Logger = clk, testlog.New(t)
	if mod != nil {
		mod(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, clk
}

func sdkConn(id string, s Stream) *Conn {
	c := NewConn(id, s)
	c.ClientIP, c.Labels = "10.0.0.1", map[string]string{LabelSource: LabelSourceSDK}
	return c
}

// answerAs makes a stream answer every request with success (ok) or an
// error response, the way a client's stream does.
func answerAs(m *Manager, id string, ok bool) func(p *remote.Payload) {
	return func(p *remote.Payload) {
		req, err := remote.DecodeRequest(p)
		if err != nil || req == nil {
			return
		}
		r := remote.Response{ResultCode: remote.CodeSuccess, RequestID: req.Base().RequestID}
		if !ok {
			r = remote.Fail(remote.ErrServer, "no")
			r.RequestID = req.Base().RequestID
		}
		typ := p.Metadata.Type[:len(p.Metadata.Type)-len("Request")] + "Response"
		go m.Ack(id, remote.Encode(remote.NewPlain(typ, r)))
	}
}

func TestEjectSilentConnections(t *testing.T) {
	m, clk := newManager(t, nil)
	var gone []string
	var mu sync.Mutex
	m.OnDisconnect(func(c *Conn) { mu.Lock(); gone = append(gone, c.ID); mu.Unlock() })
	alive, dead, busy := &fakeStream{}, &fakeStream{}, &fakeStream{}
	alive.answer = answerAs(m, "alive", true)
	busy.answer = answerAs(m, "refuses", false)
	for id, s := range map[string]*fakeStream{"alive": alive, "dead": dead, "refuses": busy} {
		if err := m.Register(sdkConn(id, s)); err != nil {
			t.Fatal(err)
		}
	}
	m.Start()
	// rounds at 1 s, 4 s, … 19 s: nobody has been silent for 20 s yet
	clk.Advance(19 * time.Second)
	if got := dead.types(); len(got) != 0 {
		t.Fatalf("probed before the keep-alive passed: %v", got)
	}
	// the round at 22 s probes all three
	clk.Advance(3 * time.Second)
	eventually(t, func() bool { return m.Get("alive").LastActive().Equal(clk.Now()) })
	if got := dead.types(); len(got) != 1 || got[0] != remote.TypeClientDetectionRequest {
		t.Fatalf("dead connection was sent %v", got)
	}
	// as Java's round, the failures are dropped together once every probe
	// answered or timed out
	if m.Get("dead") == nil || m.Get("refuses") == nil {
		t.Fatal("dropped before every probe of the round settled")
	}
	clk.Advance(5 * time.Second) // the detection's timeout
	eventually(t, func() bool { return m.Get("dead") == nil && m.Get("refuses") == nil })
	if m.Get("alive") == nil {
		t.Fatal("a connection that answered was dropped")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gone) != 2 {
		t.Fatalf("disconnect hooks ran for %v", gone)
	}
	if !dead.closed {
		t.Fatal("the dropped connection's stream was not closed")
	}
}

// TestActivityKeepsConnection: requests refresh a connection, which is then
// never probed.
func TestActivityKeepsConnection(t *testing.T) {
	m, clk := newManager(t, nil)
	s := &fakeStream{}
	m.Register(sdkConn("c", s))
	m.Start()
	for i := 0; i < 20; i++ {
		clk.Advance(3 * time.Second)
		m.Touch("c")
	}
	if got := s.types(); len(got) != 0 {
		t.Fatalf("an active connection was probed: %v", got)
	}
}

func TestConnectionLimit(t *testing.T) {
	m, _ := newManager(t, func(c *Config) { c.MaxConnections = 2 })
	if err := m.Register(sdkConn("a", &fakeStream{})); err != nil {
		t.Fatal(err)
	}
	if err := m.Register(sdkConn("a", &fakeStream{})); err != nil {
		t.Fatalf("re-registering an id: %v", err)
	}
	if err := m.Register(sdkConn("b", &fakeStream{})); err != nil {
		t.Fatal(err)
	}
	if err := m.Register(sdkConn("c", &fakeStream{})); !errors.Is(err, ErrOverLimit) {
		t.Fatalf("third connection: %v", err)
	}
	cl := NewConn("node", &fakeStream{})
	cl.Labels = map[string]string{LabelSource: LabelSourceCluster}
	if err := m.Register(cl); err != nil {
		t.Fatalf("cluster connections are not limited: %v", err)
	}
	m.Unregister("a")
	// cluster connections are never refused but count (Java's total count)
	if err := m.Register(sdkConn("c", &fakeStream{})); !errors.Is(err, ErrOverLimit) {
		t.Fatalf("with a cluster connection counted: %v", err)
	}
	m.Unregister("node")
	if err := m.Register(sdkConn("c", &fakeStream{})); err != nil {
		t.Fatalf("after a connection left: %v", err)
	}
	if got := m.CountByIP()["10.0.0.1"]; got != 2 {
		t.Fatalf("per-IP count %d", got)
	}
}

func TestRequestAckTimeoutAndClose(t *testing.T) {
	m, clk := newManager(t, nil)
	s := &fakeStream{}
	m.Register(sdkConn("c", s))
	type res struct {
		r   *remote.DecodedResponse
		err error
	}
	ch := make(chan res, 3)
	cb := func(r *remote.DecodedResponse, err error) { ch <- res{r, err} }
	if err := m.RequestAsync("c", &remote.ClientDetectionRequest{}, 3*time.Second, cb); err != nil {
		t.Fatal(err)
	}
	// the ack carries the request id the manager gave
	req, _ := remote.DecodeRequest(s.sent[0])
	m.Ack("c", remote.Encode(remote.NewPlain(remote.TypeClientDetectionResponse,
		remote.Response{ResultCode: 200, RequestID: req.Base().RequestID})))
	if r := <-ch; r.err != nil || !r.r.Success() {
		t.Fatalf("acked request: %+v", r)
	}
	m.RequestAsync("c", &remote.ClientDetectionRequest{}, 3*time.Second, cb)
	clk.Advance(3 * time.Second)
	if r := <-ch; !errors.Is(r.err, ErrTimeout) {
		t.Fatalf("unanswered request: %v", r.err)
	}
	m.RequestAsync("c", &remote.ClientDetectionRequest{}, 3*time.Second, cb)
	m.Unregister("c")
	if r := <-ch; !errors.Is(r.err, ErrClosed) {
		t.Fatalf("request of a closed connection: %v", r.err)
	}
	if err := m.RequestAsync("c", &remote.ClientDetectionRequest{}, time.Second, cb); !errors.Is(err, ErrNoConnection) {
		t.Fatalf("request to an unknown connection: %v", err)
	}
}

func TestRebalanceResetsConnections(t *testing.T) {
	m, clk := newManager(t, nil)
	var streams []*fakeStream
	for _, id := range []string{"a", "b", "c"} {
		s := &fakeStream{}
		streams = append(streams, s)
		m.Register(sdkConn(id, s))
	}
	m.Start()
	m.Rebalance(1, "10.9.9.9:8848")
	clk.Advance(time.Second)
	var resets []*remote.Payload
	for _, s := range streams {
		s.mu.Lock()
		resets = append(resets, s.sent...)
		s.mu.Unlock()
	}
	if len(resets) != 2 {
		t.Fatalf("%d resets, want 2", len(resets))
	}
	for _, p := range resets {
		if p.Metadata.Type != remote.TypeConnectResetRequest {
			t.Fatalf("sent %s", p.Metadata.Type)
		}
		d, _ := remote.DecodeResponse(p.Metadata.Type, p.Body) // reads any JSON object
		if d.Str("serverIp") != "10.9.9.9" || d.Str("serverPort") != "8848" || d.Str("connectionId") == "" {
			t.Fatalf("reset body %s", p.Body)
		}
	}
	clk.Advance(3 * time.Second) // the rebalance is done once
	n := 0
	for _, s := range streams {
		n += len(s.types())
	}
	if n != 2 {
		t.Fatalf("rebalanced again: %d requests", n)
	}
}

// TestBusyStreamEjected: a stream whose send stays blocked fails the
// following sends as busy, and after BusyEject of that the connection is
// probed (and, not answering, dropped).
func TestBusyStreamEjected(t *testing.T) {
	m, clk := newManager(t, func(c *Config) { c.SendWait = 20 * time.Millisecond })
	s := &fakeStream{block: make(chan struct{})}
	m.Register(sdkConn("c", s))
	go m.Notify(m.Get("c"), &remote.SetupAckRequest{}) // blocks in Send
	time.Sleep(10 * time.Millisecond)
	if err := m.Notify(m.Get("c"), &remote.SetupAckRequest{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("send behind a blocked one: %v", err)
	}
	clk.Advance(301 * time.Second)
	m.Touch("c") // active, but busy for over five minutes
	if err := m.Notify(m.Get("c"), &remote.SetupAckRequest{}); !errors.Is(err, ErrBusy) {
		t.Fatal(err)
	}
	m.Start()
	clk.Advance(time.Second) // the round probes it; the probe is busy too: dropped
	eventually(t, func() bool { return m.Get("c") == nil })
	close(s.block)
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// AppLabel answers as Java's getAppLabels map does.
func TestAppLabel(t *testing.T) {
	t.Parallel()
	c := &Conn{Version: "Nacos-Java-Client:v2.5.1", Labels: map[string]string{
		LabelAppName: "shop", "app_conn_Vipserver-Tag": "gray", "app_conn_blank": "  ", "app_conn_": "x",
		"app_conn_AppName": "override", "Vipserver-Tag": "not-an-app-label", "app_conn_ClientVersion": "",
	}}
	// getAppLabels: AppName and ClientVersion, then every non-blank
	// "app_conn_" label without its prefix
	m := map[string]string{"AppName": "override", "ClientVersion": "Nacos-Java-Client:v2.5.1", "Vipserver-Tag": "gray"}
	for _, name := range []string{"Vipserver-Tag", "blank", "", "AppName", "ClientVersion", "missing", "app_conn_Vipserver-Tag"} {
		if got, want := c.AppLabel(name), m[name]; got != want {
			t.Errorf("AppLabel(%q) = %q, getAppLabels has %q", name, got, want)
		}
	}
}
