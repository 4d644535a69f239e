package live

import (
	"testing"

	"github.com/nacosd/nacosd/server/push"
)

type recorder struct{ changed []string }

func (r *recorder) Subscribe(push.Subscriber)     {}
func (r *recorder) ServiceChanged(ns, svc string) { r.changed = append(r.changed, ns+"/"+svc) }

func TestTeeFilterOverflowClose(t *testing.T) {
	h := NewHub()
	rec := &recorder{}
	p := h.Tee(rec)
	only := h.Subscribe(func(e Event) bool { return e.Service == "G@@a" })
	all := h.Subscribe(nil)
	p.ServiceChanged("public", "G@@a")
	p.ServiceChanged("public", "G@@b")
	if len(rec.changed) != 2 {
		t.Fatalf("push service not called: %v", rec.changed)
	}
	if e := <-only.Events(); e != (Event{"public", "G@@a"}) {
		t.Fatalf("filtered: %+v", e)
	}
	select {
	case e := <-only.Events():
		t.Fatalf("filter let %+v through", e)
	default:
	}
	if len(all.Events()) != 2 {
		t.Fatalf("unfiltered got %d", len(all.Events()))
	}
	// a subscriber that does not read loses events and is told so
	for i := 0; i < subBuffer+5; i++ {
		p.ServiceChanged("public", "G@@a")
	}
	select {
	case <-only.Overflow():
	default:
		t.Fatal("no overflow signal")
	}
	only.Cancel()
	only.Cancel()
	if h.Subscribers() != 1 {
		t.Fatalf("subscribers after cancel: %d", h.Subscribers())
	}
	h.Close()
	select {
	case <-all.Done():
	default:
		t.Fatal("Close did not end the subscription")
	}
	if s := h.Subscribe(nil); s.Done() == nil {
		t.Fatal("nil done")
	} else {
		select {
		case <-s.Done():
		default:
			t.Fatal("subscription after Close is not done")
		}
	}
}
