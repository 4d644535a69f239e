package jepsen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Planned fault kinds.
const (
	FaultKillLeader   = "kill-leader"   // kill -9 the raft leader, restart it on its data dir later
	FaultKillRandom   = "kill-random"   // kill -9 a node drawn at random, restart it later
	FaultPauseLeader  = "pause-leader"  // SIGSTOP the leader, SIGCONT later
	FaultPartitionOne = "partition-one" // cut a node drawn at random off from the others (iptables)
)

// Fault is one fault of the schedule. The plan (kind, node drawn, times)
// comes from the seed alone; the leader is whoever leads when the fault
// begins, and the fields after Hold are filled as it runs.
type Fault struct {
	N      int           `json:"n"`
	Gap    time.Duration `json:"gap"`    // quiet time before it
	Kind   string        `json:"kind"`   // planned kind
	Target int           `json:"target"` // node drawn (used by kill-random and partition-one)
	Hold   time.Duration `json:"hold"`   // down, paused or cut off this long

	Node   int    `json:"node"`   // the node it hit
	Label  string `json:"label"`  // kill-leader, kill-follower, pause-leader, partition-leader, partition-follower
	Start  int64  `json:"start"`  // when it began
	Healed int64  `json:"healed"` // when the node was back (restarted and answering, resumed, healed)
	Err    string `json:"err,omitempty"`
}

// Plan draws the schedule from the seed: faults one at a time, each after
// 10–20 s of quiet; a kill is followed by a restart 5–10 s later, a pause
// lasts 5–10 s, a partition 10–15 s. Faults stop early enough for the run
// to end quiet.
func Plan(seed uint64, d time.Duration, nodes int) []Fault {
	rng := rand.New(rand.NewPCG(seed, 0x6e656d65736973)) // "nemesis"
	between := func(lo, hi time.Duration) time.Duration {
		return lo + time.Duration(rng.Int64N(int64(hi-lo)))
	}
	var plan []Fault
	var t time.Duration
	for {
		f := Fault{N: len(plan) + 1, Gap: between(10*time.Second, 20*time.Second), Target: rng.IntN(nodes)}
		cost := f.Gap
		switch rng.IntN(4) {
		case 0:
			f.Kind, f.Hold = FaultKillLeader, between(5*time.Second, 10*time.Second)
			cost += 3 * time.Second // the restart
		case 1:
			f.Kind, f.Hold = FaultKillRandom, between(5*time.Second, 10*time.Second)
			cost += 3 * time.Second
		case 2:
			f.Kind, f.Hold = FaultPauseLeader, between(5*time.Second, 10*time.Second)
		default:
			f.Kind, f.Hold = FaultPartitionOne, between(10*time.Second, 15*time.Second)
		}
		cost += f.Hold
		if t+cost > d-10*time.Second {
			return plan
		}
		t += cost
		plan = append(plan, f)
	}
}

// PlanString prints a schedule.
func PlanString(plan []Fault) string {
	var b strings.Builder
	for _, f := range plan {
		target := "the leader"
		if f.Kind == FaultKillRandom || f.Kind == FaultPartitionOne {
			target = fmt.Sprintf("node %d", f.Target+1)
		}
		fmt.Fprintf(&b, "#%d after %.1fs quiet: %s %s for %.1fs\n", f.N, f.Gap.Seconds(), f.Kind, target, f.Hold.Seconds())
	}
	return b.String()
}

// nemesis runs a plan against the cluster.
type nemesis struct {
	c    *Cluster
	w    *Workload
	fw   *Firewall
	rec  *Recorder
	logf func(string, ...any)
}

// run executes the plan until it ends or stop closes; a fault under way
// when stop closes is healed at once. It always leaves every node running,
// unpaused and connected.
func (n *nemesis) run(stop <-chan struct{}, plan []Fault) []Fault {
	var done []Fault
	for _, f := range plan {
		if !sleep(stop, f.Gap) {
			break
		}
		f = n.inject(f)
		sleep(stop, f.Hold)
		f = n.heal(f)
		done = append(done, f)
		n.logf("nemesis: #%d %s node %d: %s – %s %s", f.N, f.Label, f.Node+1, fmtT(f.Start), fmtT(f.Healed), f.Err)
	}
	return done
}

func (n *nemesis) inject(f Fault) Fault {
	leader, err := n.w.Leader(15 * time.Second)
	if err != nil {
		f.Err = err.Error()
	}
	f.Node = f.Target
	if f.Kind == FaultKillLeader || f.Kind == FaultPauseLeader {
		if leader < 0 {
			leader = f.Target // no leader found: hit the node drawn
		}
		f.Node = leader
	}
	role := "follower"
	if f.Node == leader {
		role = "leader"
	}
	switch f.Kind {
	case FaultKillLeader, FaultKillRandom:
		f.Label = "kill-" + role
	case FaultPauseLeader:
		f.Label = "pause-" + role
	default:
		f.Label = "partition-" + role
	}
	f.Start = n.rec.Event(EvFault, f.Node, f.Label)
	switch f.Kind {
	case FaultKillLeader, FaultKillRandom:
		n.c.Kill(f.Node)
	case FaultPauseLeader:
		if err := n.c.Pause(f.Node); err != nil {
			f.Err = err.Error()
		}
	default:
		var others []string
		for _, m := range n.c.Nodes {
			if m.Index != f.Node {
				others = append(others, m.IP)
			}
		}
		n.rec.Event(EvPartition, f.Node, "")
		if err := n.fw.Partition(n.c.Nodes[f.Node].IP, others); err != nil {
			f.Err = err.Error()
		}
	}
	return f
}

func (n *nemesis) heal(f Fault) Fault {
	switch f.Kind {
	case FaultKillLeader, FaultKillRandom:
		var err error
		for try := 0; try < 3; try++ {
			if err = n.c.Start(context.Background(), f.Node); err == nil {
				break
			}
			n.logf("nemesis: restart of node %d failed: %v", f.Node+1, err)
			n.c.Kill(f.Node)
		}
		if err != nil {
			f.Err = err.Error()
		}
	case FaultPauseLeader:
		n.c.Resume(f.Node)
	default:
		if _, err := n.fw.Heal(); err != nil {
			f.Err = err.Error()
		}
		n.rec.Event(EvHeal, f.Node, "")
	}
	f.Healed = n.rec.Event(EvHealed, f.Node, f.Label)
	return f
}
