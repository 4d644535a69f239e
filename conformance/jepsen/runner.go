package jepsen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Config is one run.
type Config struct {
	Bin      string        // the nacosd binary
	Dir      string        // node homes (data, logs) go here
	Seed     uint64        // every decision of the run is drawn from it
	Duration time.Duration // of the workload
	IPs      []string      // the nodes' addresses
	ClientIP string        // the clients' address
	PortFrom int           // HTTP port range to pick from (raft: port-1000)
	PortTo   int
	Timeout  time.Duration // a client request's timeout
	// GRPCShare is the percent of the workers' sessions that are Nacos
	// 2.x ones (grpc.go; 0: none)
	GRPCShare int
	Settle    time.Duration // after the final heal, before the final reads
	Logf      func(format string, args ...any)
}

// DefaultConfig is the run `make jepsen` does.
func DefaultConfig() Config {
	return Config{
		Duration: 3 * time.Minute,
		IPs:      []string{"127.0.0.21", "127.0.0.22", "127.0.0.23"},
		ClientIP: "127.0.0.20",
		PortFrom: 9100, PortTo: 9119,
		Timeout:   5 * time.Second,
		Settle:    3 * time.Second,
		GRPCShare: 30,
		Logf:      func(string, ...any) {},
	}
}

// Execute runs the cluster, the workload and the nemesis, and returns the
// recorded run. The nodes are killed and every iptables rule it added is
// removed before it returns, whatever happens; cancelling ctx ends the run
// early (the checks then still see what was recorded).
func Execute(ctx context.Context, cfg Config) (run *Run, err error) {
	fw := &Firewall{IPs: cfg.IPs}
	if err := fw.Available(); err != nil {
		return nil, err
	}
	if n, err := fw.Heal(); err != nil {
		return nil, err
	} else if n > 0 {
		cfg.Logf("removed %d stale iptables rule(s) tagged %s", n, RuleTag)
	}
	defer func() {
		if _, herr := fw.Heal(); herr != nil && err == nil {
			err = herr
		}
	}()
	port, err := FreePort(cfg.IPs, cfg.PortFrom, cfg.PortTo)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x636c69656e7473)) // "clients"
	run = &Run{Seed: cfg.Seed, Duration: cfg.Duration, Nodes: len(cfg.IPs), Clients: 12 + rng.IntN(13), GRPCShare: cfg.GRPCShare}
	nbeaters := 6 + rng.IntN(7)
	names := DefaultNames(cfg.ClientIP, port)
	run.PISlots, run.ConfigKeys, run.PIServices, run.SvcServices = names.Slots, names.ConfigKeys, names.PIServices, names.SvcNames
	run.Schedule = Plan(cfg.Seed, cfg.Duration, len(cfg.IPs))
	cfg.Logf("seed %d: %d clients, %d beaters, nodes %v port %d; schedule:\n%s", cfg.Seed, run.Clients, nbeaters, cfg.IPs, port, PlanString(run.Schedule))

	rec := NewRecorder()
	setup := NewClient(cfg.ClientIP, cfg.Timeout)
	defer setup.Close()
	c, err := NewCluster(cfg.Bin, cfg.Dir, cfg.IPs, port, rec, setup)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var wg sync.WaitGroup
	errs := make([]error, len(c.Nodes))
	for i := range c.Nodes {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.Start(ctx, i) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := c.MembersUp(ctx, 60*time.Second); err != nil {
		return nil, err
	}
	w := &Workload{c: c, rec: rec, names: names, timeout: cfg.Timeout, sampleTimeout: 2 * time.Second,
		seed: cfg.Seed, grpcShare: cfg.GRPCShare, latest: map[int]LeaderObs{}}
	monStop := make(chan struct{})
	var monWG sync.WaitGroup
	for i := range c.Nodes {
		monWG.Add(1)
		go func() { defer monWG.Done(); w.monitor(monStop, i) }()
	}
	defer func() { close(monStop); monWG.Wait() }()
	leader, err := w.Leader(30 * time.Second)
	if err != nil {
		return nil, err
	}
	run.CASHonoured, err = probeCAS(setup, c.Nodes[leader], names)
	if err != nil {
		return nil, err
	}
	if err := w.setupServices(setup, leader); err != nil {
		return nil, err
	}

	// the workload
	start := rec.Now()
	stop := make(chan struct{})
	var work sync.WaitGroup
	for id := 1; id <= run.Clients; id++ {
		work.Add(1)
		go func() { defer work.Done(); w.worker(stop, id) }()
	}
	beaters := make([]*Beater, nbeaters)
	protoRng := rand.New(rand.NewPCG(cfg.Seed, 0x67727063)) // "grpc": the draws above stay as they were
	for i := range beaters {
		b := &Beater{ID: i, Service: names.EphNames[i%len(names.EphNames)], Inst: fmt.Sprintf("%s:%d", names.ClientIP, names.EphBase+i)}
		// a third stop beating during the run, early enough for their
		// expiry to be watched; half of those deregister
		if i%3 == 2 && cfg.Duration >= 90*time.Second {
			b.StopAt = start + int64(20*time.Second) + rng.Int64N(int64(cfg.Duration-70*time.Second))
			b.Deregister = i%2 == 1 // every other one deregisters as it stops
		}
		b.GRPC = protoRng.IntN(100) < cfg.GRPCShare
		beaters[i] = b
		work.Add(1)
		if b.GRPC {
			go func() { defer work.Done(); w.grpcBeater(stop, b) }()
			continue
		}
		go func() { defer work.Done(); w.beater(stop, b) }()
	}
	for i := range c.Nodes {
		work.Add(1)
		go func() { defer work.Done(); w.sampler(stop, i) }()
	}
	nem := &nemesis{c: c, w: w, fw: fw, rec: rec, logf: cfg.Logf}
	nemStop := make(chan struct{})
	nemDone := make(chan []Fault, 1)
	go func() { nemDone <- nem.run(nemStop, run.Schedule) }()

	select {
	case <-time.After(cfg.Duration):
	case <-ctx.Done():
		cfg.Logf("interrupted: %v", ctx.Err())
	}
	close(nemStop)
	run.Schedule = <-nemDone // every node up, unpaused, connected
	close(stop)
	work.Wait()
	run.End = rec.Now()
	for _, b := range beaters {
		run.Beaters = append(run.Beaters, *b)
	}

	// the final comparison: every node's full state, every 100 ms, until
	// they are identical
	run.Converged = -1
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		states := make([]map[string]string, len(c.Nodes))
		ok := true
		for i, n := range c.Nodes {
			s, err := w.fullState(setup, n)
			if err != nil {
				ok = false
				run.FinalDiff = err.Error()
				break
			}
			states[i] = s
		}
		if ok {
			if d := FinalDiff(states); d == "" {
				run.Converged = rec.Now() - run.End
				break
			} else {
				run.FinalDiff = d
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if run.Converged >= 0 {
		run.FinalDiff = ""
	}
	if !sleep(ctx.Done(), cfg.Settle) {
		cfg.Logf("interrupted while settling")
	}
	run.Final = rec.Now()
	w.finalReads(setup)
	rec.Snapshot(run)
	return run, nil
}

// probeCAS tells whether the server honours casMd5: a publish whose
// casMd5 is not the stored content's must be refused.
func probeCAS(cl *Client, n *Node, nm Names) (bool, error) {
	w := &Workload{names: nm, timeout: 5 * time.Second}
	put := &Op{Kind: CfgPut, Key: "jcasprobe", Value: "one"}
	if o := w.perform(cl, n, put); o != OK {
		return false, fmt.Errorf("jepsen: CAS probe: publish: %s %d %s", o, put.Status, put.Err)
	}
	cas := &Op{Kind: CfgCAS, Key: "jcasprobe", Value: "two", CAS: MD5Hex("not the content")}
	o := w.perform(cl, n, cas)
	cas.Outcome = o
	switch {
	case o == OK:
		return false, nil
	case casRefused(cas):
		return true, nil
	default:
		return false, fmt.Errorf("jepsen: CAS probe: %s %d %s", o, cas.Status, cas.Err)
	}
}

// setupServices creates the services whose metadata the workload writes,
// each with a persistent anchor instance so that the empty-service clean
// leaves them alone, and gives each a first metadata value (recorded).
func (w *Workload) setupServices(cl *Client, leader int) error {
	session := w.rec.NewSession()
	for _, s := range w.names.SvcNames {
		anchor := &Op{Kind: PIReg, Key: s, Slot: -1, Value: "anchor"}
		// slot -1 is port PIBase-1: outside the slots, never listed by the checks
		if o := w.perform(cl, w.c.Nodes[leader], anchor); o != OK {
			return fmt.Errorf("jepsen: setup: anchor of %s: %s %s", s, o, anchor.Err)
		}
		put := &Op{Client: 0, Session: session, Node: leader, Kind: SvcPut, Key: s, Value: svcValue("u0.0", 0.5)}
		w.exec(cl, put)
		if put.Outcome != OK {
			return fmt.Errorf("jepsen: setup: metadata of %s: %s %s", s, put.Outcome, put.Err)
		}
	}
	return nil
}

// fullState reads everything the checks compare from node n, as text.
func (w *Workload) fullState(cl *Client, n *Node) (map[string]string, error) {
	out := map[string]string{}
	for _, op := range w.stateOps(n.Index, 0, 0) {
		o := w.perform(cl, n, op)
		if o != OK {
			return nil, fmt.Errorf("node %d: %s %s: %s %d %s", n.Index+1, op.Kind, op.Key, o, op.Status, op.Err)
		}
		out[string(op.Kind)+" "+op.Key] = stateText(op)
	}
	return out, nil
}

// finalReads records the final reads (client 2000+node).
func (w *Workload) finalReads(cl *Client) {
	for _, n := range w.c.Nodes {
		session := w.rec.NewSession()
		for _, op := range w.stateOps(n.Index, finalClient+n.Index, session) {
			w.exec(cl, op)
		}
	}
}

func (w *Workload) stateOps(node, client, session int) []*Op {
	var ops []*Op
	add := func(k Kind, key string) {
		ops = append(ops, &Op{Client: client, Session: session, Node: node, Kind: k, Key: key})
	}
	for _, k := range w.names.ConfigKeys {
		add(CfgGet, k)
		add(BetaGet, k)
	}
	for _, s := range w.names.PIServices {
		add(PIList, s)
	}
	for _, s := range w.names.SvcNames {
		add(SvcGet, s)
	}
	for _, s := range w.names.EphNames {
		add(EphList, s)
	}
	return ops
}

func stateText(op *Op) string {
	switch op.Kind {
	case PIList:
		return canonicalSlots(op.Slots)
	case EphList:
		return canonicalInsts(op.Insts)
	}
	if !op.Found {
		return "absent"
	}
	return fmt.Sprintf("%q", op.Read)
}
