package console

import (
	"bufio"
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/server/console/live"
	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/naming"
)

// Event stream timings.
const (
	// coalesce gathers changes that arrive together (a deploy registering
	// many instances) into one message.
	coalesce = 150 * time.Millisecond
	// keepAlive writes a comment so proxies keep the stream open and a
	// client that went away is noticed.
	keepAlive = 15 * time.Second
)

// events is GET /v1/console/events?namespaceId=&serviceName=&groupName=:
// a text/event-stream with one "service" event ({"namespaceId",
// "serviceName"}, grouped name) per changed service of the namespace, or of
// the one service when serviceName is given. A "resync" event means events
// were lost and the client should re-read what it shows.
func (h *handlers) events(c *fiber.Ctx) error {
	if h.Hub == nil {
		return notAvailable("the event stream")
	}
	p := httpapi.ParamsOf(c)
	ns := p.Optional("namespaceId", "public")
	svc := p.Optional("serviceName", "")
	if svc != "" {
		svc = naming.GroupedName(svc, p.Optional("groupName", "DEFAULT_GROUP"))
	}
	sub := h.Hub.Subscribe(func(e live.Event) bool {
		return e.Namespace == ns && (svc == "" || e.Service == svc)
	})
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Accel-Buffering", "no")
	c.Context().SetBodyStreamWriter(fasthttp.StreamWriter(func(w *bufio.Writer) {
		defer sub.Cancel()
		if streamEvents(w, sub) != nil {
			return
		}
	}))
	return nil
}

// streamEvents writes events until the subscription ends or a write fails
// (the browser went away).
func streamEvents(w *bufio.Writer, sub *live.Sub) error {
	if _, err := w.WriteString("retry: 2000\n: nacosd console events\n\n"); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-sub.Done():
			return nil
		case <-tick.C:
			if _, err := w.WriteString(": keep-alive\n\n"); err != nil {
				return err
			}
		case <-sub.Overflow():
			if _, err := w.WriteString("event: resync\ndata: {}\n\n"); err != nil {
				return err
			}
		case e := <-sub.Events():
			batch := map[live.Event]bool{e: true}
			timer := time.NewTimer(coalesce)
		gather:
			for {
				select {
				case e := <-sub.Events():
					batch[e] = true
				case <-timer.C:
					break gather
				case <-sub.Done():
					timer.Stop()
					return nil
				}
			}
			for e := range batch {
				b, _ := json.Marshal(map[string]string{"namespaceId": e.Namespace, "serviceName": e.Service})
				if _, err := w.WriteString("event: service\ndata: " + string(b) + "\n\n"); err != nil {
					return err
				}
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}
