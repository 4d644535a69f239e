package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"time"
)

type wake struct {
	client int
	at     time.Time
	keys   []string
	err    error
}

// listeners spreads o.keys configs over o.clients long-poll clients (one
// connection and o.keys/o.clients keys each), publishes o.publishes random
// keys one after the other and measures the time from a publish to its
// listener's answer, counting every client woken that should not have been.
func listeners(o options, out, log io.Writer) error {
	loadBefore := loadAvg()
	s, _, done, err := fresh(o, log)
	if err != nil {
		return err
	}
	defer done()
	key := func(i int) string { return fmt.Sprintf("scale-l-%d.yaml", i) }
	content := map[int]string{}
	reqs := make([][]byte, o.keys)
	for i := range o.keys {
		content[i] = fmt.Sprintf("v: 0-%d", i)
		reqs[i] = publishReq(key(i), holdGroup, content[i])
	}
	t0 := time.Now()
	bad, first, err := doAll(s.addr, reqs, 16)
	if err != nil || bad > 0 {
		return fmt.Errorf("listeners: publish: %d refused (first %s): %w", bad, first, err)
	}
	fillTook := time.Since(t0)
	per := o.keys / o.clients
	owner := func(k int) int { return k / per }
	wakes := make(chan wake, o.clients)
	relisten := make([]chan map[int]string, o.clients)
	for c := range o.clients {
		relisten[c] = make(chan map[int]string, 1)
		md5s := map[int]string{}
		for k := c * per; k < (c+1)*per; k++ {
			md5s[k] = md5hex(content[k])
		}
		h, err := dial(s.addr)
		if err != nil {
			return err
		}
		defer h.close()
		go func() {
			for {
				var b strings.Builder
				for k := c * per; k < (c+1)*per; k++ {
					b.WriteString(key(k) + "\x02" + holdGroup + "\x02" + md5s[k] + "\x01")
				}
				r, err := h.do(listenReq(b.String(), 120*time.Second))
				w := wake{client: c, at: time.Now(), err: err}
				if err == nil {
					body, _ := url.QueryUnescape(string(r.Body()))
					for _, e := range strings.Split(body, "\x01") {
						if d, _, ok := strings.Cut(e, "\x02"); ok {
							w.keys = append(w.keys, d)
						}
					}
				}
				wakes <- w
				if err != nil {
					return
				}
				upd, ok := <-relisten[c]
				if !ok {
					return
				}
				for k, v := range upd {
					md5s[k] = v
				}
			}
		}()
	}
	time.Sleep(2 * time.Second) // every poll registered
	unexpected := 0
	drain := func() {
		for {
			select {
			case w := <-wakes:
				unexpected++
				fmt.Fprintf(log, "listeners: client %d woken unexpectedly (%v, %v)\n", w.client, w.keys, w.err)
				relisten[w.client] <- nil
			default:
				return
			}
		}
	}
	drain()
	pub, err := dial(s.addr)
	if err != nil {
		return err
	}
	defer pub.close()
	var lat, pubLat []time.Duration
	missed, wrongKey := 0, 0
	for i := range o.publishes {
		k := rand.IntN(o.keys)
		content[k] = fmt.Sprintf("v: %d-%d", i+1, k)
		start := time.Now()
		r, err := pub.do(publishReq(key(k), holdGroup, content[k]))
		if err != nil || r.StatusCode() != 200 {
			return fmt.Errorf("listeners: publish %d: %v", i, err)
		}
		pubLat = append(pubLat, time.Since(start))
		timeout := time.After(5 * time.Second)
	wait:
		for {
			select {
			case w := <-wakes:
				if w.client != owner(k) {
					unexpected++
					relisten[w.client] <- nil
					continue
				}
				if !slices.Equal(w.keys, []string{key(k)}) {
					wrongKey++
				}
				lat = append(lat, w.at.Sub(start))
				relisten[w.client] <- map[int]string{k: md5hex(content[k])}
				break wait
			case <-timeout:
				missed++
				break wait
			}
		}
	}
	time.Sleep(time.Second)
	drain()
	slices.Sort(lat)
	slices.Sort(pubLat)
	fmt.Fprintf(out, "| (d) config listeners | %d keys (published in %s), %d clients each holding one long poll on %d keys; %d publishes of random keys, one after the other | "+
		"wake latency (publish sent → its listener's answer) p50 %s, **p99 %s**, max %s (publish answered: p50 %s, p99 %s); "+
		"woken: **%d of %d** expected listeners, %d answers naming other keys, **%d clients woken that listen to other keys**; RSS %.0f MiB | %s → %s |\n",
		o.keys, fillTook.Round(time.Millisecond), o.clients, per, o.publishes,
		ms(pct(lat, 50)), ms(pct(lat, 99)), ms(pct(lat, 100)), ms(pct(pubLat, 50)), ms(pct(pubLat, 99)),
		len(lat), o.publishes, wrongKey, unexpected, rssMiB(s.pid()), loadBefore, loadAvg())
	_ = missed
	return nil
}
