package conformance

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nacosd/nacosd/internal/remoteclient"
)

// GRPCAddr is a server's 2.x gRPC address (its first member's HTTP port +
// 1000).
func (s *Server) GRPCAddr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Ports()[0]+1000))
}

// RunGRPCCorpus sends the gRPC corpus (conformance/grpccorpus, format in
// internal/remoteclient/corpus.go) to each server over a real connection
// and records one result per case and server ("grpc-corpus/<name>"): a
// case fails on a server whose answer breaks its assertions, and on nacosd
// when its answer differs from the reference's (unless the case is a
// listed Java defect). vars are each server's substitutions (tokens).
func RunGRPCCorpus(ctx context.Context, cases []remoteclient.Case, servers []*Server, vars map[string]map[string]string, run string, rs *Results, l Lists) {
	answers := map[string]map[string]remoteclient.Answer{}
	var mu sync.Mutex
	nacosdDone := make([]chan remoteclient.Answer, len(cases))
	for i := range nacosdDone {
		nacosdDone[i] = make(chan remoteclient.Answer, 1)
	}
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tg := &remoteclient.Target{Addr: s.GRPCAddr(), Vars: vars[s.Name], Reference: s.Name == TargetReference}
			if err := tg.Open(ctx); err != nil {
				for _, c := range cases {
					rs.Add(Result{Scenario: "grpc-corpus/" + c.Name, Target: s.Name, Ms: -1, Detail: "connect: " + err.Error()})
				}
				return
			}
			defer tg.Close()
			for i, c := range cases {
				start := time.Now()
				a := tg.Send(ctx, c, run)
				if s.Name == TargetNacosd {
					nacosdDone[i] <- a
				}
				for c.Poll > 0 && time.Since(start) < c.Poll {
					if s.Name == TargetReference {
						// the reference reads after its asynchronous dump:
						// poll until it answers as nacosd did
						var want remoteclient.Answer
						select {
						case want = <-nacosdDone[i]:
							nacosdDone[i] <- want
						case <-time.After(c.Poll):
						}
						if want.Normalized(c.Compare) == a.Normalized(c.Compare) {
							break
						}
					} else if c.Settled(a) {
						break
					}
					time.Sleep(50 * time.Millisecond)
					a = tg.Send(ctx, c, run)
				}
				res := Result{Scenario: "grpc-corpus/" + c.Name, Target: s.Name, OK: true, Ms: time.Since(start).Milliseconds(),
					Detail: short(a.Normalized(nil))}
				if why := c.Check(a); why != "" {
					res.OK, res.Detail = false, short(why)
				}
				rs.Add(res)
				mu.Lock()
				if answers[c.Name] == nil {
					answers[c.Name] = map[string]remoteclient.Answer{}
				}
				answers[c.Name][s.Name] = a
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, c := range cases {
		ref, okR := answers[c.Name][TargetReference]
		n, okN := answers[c.Name][TargetNacosd]
		if _, defect := l.JavaDefects.Reason("grpc-corpus/" + c.Name); !okR || !okN || defect {
			continue
		}
		if rn, nn := ref.Normalized(c.Compare), n.Normalized(c.Compare); rn != nn {
			res, _ := rs.Get("grpc-corpus/"+c.Name, TargetNacosd)
			res.OK, res.Detail = false, "differs from java-nacos: "+firstDifference(rn, nn)
			rs.Add(res)
		}
	}
}

// firstDifference shows two answers around where they first differ.
func firstDifference(java, nacosd string) string {
	i := 0
	for i < len(java) && i < len(nacosd) && java[i] == nacosd[i] {
		i++
	}
	from := max(0, i-60)
	cut := func(s string) string {
		if from >= len(s) {
			return "(ends)"
		}
		return strings.ToValidUTF8(s[from:min(len(s), i+140)], "")
	}
	return "at byte " + strconv.Itoa(i) + ": java …" + cut(java) + "; nacosd …" + cut(nacosd)
}
