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
