package main

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

const holdKey, holdGroup = "scale-hold.yaml", "SCALE"

func md5hex(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

func publishReq(dataID, group, content string) []byte {
	body := "dataId=" + url.QueryEscape(dataID) + "&group=" + url.QueryEscape(group) + "&content=" + url.QueryEscape(content)
	return request("POST", "/nacos/v1/cs/configs", "application/x-www-form-urlencoded", nil, []byte(body))
}

func listenReq(entries string, timeout time.Duration) []byte {
	return request("POST", "/nacos/v1/cs/configs/listener", "application/x-www-form-urlencoded",
		map[string]string{"Long-Pulling-Timeout": strconv.FormatInt(timeout.Milliseconds(), 10)},
		[]byte("Listening-Configs="+url.QueryEscape(entries)))
}

// holders holds o.holders long polls on one key from a child process (the
// descriptor limit is per process), measures nacosd's RSS and CPU while they
// are held, publishes the key once and reports when the last was answered.
func holders(o options, out, log io.Writer) error {
	loadBefore := loadAvg()
	s, h, cleanup, err := fresh(o, log)
	if err != nil {
		return err
	}
	defer cleanup()
	if r, err := h.do(publishReq(holdKey, holdGroup, "v: 1")); err != nil || r.StatusCode() != 200 {
		return fmt.Errorf("holders: first publish: %v", err)
	}
	for range 100 { // warm the paths the holders take
		if _, err := h.do(listenReq(holdKey+"\x02"+holdGroup+"\x02\x01", 30*time.Second)); err != nil {
			return fmt.Errorf("holders: warm: %w", err)
		}
	}
	time.Sleep(time.Second)
	rss0 := rssMiB(s.pid())
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("holders: %w", err)
	}
	child := exec.Command(self, "holders-child", "-addr", s.addr, "-holders", strconv.Itoa(o.holders), "-md5", md5hex("v: 1"), "-timeout", o.timeout.String())
	child.Stderr = log
	pipe, err := child.StdoutPipe()
	if err != nil {
		return fmt.Errorf("holders: %w", err)
	}
	if err := child.Start(); err != nil {
		return fmt.Errorf("holders: start child: %w", err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	sc := bufio.NewScanner(pipe)
	line := func() (map[string]string, error) {
		if !sc.Scan() {
			return nil, fmt.Errorf("holders: child ended: %v", sc.Err())
		}
		m := map[string]string{}
		for _, f := range strings.Fields(sc.Text()) {
			k, v, _ := strings.Cut(f, "=")
			m[k] = v
		}
		return m, nil
	}
	held, err := line()
	if err != nil {
		return err
	}
	time.Sleep(3 * time.Second)
	rss1 := rssMiB(s.pid())
	cpu0 := cpuSeconds(s.pid())
	const idle = 10 * time.Second
	time.Sleep(idle)
	cpu1 := cpuSeconds(s.pid())
	rss2 := rssMiB(s.pid())
	t0 := time.Now()
	r, err := h.do(publishReq(holdKey, holdGroup, "v: 2"))
	if err != nil {
		return fmt.Errorf("holders: publish: %w", err)
	}
	n, _ := strconv.Atoi(held["held"])
	perHolder := (rss1 - rss0) * (1 << 20) / float64(max(n, 1))
	wake := ""
	if r.StatusCode() != 200 {
		// nacosd keeps the last 5 % of its connection limit for health
		// checks and node calls (server/limits.go): no ordinary request
		// is served while that many polls are held.
		wake = fmt.Sprintf("**the publish was refused: %d %q**, so no holder was woken", r.StatusCode(), r.Body())
	} else {
		pubTook := time.Since(t0)
		done, err := line()
		if err != nil {
			return err
		}
		last, _ := strconv.ParseInt(done["last"], 10, 64)
		firstAns, _ := strconv.ParseInt(done["first"], 10, 64)
		wake = fmt.Sprintf("after one publish (answered in %s): first holder answered after %s, **all %s answered after %s** (%s named the key)",
			ms(pubTook), ms(time.Duration(firstAns-t0.UnixNano())), done["answered"], ms(time.Duration(last-t0.UnixNano())), done["changed"])
	}
	fmt.Fprintf(out, "| (b) long-poll holders | %d long polls on one key (Long-Pulling-Timeout %s) from a child process; nacosd's file limit %s | "+
		"held: %d (answered at once: %s, failed to connect: %s); RSS %.1f MiB before, %.1f MiB held (%.1f after %s idle): **%.0f bytes per held poll**; "+
		"CPU while idle and held: %.1f %% of one core; %s | %s → %s |\n",
		o.holders, o.timeout, fileLimit(s.pid()), n, held["early"], held["dialerr"], rss0, rss1, rss2, idle, perHolder,
		(cpu1-cpu0)/idle.Seconds()*100, wake, loadBefore, loadAvg())
	return nil
}

func fileLimit(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Max open files") {
			return strings.Fields(l)[3]
		}
	}
	return "?"
}

// holdersChild opens o.holders connections, sends one long poll on each,
// prints "held=N early=E dialerr=D" once all are sent (plus 2 s), then
// "answered=A first=NS last=NS changed=C" when every held poll was
// answered (or 60 s passed).
func holdersChild(o options, out io.Writer) error {
	req := listenReq(holdKey+"\x02"+holdGroup+"\x02"+o.md5+"\x01", o.timeout)
	type ans struct {
		at      int64
		changed bool
	}
	answers := make(chan ans, o.holders)
	var dialErr, sent atomic.Int64
	sem := make(chan struct{}, 200)
	for range o.holders {
		sem <- struct{}{}
		go func() {
			h, err := dial(o.addr)
			if err == nil {
				err = h.write(req)
			}
			<-sem
			if err != nil {
				dialErr.Add(1)
				return
			}
			sent.Add(1)
			r, err := h.read()
			a := ans{at: time.Now().UnixNano()}
			if err == nil && r.StatusCode() == 200 {
				a.changed = strings.Contains(string(r.Body()), holdKey)
			}
			answers <- a
		}()
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	time.Sleep(2 * time.Second)
	early := len(answers)
	for range early {
		<-answers
	}
	fmt.Fprintf(out, "held=%d early=%d dialerr=%d\n", sent.Load()-int64(early), early, dialErr.Load())
	want := int(sent.Load()) - early
	var first, last int64
	changed := 0
	got := 0
	deadline := time.After(60 * time.Second)
loop:
	for got < want {
		select {
		case a := <-answers:
			got++
			if first == 0 || a.at < first {
				first = a.at
			}
			last = max(last, a.at)
			if a.changed {
				changed++
			}
		case <-deadline:
			break loop
		}
	}
	fmt.Fprintf(out, "answered=%d first=%d last=%d changed=%d\n", got, first, last, changed)
	return nil
}
