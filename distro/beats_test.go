package distro

import (
	"net/http"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/internal/testlog"
)

// TestBeatRoundsReachNacosdMembers: the owner sends the beats since its
// previous round to every nacosd member (never to a Java one), every fifth
// round names every owned service, and a member records what it receives.
func TestBeatRoundsReachNacosdMembers(t *testing.T) {
	all := []string{nodeA, nodeB, nodeC}
	st, tr := newFakeStore(), &fakeTransport{}
	clk := clocktest.New(time.Unix(1700000000, 0))
	d, err := New(Config{Store: st, Members: &fakeMembers{self: nodeA, healthy: all, all: all, java: []string{nodeC}},
		Transport: tr, Clock: clk, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	mine, theirs := svcOwnedBy(t, nodeA), svcOwnedBy(t, nodeB)
	now := clk.Now().UnixMilli()
	st.ApplyBeatTimes(ServiceRef{"public", mine}, map[string]int64{"10.0.0.1:80:unknown:DEFAULT": now - 500})
	st.ApplyBeatTimes(ServiceRef{"public", theirs}, map[string]int64{"10.0.0.2:80:unknown:DEFAULT": now - 500})
	d.beatRound() // the first round names every owned service
	d.wg.Wait()
	sent := tr.sent(http.MethodPut, beatsPath)
	if len(sent) != 1 || sent[0].Addr != nodeB {
		t.Fatalf("beat rounds sent to %+v, want only the nacosd member %s", sent, nodeB)
	}
	// the receiving member records the owner's beats
	other, ost, _, _ := newDistro(t, nodeB)
	if err := other.OnBeats(sent[0].Body); err != nil {
		t.Fatal(err)
	}
	if got := ost.beats[ServiceRef{"public", mine}]["10.0.0.1:80:unknown:DEFAULT"]; got != now-500 {
		t.Fatalf("recorded beat %d, body %s", got, sent[0].Body)
	}
	if _, ok := ost.beats[ServiceRef{"public", theirs}]; ok {
		t.Fatalf("a service the sender does not own was reported: %s", sent[0].Body)
	}
	// nothing beat since: the next round sends nothing
	clk.Advance(time.Second)
	d.beatRound()
	d.wg.Wait()
	if n := len(tr.sent(http.MethodPut, beatsPath)); n != 1 {
		t.Fatalf("%d rounds sent with nothing new", n)
	}
	if err := other.OnBeats([]byte("{bad")); err == nil {
		t.Fatal("a bad body was accepted")
	}
}

// TestListsFromNacosdCarryBeats: a list a nacosd member sends carries its
// true last beats (that member hears its owner's beat reports): they are
// recorded, so a member that later owns the service (a restarted one,
// which loaded its lists) expires exactly the stopped instances; a Java
// member's sync (no source) is not trusted for them.
func TestListsFromNacosdCarryBeats(t *testing.T) {
	d, st, _, _ := newDistro(t, nodeB)
	svc := svcOwnedBy(t, nodeA)
	body := []byte(`{"com.alibaba.nacos.naming.iplist.ephemeral.public##` + svc + `":{"key":"com.alibaba.nacos.naming.iplist.ephemeral.public##` + svc +
		`","value":{"instanceList":[{"ip":"10.0.0.1","port":80,"weight":1.0,"healthy":true,"enabled":true,"ephemeral":true,"clusterName":"DEFAULT","serviceName":"` + svc +
		`","metadata":{},"lastBeat":1700000000123,"marked":false,"app":"DEFAULT","instanceId":"10.0.0.1#80#DEFAULT#` + svc + `"}]},"timestamp":1}}`)
	if err := d.OnDatums(body, Sender{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := st.beats[ServiceRef{"public", svc}]; ok {
		t.Fatal("a Java member's list was trusted for its beats")
	}
	if err := d.OnDatums(body, Sender{Addr: nodeA}); err != nil {
		t.Fatal(err)
	}
	if got := st.beats[ServiceRef{"public", svc}]["10.0.0.1:80:unknown:DEFAULT"]; got != 1700000000123 {
		t.Fatalf("recorded beats %v", st.beats)
	}
}
