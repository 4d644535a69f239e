package conformance

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Peer is a naming client in a JVM of its own (javatest/client2's
// nacosd.conformance2.Peer, or javatest/client's 1.x one), driven line by
// line over stdin (the commands are in Peer.java).
type Peer struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	done  chan struct{}
}

// StartPeer starts the Peer of the client's version against s and waits
// for READY.
func (j *JavaClient2) StartPeer(ctx context.Context, s *Server, role string) (*Peer, error) {
	dir := filepath.Join(j.WorkDir, s.Name+"-"+j.Prefix()+"-peer-"+role)
	cmd := exec.CommandContext(ctx, "java", "-Xmx96m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-DJM.LOG.PATH="+filepath.Join(dir, "logs"), "-DJM.SNAPSHOT.PATH="+dir,
		"-Dcom.alibaba.nacos.client.local.ip=127.0.0.1", "-Dproject.name=conformance-peer",
		"-cp", j.cp, "nacosd.conformance2.Peer", s.Addr())
	cmd.WaitDelay = 5 * time.Second
	logf, err := os.Create(dir + ".stderr")
	if err != nil {
		return nil, fmt.Errorf("conformance: peer log: %w", err)
	}
	cmd.Stderr = logf
	p := &Peer{cmd: cmd, lines: make(chan string, 64), done: make(chan struct{})}
	if p.in, err = cmd.StdinPipe(); err != nil {
		logf.Close()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("conformance: start peer: %w", err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if !strings.HasPrefix(sc.Text(), "EVENT ") {
				p.lines <- sc.Text()
			}
		}
		cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	if got := p.next(90 * time.Second); got != "READY" {
		p.Kill()
		return nil, fmt.Errorf("conformance: peer on %s did not start (%q), see %s.stderr", s.Name, got, dir)
	}
	return p, nil
}

func (p *Peer) next(d time.Duration) string {
	select {
	case l := <-p.lines:
		return l
	case <-p.done:
		return "EOF"
	case <-time.After(d):
		return "timeout"
	}
}

// Call sends one command and returns the answer's text after "OK".
func (p *Peer) Call(command string) (string, error) {
	if _, err := io.WriteString(p.in, command+"\n"); err != nil {
		return "", fmt.Errorf("peer %s: %w", command, err)
	}
	got := p.next(30 * time.Second)
	if !strings.HasPrefix(got, "OK") {
		return "", fmt.Errorf("peer %s: %s", command, got)
	}
	return strings.TrimSpace(strings.TrimPrefix(got, "OK")), nil
}

// Pid is the JVM's process id.
func (p *Peer) Pid() int { return p.cmd.Process.Pid }

// Kill ends the JVM with SIGKILL and waits for it.
func (p *Peer) Kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// Kill ends a process target with SIGKILL (its process group), as a crash
// would, and waits for it; Start brings it back on the same port and data.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
	s.cmd, s.pid = nil, 0
}

// connectedPorts returns the remote ports of pid's established TCP
// connections to 127.0.0.1 (from /proc: its socket inodes, then
// /proc/net/tcp and tcp6).
func connectedPorts(pid int) ([]int, error) {
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return nil, fmt.Errorf("conformance: fds of %d: %w", pid, err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var ports []int
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "net", f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			if len(fs) < 10 || fs[3] != "01" || !inodes[fs[9]] {
				continue
			}
			_, hexPort, ok := strings.Cut(fs[2], ":")
			if !ok {
				continue
			}
			if n, err := strconv.ParseInt(hexPort, 16, 32); err == nil {
				ports = append(ports, int(n))
			}
		}
	}
	return ports, nil
}

// memberOf returns the index of the cluster member whose gRPC port pid is
// connected to, or -1.
func memberOf(s *Server, pid int) (int, error) {
	ports, err := connectedPorts(pid)
	if err != nil {
		return -1, err
	}
	for i, n := range s.nodes {
		for _, p := range ports {
			if p == n.Port+1000 {
				return i, nil
			}
		}
	}
	return -1, nil
}

