package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// subscriber is one UDP push receiver acking as the Java client does
// (PushReceiver: ack every datagram to its source with its lastRefTime).
type subscriber struct {
	conn     *net.UDPConn
	port     int
	firstAck atomic.Int64 // Unix ns of the first ack of a datagram of this round, 0: none yet
}

type fanout struct {
	subs     []*subscriber
	loss     atomic.Uint64 // drop probability × 1e6
	received atomic.Int64
	dropped  atomic.Int64
	acks     atomic.Int64
	marker   atomic.Pointer[[]byte] // bytes only the datagrams of the current round carry
}

func (f *fanout) serve(s *subscriber) {
	buf := make([]byte, 65536)
	for {
		n, from, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		f.received.Add(1)
		if p := float64(f.loss.Load()) / 1e6; p > 0 && rand.Float64() < p {
			f.dropped.Add(1)
			continue
		}
		data := buf[:n]
		if n > 2 && data[0] == 0x1f && data[1] == 0x8b {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				continue
			}
			if data, err = io.ReadAll(zr); err != nil {
				continue
			}
		}
		ref := lastRefTime(data)
		if ref == "" {
			continue
		}
		_, _ = s.conn.WriteToUDP([]byte(`{"type": "push-ack", "lastRefTime":"`+ref+`", "data":""}`), from)
		f.acks.Add(1)
		if m := f.marker.Load(); m != nil && bytes.Contains(data, *m) {
			s.firstAck.CompareAndSwap(0, time.Now().UnixNano())
		}
	}
}

// lastRefTime is the envelope's lastRefTime (the escaped one inside
// "data" is followed by a backslash, not a quote).
func lastRefTime(b []byte) string {
	i := bytes.LastIndex(b, []byte(`"lastRefTime":`))
	if i < 0 {
		return ""
	}
	j := i + len(`"lastRefTime":`)
	k := j
	for k < len(b) && b[k] >= '0' && b[k] <= '9' {
		k++
	}
	return string(b[j:k])
}

// pushFanout subscribes o.subs UDP sockets to one service (as the Java
// client does, through instance/list with udpPort and clientIP), then
// changes the service twice: without loss and with the subscribers
// dropping o.loss of the datagrams, and reports the time from the change
// to the last ack and the resends.
func pushFanout(o options, out, log io.Writer) error {
	loadBefore := loadAvg()
	s, h, done, err := fresh(o, log)
	if err != nil {
		return err
	}
	defer done()
	register := func(i int) error {
		r, err := h.do(request("POST", fmt.Sprintf("/nacos/v1/ns/instance?serviceName=DEFAULT_GROUP%%40%%40scale.push&ip=127.9.0.%d&port=8080&ephemeral=false", i), "", nil, nil))
		if err != nil {
			return fmt.Errorf("push: register: %w", err)
		}
		if r.StatusCode() != 200 {
			return fmt.Errorf("push: register: %d %s", r.StatusCode(), r.Body())
		}
		return nil
	}
	if err := register(1); err != nil {
		return err
	}
	f := &fanout{}
	for range o.subs {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return fmt.Errorf("push: subscriber socket: %w", err)
		}
		defer c.Close()
		sub := &subscriber{conn: c, port: c.LocalAddr().(*net.UDPAddr).Port}
		f.subs = append(f.subs, sub)
		go f.serve(sub)
	}
	lists := make([][]byte, len(f.subs))
	for i, sub := range f.subs {
		lists[i] = request("GET", "/nacos/v1/ns/instance/list?serviceName=DEFAULT_GROUP%40%40scale.push&clusters=&healthyOnly=false&udpPort="+strconv.Itoa(sub.port)+"&clientIP=127.0.0.1", "", nil, nil)
	}
	subscribe := func() error {
		bad, first, err := doAll(s.addr, lists, 16)
		if err != nil || bad > 0 {
			return fmt.Errorf("push: subscribe: %d refused (first %s): %w", bad, first, err)
		}
		return nil
	}
	t0 := time.Now()
	if err := subscribe(); err != nil {
		return err
	}
	subTook := time.Since(t0)
	// Keep the subscriptions fresh (the server forgets a subscriber after
	// 10 s without a poll; the Java client polls every cacheMillis).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(4 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				_ = subscribe()
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(500 * time.Millisecond)

	type round struct {
		loss                   float64
		acked                  int
		p50, p99, last         time.Duration
		received, dropped, ack int64
		kernelDrops            int64 // RcvbufErrors of the whole machine
	}
	const settle = 22 * time.Second // past the resend and give-up checks of a round
	do := func(i int, loss float64, wait time.Duration) (round, error) {
		f.loss.Store(uint64(loss * 1e6))
		for _, sub := range f.subs {
			sub.firstAck.Store(0)
		}
		m := fmt.Appendf(nil, `127.9.0.%d\"`, i) // the instance this round adds, inside the escaped data
		f.marker.Store(&m)
		r0, d0, a0, k0 := f.received.Load(), f.dropped.Load(), f.acks.Load(), udpRcvbufErrors()
		start := time.Now()
		if err := register(i); err != nil {
			return round{}, err
		}
		deadline := start.Add(wait)
		var times []time.Duration
		for {
			times = times[:0]
			for _, sub := range f.subs {
				if t := sub.firstAck.Load(); t != 0 {
					times = append(times, time.Duration(t-start.UnixNano()))
				}
			}
			if len(times) == len(f.subs) || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(settle) // resends come AckTimeout (10 s) after a lost ack
		slices.Sort(times)
		return round{loss: loss, acked: len(times), p50: pct(times, 50), p99: pct(times, 99), last: pct(times, 100),
			received: f.received.Load() - r0, dropped: f.dropped.Load() - d0, ack: f.acks.Load() - a0, kernelDrops: udpRcvbufErrors() - k0}, nil
	}
	clean, err := do(2, 0, 15*time.Second)
	if err != nil {
		return err
	}
	lossy, err := do(3, o.loss, 40*time.Second)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "| (c) push fan-out | one service, %d UDP subscribers on 127.0.0.1 (subscribed through instance/list in %s, re-polled every 4 s), acking as the Java client; "+
		"change = register a persistent instance | no loss: %d of %d acked, ack p50 %s, p99 %s, **last ack %s** after the change, %d datagrams (%d resends), %d UDP receive-buffer drops on the machine; "+
		"datagrams counted until %s after the round; %.0f %% dropped by the subscribers: %d of %d acked, last ack %s, %d datagrams received, %d dropped, **%d resends**, %d UDP receive-buffer drops on the machine, %d never acked (given up after one resend, as Java's MaxRetry) ; RSS %.0f MiB | %s → %s |\n",
		len(f.subs), subTook.Round(time.Millisecond),
		clean.acked, len(f.subs), ms(clean.p50), ms(clean.p99), ms(clean.last), clean.received, clean.received-int64(len(f.subs)), clean.kernelDrops,
		settle, o.loss*100, lossy.acked, len(f.subs), ms(lossy.last), lossy.received, lossy.dropped, lossy.received-int64(len(f.subs)), lossy.kernelDrops, len(f.subs)-lossy.acked,
		rssMiB(s.pid()), loadBefore, loadAvg())
	return nil
}

// udpRcvbufErrors is the kernel's count of UDP datagrams dropped for a full
// socket receive buffer (/proc/net/snmp), for every socket of the machine.
func udpRcvbufErrors() int64 {
	b, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		return -1
	}
	var names []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if n == "RcvbufErrors" && i < len(f) {
				v, _ := strconv.ParseInt(f[i], 10, 64)
				return v
			}
		}
	}
	return -1
}
