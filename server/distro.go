package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/distro"
	"github.com/nacosd/nacosd/server/cluster"
	"github.com/nacosd/nacosd/server/console"
	"github.com/nacosd/nacosd/server/console/live"
	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/metrics"
	"github.com/nacosd/nacosd/server/naming"
)

// Distro, the AP protocol (package distro), over this node's parts: the
// registry's ephemeral lists (distroStore), the node-to-node client
// (distroTransport), the registry's change stream (distroChange), and
// what the HTTP edge, the console and the metrics read of it.

// syncRetryDelay is how soon Distro sends a failed sync again.
const syncRetryDelay = 250 * time.Millisecond

// buildDistro makes the AP protocol over the registry (always: Java serves
// the /v1/ns/distro endpoints in standalone mode too; they just have no
// peers).
func (s *Server) buildDistro(store *distroStore) error {
	d, err := distro.New(distro.Config{Store: store, Members: s.members, Transport: distroTransport{s.peers},
		SyncDelay: s.cfg.ClusterTimings.SyncDelay, BatchDelay: s.cfg.ClusterTimings.SyncDelay,
		VerifyInterval: s.cfg.ClusterTimings.VerifyInterval, StatusInterval: s.cfg.ClusterTimings.VerifyInterval,
		StatusDelay: s.cfg.ClusterTimings.VerifyInterval, LoadWait: s.cfg.ClusterTimings.LoadWait,
		// a failed sync is sent again soon (Java: 5 s): with the peers'
		// quick-SYN dial (server/cluster) a member cut off by a partition
		// gets the lists it missed within a moment of the heal
		RetryDelay: syncRetryDelay,
		Clock:      s.cfg.Clock, Logger: s.log.With("component", "distro")})
	if err != nil {
		return fmt.Errorf("server: start distro: %w", err)
	}
	s.distro = d
	s.members.Subscribe(d.MembersChanged)
	return nil
}

// consumeChanges subscribes the consumers of the registry's change
// stream: UDP push to the subscribers of the service, the console's event
// streams and Distro (its view of the lists held follows every ephemeral
// change; a list this node changed as its owner is shipped). Each call
// only marks the service and returns (push and Distro coalesce).
func (s *Server) consumeChanges(reg *naming.Registry) {
	ship := !s.cfg.Standalone
	reg.Changes().Subscribe(func(c naming.Change) {
		s.push.ServiceChanged(c.NamespaceID, c.Service)
		s.hub.Publish(live.Event{Namespace: c.NamespaceID, Service: c.Service})
		if s.distro != nil {
			if lc, ok := distroChange(c, ship); ok {
				s.distro.Changed(lc)
			}
		}
	})
}

// distroChange is the Distro side of a registry change: the edits of the
// ephemeral lists, their health (which their checksums cover) and the
// removal of services; ship says whether this node sends its own changes
// to the other members (not in standalone mode).
func distroChange(c naming.Change, ship bool) (distro.ListChange, bool) {
	if c.Kind&(naming.ChangedEphemeral|naming.ChangedHealth|naming.ChangedRemoved) == 0 {
		return distro.ListChange{}, false
	}
	lc := distro.ListChange{Ref: distro.ServiceRef{NamespaceID: c.NamespaceID, Service: c.Service}, Key: c.Key, Keys: c.Keys,
		Ship: ship && c.Ships(), Deregistered: c.Deregistered}
	switch {
	case c.Kind&naming.ChangedRemoved != 0:
		lc.Op = distro.EditDropped
	case c.Edit == naming.EditPut:
		lc.Op = distro.EditPut
	case c.Edit == naming.EditRemove:
		lc.Op = distro.EditRemove
	case c.Edit == naming.EditReplace:
		lc.Op = distro.EditReplace
	case c.Edit == naming.EditClear:
		lc.Op = distro.EditClear
	default:
		lc.Op = distro.EditNone
	}
	return lc, true
}

// distroProxy is DistroFilter's forwarding call: the owner gets the request
// with the server headers (path as the client sent it, so the context
// path is stripped for the peer client, which adds its own).
func (s *Server) distroProxy(ctx context.Context, method, addr, path string, query url.Values, header http.Header, timeout time.Duration) (int, []byte, error) {
	p := strings.TrimPrefix(path, s.cfg.ContextPath)
	resp, err := s.peers.Do(ctx, cluster.Request{Method: method, Addr: addr, Path: p, Query: query, Header: header, Timeout: timeout})
	if err != nil {
		return 0, nil, err
	}
	return resp.Status, resp.Body, nil
}

// distroTransport adapts the peer client to distro.Transport.
type distroTransport struct{ p *cluster.Peers }

