package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/cluster"
	"github.com/nacosd/nacosd/server/connbound"
	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/naming"
)

// heldWriter applies the writes of connection-bound (2.x) instances on
// their services' Distro owners (connbound.Writer): this node's registry,
// a nacosd member in one batch (PUT /v1/nacosd/instances), or a Java
// member as a 1.x client would (register, beat with the beat JSON,
// deregister), so a mixed cluster serves 2.x clients on every member.
type heldWriter struct{ s *Server }

// owner is the member that decides a service's ephemeral instances.
func (w heldWriter) owner(svc string) string {
	s := w.s
	if s.cfg.Standalone || s.distro == nil || s.distro.Responsible(svc) {
		return ""
	}
	return s.distro.MapSrv(svc)
}

// Apply implements connbound.Writer.
func (w heldWriter) Apply(ctx context.Context, ops []connbound.Op) []error {
	errs := make([]error, len(ops))
	byOwner := map[string][]int{}
	for i, op := range ops {
		o := w.owner(op.Service)
		byOwner[o] = append(byOwner[o], i)
	}
	apply := func(owner string, idx []int) {
		batch := make([]connbound.Op, len(idx))
		for j, i := range idx {
			batch[j] = ops[i]
		}
		var res []error
		switch kind, _ := w.s.members.Kind(owner); {
		case owner == "" || owner == w.s.members.SelfAddress():
			res = w.s.ApplyHeldHere(batch)
		case kind == cluster.KindJava:
			res = w.java(ctx, owner, batch)
		default:
			res = w.nacosd(ctx, owner, batch)
		}
		w.registerHere(owner, batch, res)
		for j, i := range idx {
			errs[i] = res[j]
		}
	}
	// the owners in parallel, the last one on this goroutine (a single
	// register starts none)
	var wg sync.WaitGroup
	left := len(byOwner)
	for owner, idx := range byOwner {
		if left--; left == 0 {
			apply(owner, idx)
			break
		}
		wg.Go(func() { apply(owner, idx) })
	}
	wg.Wait()
	return errs
}

// errUnreachable marks a write its owner could not be asked (a transport
// failure: the owner died a moment ago and the members have not noticed).
var errUnreachable = errors.New("server: the service's owner is unreachable")

// registerHere registers here what an unreachable owner could not take:
// a client registering while the owner of its service just died gets its
// instance listed (Distro ships it; the next owner takes it with the next
// beat) instead of an error its application may not survive (Java 2.x
// registers on the member a client talks to). Beats and deregistrations
// are retried instead.
func (w heldWriter) registerHere(owner string, ops []connbound.Op, errs []error) {
	var retry []connbound.Op
	var at []int
	for i, err := range errs {
		if err != nil && errors.Is(err, errUnreachable) && ops[i].Kind == connbound.Register {
			retry, at = append(retry, ops[i]), append(at, i)
		}
	}
	if len(retry) == 0 {
		return
	}
	w.s.log.Warn("service owner unreachable: 2.x instances registered here", "owner", owner, "instances", len(retry), "err", errs[at[0]])
	for j, err := range w.s.ApplyHeldHere(retry) {
		errs[at[j]] = err
	}
}

// ApplyHeldHere applies held-instance writes on this node's registry (it
// owns their services, or did when they were sent).
func (s *Server) ApplyHeldHere(ops []connbound.Op) []error {
	errs := make([]error, len(ops))
	ctx := context.Background()
	for i, op := range ops {
		f := naming.InstanceForm{NamespaceID: op.NamespaceID, ServiceName: op.Service, Instance: op.Instance}
		switch op.Kind {
		case connbound.Register:
			errs[i] = s.registry.RegisterHeld(ctx, f, op.Holder)
		case connbound.Deregister:
			_, errs[i] = s.registry.DeregisterHeld(ctx, f, op.Holder)
		case connbound.Beat:
			errs[i] = s.registry.BeatHeld(ctx, f, op.Holder)
		default:
			errs[i] = fmt.Errorf("server: unknown held-instance op %v", op.Kind)
		}
	}
	return errs
}

// nacosd sends a batch to a nacosd owner.
func (w heldWriter) nacosd(ctx context.Context, owner string, ops []connbound.Op) []error {
	errs := make([]error, len(ops))
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	body, err := httpapi.EncodeHeldOps(ops)
	if err != nil {
		return fail(err)
	}
	resp, err := w.s.peers.Do(ctx, cluster.Request{Method: http.MethodPut, Addr: owner, Path: "/v1/nacosd/instances",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: body, Timeout: 3 * time.Second})
	if err != nil {
		return fail(fmt.Errorf("server: held instances to %s: %w: %w", owner, errUnreachable, err))
	}
	if resp.Status != http.StatusOK {
		return fail(fmt.Errorf("server: held instances to %s: %d %s", owner, resp.Status, resp.Body))
	}
	var ans httpapi.HeldAnswer
	if err := json.Unmarshal(resp.Body, &ans); err != nil || len(ans.Errors) != len(ops) {
		return fail(fmt.Errorf("server: held instances to %s: bad answer %q", owner, resp.Body))
	}
	for i, e := range ans.Errors {
		if e != "" {
			errs[i] = compat.ServerError(e)
		}
	}
	return errs
}

// java sends each write to a Java 1.4.8 owner as its 1.x API takes it, as
// a client does (no server agent: a Java node that sees another owner
// proxies it there itself).
func (w heldWriter) java(ctx context.Context, owner string, ops []connbound.Op) []error {
	errs := make([]error, len(ops))
	for i, op := range ops {
		in := op.Instance
		q := url.Values{"serviceName": {op.Service}, "namespaceId": {op.NamespaceID}, "ip": {in.IP},
			"port": {strconv.Itoa(in.Port)}, "clusterName": {in.ClusterName}, "ephemeral": {"true"}}
		method, path := http.MethodPost, "/v1/ns/instance"
		switch op.Kind {
		case connbound.Register:
			meta, _ := json.Marshal(in.Metadata)
			q.Set("weight", compat.FormatJavaDouble(in.Weight))
			q.Set("enabled", strconv.FormatBool(in.Enabled))
			q.Set("healthy", strconv.FormatBool(in.Healthy))
			q.Set("metadata", string(meta))
		case connbound.Deregister:
			method = http.MethodDelete
		case connbound.Beat:
			beat, _ := json.Marshal(map[string]any{"ip": in.IP, "port": in.Port, "cluster": in.ClusterName, "serviceName": op.Service,
				"weight": in.Weight, "metadata": in.Metadata, "scheduled": false, "period": 5000, "stopped": false})
			method, path = http.MethodPut, "/v1/ns/instance/beat"
			q = url.Values{"serviceName": {op.Service}, "namespaceId": {op.NamespaceID}, "beat": {string(beat)}}
		}
		uri := w.s.cfg.ContextPath + path + "?" + q.Encode()
		resp, err := w.s.peers.Do(ctx, cluster.Request{Method: method, Addr: owner, RawURI: uri,
			Header: http.Header{"User-Agent": {"Nacos-Java-Client:v1.4.8"}}, Timeout: 3 * time.Second})
		switch {
		case err != nil:
			errs[i] = fmt.Errorf("server: %s of a held instance on %s: %w: %w", op.Kind, owner, errUnreachable, err)
		case resp.Status != http.StatusOK:
			errs[i] = fmt.Errorf("server: %s of a held instance on %s: %d %s", op.Kind, owner, resp.Status, resp.Body)
		}
	}
	return errs
}
