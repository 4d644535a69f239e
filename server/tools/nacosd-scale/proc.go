package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// server is a nacosd process started with a fresh data directory.
type server struct {
	cmd     *exec.Cmd
	addr    string
	dir     string
	started time.Duration // process start to first answer
	exited  chan struct{}
}

// startNacosd runs bin (nacosd) on 127.0.0.1:port with a fresh data dir.
func startNacosd(bin string, port int, pprofAddr string, stderr io.Writer) (*server, error) {
	dir, err := os.MkdirTemp("", "nacosd-scale-")
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "-port", strconv.Itoa(port), "-host", "127.0.0.1", "-ip", "127.0.0.1",
		"-data-dir", dir, "-raft-addr", fmt.Sprintf("127.0.0.1:%d", port-1000), "-log-level", "error", "-pprof-addr", pprofAddr)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &server{cmd: cmd, addr: addr, dir: dir, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	url := "http://" + addr + "/nacos/v1/console/health/readiness"
	for time.Since(t0) < 30*time.Second {
		select {
		case <-s.exited:
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("nacosd exited before answering (port %d taken?)", port)
		default:
		}
		if r, err := http.Get(url); err == nil {
			_ = r.Body.Close()
			if r.StatusCode == 200 {
				s.started = time.Since(t0)
				return s, nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.stop()
	return nil, errors.New("nacosd not ready after 30s")
}

// fresh starts nacosd and opens one connection to it; stop ends both.
func fresh(o options, log io.Writer) (s *server, h *hconn, stop func(), err error) {
	if s, err = startNacosd(o.bin, o.port, o.pprof, log); err != nil {
		return nil, nil, nil, err
	}
	if h, err = dial(s.addr); err != nil {
		s.stop()
		return nil, nil, nil, err
	}
	return s, h, func() { h.close(); s.stop() }, nil
}

func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	<-s.exited
	_ = os.RemoveAll(s.dir)
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// rssMiB reads VmRSS of pid.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

// cpuSeconds is utime+stime of pid (clock ticks of 10 ms).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("refusing a non-loopback target %s", addr)
	}
	return nil
}

func probe(url string) bool {
	c := http.Client{Timeout: time.Second}
	r, err := c.Get(url)
	if err != nil {
		return false
	}
	_ = r.Body.Close()
	return r.StatusCode == 200
}

// freePort returns a port p of 127.0.0.1 with p and p-1000 (raft) free.
func freePort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("free port: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if p < 2000 {
			continue
		}
		r, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p-1000))
		if err != nil {
			continue
		}
		_ = r.Close()
		return p, nil
	}
	return 0, errors.New("free port: none found")
}