func (t distroTransport) Do(ctx context.Context, r distro.Request) (distro.Response, error) {
	resp, err := t.p.Do(ctx, cluster.Request{Method: r.Method, Addr: r.Addr, Path: r.Path, Query: r.Query, Header: r.Header,
		Body: r.Body, Timeout: r.Timeout})
	return distro.Response{Status: resp.Status, Header: resp.Header, Body: resp.Body}, err
}

// distroStore adapts the naming registry to distro.Store.
type distroStore struct{ reg *naming.Registry }

func (d *distroStore) Instances(ref distro.ServiceRef) ([]compat.DistroInstance, bool) {
	return d.reg.EphemeralInstances(ref.NamespaceID, ref.Service)
}

func (d *distroStore) Apply(ref distro.ServiceRef, list []compat.DistroInstance) error {
	return d.reg.ApplyRemote(ref.NamespaceID, ref.Service, list)
}

func (d *distroStore) Remove(ref distro.ServiceRef) { d.reg.RemoveRemote(ref.NamespaceID, ref.Service) }

func (d *distroStore) ServiceChecksums(owned func(string) bool) map[string]map[string]string {
	return d.reg.StatusChecksums(owned)
}

func (d *distroStore) ServiceChecksum(ref distro.ServiceRef) (string, bool) {
	return d.reg.StatusChecksum(ref.NamespaceID, ref.Service)
}

func (d *distroStore) BeatTimes(owned func(string) bool, since int64, all bool) []distro.ServiceBeats {
	list := d.reg.BeatTimes(owned, since, all)
	out := make([]distro.ServiceBeats, len(list))
	for i, b := range list {
		out[i] = distro.ServiceBeats{ServiceRef: distro.ServiceRef{NamespaceID: b.NamespaceID, Service: b.Service}, Beats: b.Beats}
	}
	return out
}

func (d *distroStore) ApplyBeatTimes(ref distro.ServiceRef, beats map[string]int64) {
	d.reg.ApplyBeatTimes(ref.NamespaceID, ref.Service, beats)
}

func (d *distroStore) ApplyHealth(ref distro.ServiceRef, healthy map[string]bool) {
	d.reg.ApplyHealth(ref.NamespaceID, ref.Service, healthy)
}

var _ httpapi.Distro = (*distro.Distro)(nil)

// distroView is the console's Distro columns: each member's share of the
// instance lists held here and its last checksum round.
func (s *Server) distroView() map[string]console.DistroView {
	owned := s.distro.OwnedCounts()
	held := 0
	for _, n := range owned {
		held += n
	}
	out := map[string]console.DistroView{}
	for _, a := range s.members.Addresses() {
		out[a] = console.DistroView{Owned: owned[a], Held: held}
	}
	for a, pc := range s.distro.PeerChecksums() {
		v := out[a]
		v.LastRound, v.Lists, v.Differing, v.FetchFailed, v.Aborted = pc.At, pc.Lists, pc.Differing, pc.FetchFailed, pc.Aborted
		out[a] = v
	}
	return out
}

// distroDeps are what DistroFilter and the /v1/ns/distro endpoints need.
func (s *Server) distroDeps() httpapi.DistroDeps {
	d := httpapi.DistroDeps{Standalone: s.cfg.Standalone, HasMember: s.HasMember, Proxy: s.distroProxy}
	if s.distro != nil { // a nil *distro.Distro must stay a nil interface
		d.Distro = s.distro
	}
	if s.members != nil {
		d.Self = s.members.SelfAddress()
	}
	return d
}

// distroStats reads the AP protocol's counters for the metrics endpoint
// (cluster mode only: a standalone node has no such series).
func (s *Server) distroStats() metrics.DistroStats {
	st := s.distro.Stats()
	out := metrics.DistroStats{SyncSent: st.SyncSent.Load(), SyncFailed: st.SyncFailed.Load(), SyncKeys: st.SyncKeys.Load(),
		VerifySent: st.VerifySent.Load(), VerifyReceived: st.VerifyReceived.Load(), ChecksumMismatches: st.ChecksumMismatches.Load(),
		KeysFetched: st.KeysFetched.Load(), KeysRemoved: st.KeysRemoved.Load(), DatumsReceived: st.DatumsReceived.Load(),
		StatusSent: st.StatusSent.Load(), StatusReceived: st.StatusReceived.Load(), Health: st.Statuses.Load(),
		Pending: s.distro.Pending(), Members: map[string]int{}}
	for _, m := range s.members.Members() {
		out.Members[m.State]++
	}
	return out
}