// listedOn reports whether server (one member) lists ip:port in service
// (group@@name) over the 1.x HTTP API.
func listedOn(server *Server, service, addr string) (bool, error) {
	_, body, err := httpGetString(server.URL("/nacos/v1/ns/instance/list?serviceName=" + url.QueryEscape(service)))
	if err != nil {
		return false, err
	}
	ip, port, _ := strings.Cut(addr, ":")
	return strings.Contains(body, `"ip":"`+ip+`","port":`+port+`,`), nil
}

// members returns the single servers of s (itself, or its cluster members).
func (s *Server) members() []*Server {
	if s.nodes == nil {
		return []*Server{s}
	}
	return s.nodes
}

const serverLossName = "naming.server.loss"

// RunServerLoss runs naming.server.loss for every 2.x client version on s
// at once: each version's Peer (a 2.x naming client in its own JVM)
// registers an instance, then the harness takes the server away. A single
// server is restarted (ephemeral instances are lost; the client reconnects
// and registers again: ms = server up until listed again). On a cluster the
// member most peers are connected to is killed with SIGKILL: every peer's
// instance must stay listed on the survivors or come back within
// serverLossBound (its client moves to another member and registers
// again), and ms is the longest time it was missing from a survivor.
func RunServerLoss(ctx context.Context, s *Server, rs *Results, javas []*JavaClient2) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	type held struct {
		j       *JavaClient2
		p       *Peer
		service string
		addr    string
		err     error
	}
	hs := make([]*held, len(javas))
	var wg sync.WaitGroup
	for i, j := range javas {
		h := &held{j: j, service: "G2N@@loss-" + strings.ReplaceAll(j.version(), ".", "") + "-" + strconv.FormatInt(time.Now().UnixMilli()%1e9, 36),
			addr: "127.0.0.1:" + strconv.Itoa(18100+i)}
		hs[i] = h
		wg.Add(1)
		go func() {
			defer wg.Done()
			if h.p, h.err = j.StartPeer(ctx, s, "loss"); h.err != nil {
				return
			}
			_, name, _ := strings.Cut(h.service, "@@")
			if _, h.err = h.p.Call("register " + name + " G2N 127.0.0.1 " + strings.TrimPrefix(h.addr, "127.0.0.1:")); h.err != nil {
				return
			}
			_, h.err = eventually(10*time.Second, func() error {
				for _, m := range s.members() {
					if ok, err := listedOn(m, h.service, h.addr); err != nil || !ok {
						return fmt.Errorf("not listed on %s (%v)", m.Addr(), err)
					}
				}
				return nil
			})
		}()
	}
	wg.Wait()
	defer func() {
		for _, h := range hs {
			if h.p != nil {
				h.p.Kill()
			}
		}
	}()
	add := func(h *held, ms int64, detail string, err error) {
		r := Result{Scenario: h.j.Prefix() + "/" + serverLossName, Target: s.Name, OK: err == nil, Ms: ms, Detail: detail}
		if err != nil {
			r.Ms, r.Detail = -1, err.Error()
		}
		rs.Add(r)
	}
	var live []*held
	for _, h := range hs {
		if h.err != nil {
			add(h, -1, "", fmt.Errorf("before the loss: %w", h.err))
			continue
		}
		live = append(live, h)
	}
	if len(live) == 0 {
		return
	}
	if s.nodes == nil {
		serverRestart(ctx, s, len(live), func(i int) (string, string) { return live[i].service, live[i].addr },
			func(i int, ms int64, detail string, err error) { add(live[i], ms, detail, err) })
		return
	}
	// the cluster: kill the member most peers are connected to
	count := make([]int, len(s.nodes))
	on := make([]int, len(live))
	for i, h := range live {
		m, err := memberOf(s, h.p.Pid())
		if err != nil || m < 0 {
			add(h, -1, "", fmt.Errorf("which member the client is connected to: %v (member %d)", err, m))
			on[i] = -1
			continue
		}
		on[i] = m
		count[m]++
	}
	victim := 0
	for i, c := range count {
		if c > count[victim] {
			victim = i
		}
	}
	s.nodes[victim].Kill()
	t0 := time.Now()
	wg = sync.WaitGroup{}
	for i, h := range live {
		if on[i] < 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			gap, err := watchGap(ctx, s, victim, h.service, h.addr, t0)
			moved := "no"
			if on[i] == victim {
				moved = "yes"
				if m, _ := memberOf(s, h.p.Pid()); m >= 0 {
					moved = "yes, to member " + strconv.Itoa(m)
				}
			}
			add(h, gap.Milliseconds(), fmt.Sprintf("SIGKILL of member %d (client connected to it: %s); longest time missing from a survivor", victim, moved), err)
		}()
	}
	wg.Wait()
	// bring the member back (its data is on disk), so later runs see three
	if err := s.nodes[victim].Start(ctx, 2*time.Minute); err != nil {
		s.logger.Warn("cluster member did not come back", "member", victim, "err", err)
	}
}

