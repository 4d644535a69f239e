package server

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// status is ServerStatusManager: the overriddenServerStatus switch when
// set, else UP once the naming registry serves. CP availability (a raft
// leader, a writable log) does not gate it: reads and ephemeral instances
// never touch raft, and CP writes answer their own error (raftstore's
// ErrStorage, ErrNotLeader) while the CP store cannot take them. Java 1.4.8
// standalone behaves alike (StandalonePersistentServiceProcessor is
// available unless JRaft reported an error); Java's cluster mode answers
// every naming call 503 while JRaft has no leader or after a raft error.
// See docs/operations.md.
func (s *Server) status() string {
	if s.registry == nil {
		return "STARTING"
	}
	if o := s.registry.Switches().OverriddenServerStatus; o != nil && *o != "" {
		return *o
	}
	return "UP"
}

// Ready is the readiness probe: both stores must answer, and a cluster
// member must be in touch with a raft leader. A member that has heard
// from no leader for longer than an election timeout (cut off from the
// majority, or the majority is down) serves reads that can be arbitrarily
// old: it reports itself not ready, so that load balancers and Kubernetes
// move clients to a member of the majority (Java stays ready).
func (s *Server) Ready() error {
	switch {
	case s.status() != "UP":
		return errors.New("Config and Naming are not in readiness")
	case s.store == nil || s.store.LeaderAddr() == "":
		return errors.New("Config is not in readiness: no raft leader")
	case !s.cfg.Standalone && s.store.LeaderContact() > s.store.ElectionTimeout():
		return fmt.Errorf("Config is not in readiness: no raft leader heard for %s (more than the election timeout %s): "+
			"this member is cut off from the majority, its data may be stale",
			s.store.LeaderContact().Round(time.Millisecond), s.store.ElectionTimeout())
	case !s.cfg.Standalone && s.distro != nil && !s.distro.Initialized():
		return errors.New("Naming is not in readiness")
	}
	if applied, had, catching := s.store.CatchingUp(); catching {
		return fmt.Errorf("Config is not in readiness: catching up with the raft leader "+
			"(applied index %d, %d before this member stopped); until then reads of configs and instances wait", applied, had)
	}
	return nil
}

// watchReadiness logs when this member stops being ready and why, and
// when it is ready again (readiness probes only see the moment).
func (s *Server) watchReadiness() {
	err := s.Ready()
	was := s.notReady.Load()
	switch {
	case err != nil && was == nil:
		msg := err.Error()
		s.notReady.Store(&msg)
		s.log.Warn("member not ready: clients should use another member", "reason", msg)
	case err == nil && was != nil:
		s.notReady.Store(nil)
		s.log.Info("member ready again", "was", *was)
	}
}

// sysLoad returns system cpu usage (approximated by load/cores), the 1-minute
// load average and used-memory ratio from /proc, as Java's OperatingSystemMXBean.
func sysLoad() (cpu, load, mem float32) {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseFloat(f[0], 32)
			load = float32(v)
		}
	}
	if n := runtime.NumCPU(); n > 0 {
		cpu = load / float32(n)
		if cpu > 1 {
			cpu = 1
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var total, avail float64
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			v, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "MemTotal:":
				total = v
			case "MemFree:":
				avail = v
			}
		}
		if total > 0 {
			mem = float32(1 - avail/total)
		}
	}
	return cpu, load, mem
}
