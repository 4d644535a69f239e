package live

import (
	"testing"
)

func TestPublishFilterOverflowClose(t *testing.T) {
	h := NewHub()
	only := h.Subscribe(func(e Event) bool { return e.Service == "G@@a" })
	all := h.Subscribe(nil)
	h.Publish(Event{"public", "G@@a"})
	h.Publish(Event{"public", "G@@b"})
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
		h.Publish(Event{"public", "G@@a"})
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