// serverLossBound is how long an instance of a live client may be missing
// after its server went away: the client's reconnect and its redo of the
// registration.
const serverLossBound = 15 * time.Second

// watchGap polls every survivor (every member but victim) each 100 ms for
// serverLossWatch and returns the longest stretch in which one did not list
// addr; it fails when that exceeds serverLossBound or addr is not listed
// everywhere at the end.
func watchGap(ctx context.Context, s *Server, victim int, service, addr string, t0 time.Time) (time.Duration, error) {
	missingSince := make([]time.Time, len(s.nodes))
	var longest time.Duration
	last := map[int]bool{}
	for time.Since(t0) < serverLossWatch {
		if ctx.Err() != nil {
			return longest, ctx.Err()
		}
		now := time.Now()
		for i, n := range s.nodes {
			if i == victim {
				continue
			}
			ok, err := listedOn(n, service, addr)
			ok = ok && err == nil
			last[i] = ok
			if !ok && missingSince[i].IsZero() {
				missingSince[i] = now
			}
			if ok && !missingSince[i].IsZero() {
				longest = max(longest, now.Sub(missingSince[i]))
				missingSince[i] = time.Time{}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, since := range missingSince {
		if !since.IsZero() {
			longest = max(longest, time.Since(since))
			return longest, fmt.Errorf("%s not listed on member %d %s after the kill (missing for %s)", addr, i,
				serverLossWatch, time.Since(since).Round(time.Millisecond))
		}
	}
	if longest > serverLossBound {
		return longest, fmt.Errorf("%s missing from a survivor for %s (bound %s)", addr, longest.Round(time.Millisecond), serverLossBound)
	}
	return longest, nil
}

// serverLossWatch is how long the survivors are watched after the kill.
const serverLossWatch = 20 * time.Second

// serverRestart restarts a single server while n peers hold an instance
// each and reports, per peer, the time from the server answering again
// until the instance is listed again (it must be within serverLossBound of
// the server being up, and still listed 5 s later).
func serverRestart(ctx context.Context, s *Server, n int, what func(i int) (service, addr string),
	add func(i int, ms int64, detail string, err error)) {
	if err := s.Restart(ctx, 4*time.Minute); err != nil {
		for i := range n {
			add(i, -1, "", fmt.Errorf("restart: %w", err))
		}
		return
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			service, addr := what(i)
			d, err := eventually(serverLossBound, func() error {
				if ok, err := listedOn(s, service, addr); err != nil || !ok {
					return fmt.Errorf("not listed again (%v)", err)
				}
				return nil
			})
			if err == nil {
				time.Sleep(5 * time.Second)
				if ok, lerr := listedOn(s, service, addr); lerr != nil || !ok {
					err = fmt.Errorf("listed again after %s, gone 5 s later (%v)", d.Round(time.Millisecond), lerr)
				}
			}
			add(i, d.Milliseconds(), "restart of the server: up until the client registered again", err)
		}()
	}
	wg.Wait()
}
