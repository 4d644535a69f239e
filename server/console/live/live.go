// Package live fans naming changes out to the web console's event streams
// (GET /v1/console/events): the server publishes every change of the
// naming registry's change stream to the hub. Plain Go, no HTTP: the
// console handler turns a subscription into server-sent events.
package live

import (
	"sync"
)

// Event says that a service changed (an instance registered, left, changed
// health or metadata, or the service itself changed).
type Event struct {
	Namespace string // namespace id ("public" for the default namespace)
	Service   string // grouped service name, group@@name
}

// Hub delivers events to subscribers. Publish never blocks: a subscriber
// that does not keep up loses events and is told so by its Overflow channel,
// so it can resynchronise (re-read the state) instead of missing a change.
type Hub struct {
	mu     sync.Mutex
	subs   map[*Sub]struct{}
	closed bool
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[*Sub]struct{}{}} }

// Sub is one subscription.
type Sub struct {
	hub    *Hub
	filter func(Event) bool
	c      chan Event
	over   chan struct{} // one token: events were dropped
	done   chan struct{} // closed by Cancel or by Hub.Close
	once   sync.Once
}

// subBuffer is how many events a slow subscriber may lag behind.
const subBuffer = 256

// Subscribe registers a subscriber for the events filter accepts (nil: all).
// After Close it returns a subscription that is already done.
func (h *Hub) Subscribe(filter func(Event) bool) *Sub {
	s := &Sub{hub: h, filter: filter, c: make(chan Event, subBuffer), over: make(chan struct{}, 1), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(s.done)
		return s
	}
	h.subs[s] = struct{}{}
	return s
}

// Events delivers the subscribed events.
func (s *Sub) Events() <-chan Event { return s.c }

// Overflow receives a token when events were dropped for this subscriber.
func (s *Sub) Overflow() <-chan struct{} { return s.over }

// Done is closed when the subscription ends (Cancel or Hub.Close).
func (s *Sub) Done() <-chan struct{} { return s.done }

// Cancel ends the subscription; safe to call more than once.
func (s *Sub) Cancel() {
	s.hub.mu.Lock()
	delete(s.hub.subs, s)
	s.hub.mu.Unlock()
	s.once.Do(func() { close(s.done) })
}

// Publish sends e to every subscriber whose filter accepts it.
func (h *Hub) Publish(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.filter != nil && !s.filter(e) {
			continue
		}
		select {
		case s.c <- e:
		default:
			select {
			case s.over <- struct{}{}:
			default:
			}
		}
	}
}

// Subscribers is the number of open subscriptions.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Close ends every subscription (so open event streams finish and the HTTP
// server can shut down) and refuses new ones.
func (h *Hub) Close() {
	h.mu.Lock()
	subs := h.subs
	h.subs = map[*Sub]struct{}{}
	h.closed = true
	h.mu.Unlock()
	for s := range subs {
		s.once.Do(func() { close(s.done) })
	}
}
