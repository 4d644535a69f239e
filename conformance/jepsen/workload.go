package jepsen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Workload runs the clients, the beaters, the samplers and the leader
// monitor against a cluster, recording every op.
type Workload struct {
	c             *Cluster
	rec           *Recorder
	names         Names
	timeout       time.Duration // a client's request timeout
	sampleTimeout time.Duration // a sampler's (shorter: a paused node must not stall it long)
	seed          uint64
	grpcShare     int // percent of a worker's sessions that are gRPC ones (grpc.go)

	leaderMu sync.Mutex
	latest   map[int]LeaderObs
}

// opWeights is the mix of a worker's ops.
var opWeights = []struct {
	kind Kind
	w    int
}{
	{CfgGet, 12}, {CfgPut, 8}, {CfgCAS, 5}, {CfgDel, 4}, {BetaPut, 4}, {BetaStop, 4}, {BetaGet, 5},
	{PIList, 12}, {PIReg, 10}, {PIDereg, 6}, {PIMeta, 5},
	{SvcGet, 6}, {SvcPut, 5},
}

// readOf is the read that reads back what a write wrote.
var readOf = map[Kind]Kind{CfgPut: CfgGet, CfgCAS: CfgGet, CfgDel: CfgGet, BetaPut: BetaGet, BetaStop: BetaGet,
	PIReg: PIList, PIDereg: PIList, PIMeta: PIList, SvcPut: SvcGet}

func pickKind(rng *rand.Rand) Kind {
	total := 0
	for _, x := range opWeights {
		total += x.w
	}
	n := rng.IntN(total)
	for _, x := range opWeights {
		if n < x.w {
			return x.kind
		}
		n -= x.w
	}
	return CfgGet
}

// sleep waits d or until stop closes; false when stopped.
func sleep(stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// worker is one client: runs of 5–34 ops on one node (a session), each
// op drawn from opWeights over the small key space, an acknowledged write
// read back at once half of the time, 50–300 ms between ops.
func (w *Workload) worker(stop <-chan struct{}, id int) {
	rng := rand.New(rand.NewPCG(w.seed, uint64(id)))
	// its own stream: the ops drawn do not depend on the gRPC share
	protoRng := rand.New(rand.NewPCG(w.seed, uint64(id)|1<<40))
	cl := NewClient(w.names.ClientIP, w.timeout)
	defer cl.Close()
	var gs *grpcSession
	defer func() { gs.close() }()
	nm := w.names
	var node, left, session, seq int
	lastRead := map[string]string{} // config key -> content this worker last read
	value := func(prefix string) string {
		seq++
		return fmt.Sprintf("%s%d.%d", prefix, id, seq)
	}
	for !stopped(stop) {
		if left == 0 {
			node, left, session = rng.IntN(len(w.c.Nodes)), 5+rng.IntN(30), w.rec.NewSession()
			gs.close()
			gs = nil
			if protoRng.IntN(100) < w.grpcShare {
				gs = newGRPCSession(w.c.Nodes[node], nm.ClientIP)
			}
		}
		left--
		op := &Op{Client: id, Session: session, Node: node, Kind: pickKind(rng)}
		switch op.Kind {
		case CfgGet, CfgPut, CfgCAS, CfgDel, BetaPut, BetaStop, BetaGet:
			op.Key = nm.ConfigKeys[rng.IntN(len(nm.ConfigKeys))]
		case PIList, PIReg, PIDereg, PIMeta:
			op.Key = nm.PIServices[rng.IntN(len(nm.PIServices))]
		case SvcGet, SvcPut:
			op.Key = nm.SvcNames[rng.IntN(len(nm.SvcNames))]
		}
		switch op.Kind {
		case CfgPut:
			op.Value = value("c")
		case CfgCAS:
			op.Value = value("c")
			last, ok := lastRead[op.Key]
			if !ok {
				op.Kind = CfgPut
			} else {
				op.CAS = MD5Hex(last)
			}
		case BetaPut:
			op.Value = value("b")
		case PIReg:
			op.Slot, op.Value = rng.IntN(nm.Slots), value("r")
		case PIDereg:
			op.Slot = rng.IntN(nm.Slots)
		case PIMeta:
			op.Value = value("m")
			if rng.IntN(4) == 0 {
				op.AllPersist, op.Mask = true, uint8(1<<nm.Slots-1)
			} else {
				op.Mask = uint8(1 + rng.IntN(1<<nm.Slots-1))
			}
		case SvcPut:
			op.Value = svcValue(value("u"), float64(1+rng.IntN(9))/10)
		}
		w.execVia(cl, gs, op)
		if op.Kind == CfgGet && op.Outcome == OK && op.Found {
			lastRead[op.Key] = op.Read
		}
		if op.Outcome == OK && !op.Kind.IsRead() {
			if op.Kind == PIReg && rng.IntN(3) == 0 {
				// a service update right after a register, through the
				// same node (a follower answered 500 "service not found")
				u := &Op{Client: id, Session: session, Node: node, Kind: PISvcPut, Key: op.Key, Value: value("s")}
				w.execVia(cl, gs, u)
				left--
			}
			if rng.IntN(2) == 0 {
				back := &Op{Client: id, Session: session, Node: node, Kind: readOf[op.Kind], Key: op.Key}
				w.execVia(cl, gs, back)
				if back.Kind == CfgGet && back.Outcome == OK && back.Found {
					lastRead[back.Key] = back.Read
				}
				left--
			}
		}
		if left < 0 {
			left = 0
		}
		if !sleep(stop, time.Duration(50+rng.IntN(250))*time.Millisecond) {
			return
		}
	}
}

// beater keeps one ephemeral instance alive as the Java client does: it
// registers it, then beats (with the beat JSON) every second, each beat to
// a node drawn at random, trying the next node when one does not answer;
// an answer "instance not found" (20404) makes it register again. A
// beater with a StopAt stops beating then; with Deregister it also
// deregisters the instance, as a client shutting down does.
func (w *Workload) beater(stop <-chan struct{}, b *Beater) {
	cl := NewClient(w.names.ClientIP, w.timeout)
	defer cl.Close()
	registered := false
	w.beatLoop(stop, b, func(bs beaterSession) {
		first := bs.rng.IntN(len(w.c.Nodes))
		for try := 0; try < len(w.c.Nodes); try++ {
			kind := EphBeat
			if !registered {
				kind = EphReg
			}
			op := bs.op((first+try)%len(w.c.Nodes), kind)
			w.exec(cl, op)
			if op.Outcome == OK {
				registered = true
				break
			}
			if op.Outcome == Fail && kind == EphBeat {
				registered = false // re-register at the next tick
				break
			}
		}
	}, func(bs beaterSession) {
		if b.Deregister {
			w.deregister(cl, b, bs.session, bs.client, bs.rng)
		}
	})
}

// beaterSession is what a beater's ops share: its random stream, session
// and client number.
type beaterSession struct {
	b               *Beater
	rng             *rand.Rand
	session, client int
}

// op is an op of the beater's instance on node.
func (bs beaterSession) op(node int, kind Kind) *Op {
	return &Op{Client: bs.client, Session: bs.session, Node: node, Kind: kind, Key: bs.b.Service, Slot: bs.b.ID}
}

// beatLoop calls beat every second until stop closes or until b's planned
// stop, which it records before it calls atStop.
func (w *Workload) beatLoop(stop <-chan struct{}, b *Beater, beat, atStop func(beaterSession)) {
	bs := beaterSession{b: b, rng: rand.New(rand.NewPCG(w.seed, uint64(5000+b.ID))), session: w.rec.NewSession(), client: 500 + b.ID}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if b.StopAt > 0 && w.rec.Now() >= b.StopAt {
			b.Stopped = w.rec.Now()
			atStop(bs)
			return
		}
		beat(bs)
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// deregister sends a last beat and, while it is in flight, the
// deregistration (to another node): a beat processed after the delete
// must not bring the instance back (issue 23, defect 7). Both are
// recorded; the deregistration is retried on another node until
// acknowledged.
func (w *Workload) deregister(cl *Client, b *Beater, session, client int, rng *rand.Rand) {
	first := rng.IntN(len(w.c.Nodes))
	done := make(chan struct{})
	go func() {
		defer close(done)
		bc := NewClient(w.names.ClientIP, w.timeout)
		defer bc.Close()
		beat := &Op{Client: client, Session: session, Node: first, Kind: EphBeat, Key: b.Service, Slot: b.ID}
		w.exec(bc, beat)
	}()
	for try := 0; try < 2*len(w.c.Nodes); try++ {
		op := &Op{Client: client, Session: session, Node: (first + 1 + try) % len(w.c.Nodes), Kind: EphDereg, Key: b.Service, Slot: b.ID}
		w.exec(cl, op)
		if op.Outcome == OK {
			break
		}
	}
	<-done
}

// sampler lists every node's view of everything once a second: the
// persistent and ephemeral lists, the services' metadata, every config and
// beta. One session per node for the whole run; a round stops at the
// first request that does not answer (a paused node).
func (w *Workload) sampler(stop <-chan struct{}, node int) {
	cl := NewClient(w.names.ClientIP, w.sampleTimeout)
	defer cl.Close()
	session := w.rec.NewSession()
	nm := w.names
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if w.c.Nodes[node].Running() {
			var round []*Op
			for _, s := range nm.PIServices {
				round = append(round, &Op{Kind: PIList, Key: s})
			}
			for _, s := range nm.EphNames {
				round = append(round, &Op{Kind: EphList, Key: s})
			}
			for _, s := range nm.SvcNames {
				round = append(round, &Op{Kind: SvcGet, Key: s})
			}
			for _, k := range nm.ConfigKeys {
				round = append(round, &Op{Kind: CfgGet, Key: k}, &Op{Kind: BetaGet, Key: k})
			}
			for _, op := range round {
				op.Client, op.Session, op.Node = samplerClient+node, session, node
				w.exec(cl, op)
				if op.Outcome == Unknown || stopped(stop) {
					break
				}
			}
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// monitor polls node's view of the raft leader every 250 ms.
func (w *Workload) monitor(stop <-chan struct{}, node int) {
	cl := NewClient(w.names.ClientIP, time.Second)
	defer cl.Close()
	probe := &Cluster{Nodes: w.c.Nodes, http: cl}
	for {
		if w.c.Nodes[node].Running() {
			o := LeaderObs{Node: node, Invoke: w.rec.Now()}
			leader, term, err := probe.pollLeader(context.Background(), node)
			o.Complete = w.rec.Now()
			o.Leader, o.Term = leader, term
			if err != nil {
				o.Leader = -1
			}
			w.rec.Leader(o)
			w.leaderMu.Lock()
			w.latest[node] = o
			w.leaderMu.Unlock()
		}
		if !sleep(stop, 250*time.Millisecond) {
			return
		}
	}
}

// Leader is the node that names itself leader in the highest term in
// the latest polls of running, unpaused nodes; it waits up to d for one.
func (w *Workload) Leader(d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for {
		best, term := -1, uint64(0)
		now := w.rec.Now()
		w.leaderMu.Lock()
		for n, o := range w.latest {
			if o.Leader == n && now-o.Complete < int64(1500*time.Millisecond) && !w.c.Nodes[n].Paused() &&
				w.c.Nodes[n].Running() && (best < 0 || o.Term > term) {
				best, term = n, o.Term
			}
		}
		w.leaderMu.Unlock()
		if best >= 0 {
			return best, nil
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("jepsen: no node names itself leader within %v", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
