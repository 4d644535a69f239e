package distro

import (
	"encoding/json"
	"fmt"
	"github.com/nacosd/nacosd/compat"
	"net/http"
	"time"
)

// ServiceBeats are the last beats of a service's ephemeral instances
// (datum key → ms).
type ServiceBeats struct {
	ServiceRef
	Beats map[string]int64
}

// beatsPath is nacosd's own node-to-node path for beat times: Java members
// have no such endpoint and are never sent it.
const beatsPath = "/v1/nacosd/distro/beats"

// beatRound tells every other nacosd member when the instances of the
// services this node owns last beat (Java's Distro never ships beats: a
// new owner only knows the last beat of the last synced list, and gives
// every copy a fresh heartbeat window, so a stopped instance could stay
// listed up to 30 s past its delete timeout after an ownership change).
// Only beats since the previous round are sent; every fifth round names
// every owned service, so members keep knowing who reports it.
func (d *Distro) beatRound() {
	now := d.cfg.Clock.Now().UnixMilli()
	d.mu.Lock()
	since := d.beatsSince
	d.beatsRound++
	all := d.beatsRound%5 == 1
	d.beatsSince = now
	d.mu.Unlock()
	var targets []string
	for _, t := range d.cfg.Members.Others() {
		if d.cfg.Members.IsNacosd(t) {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return
	}
	beats := d.cfg.Store.BeatTimes(d.Responsible, since, all)
	if len(beats) == 0 {
		return
	}
	body, err := encodeBeats(beats)
	if err != nil {
		d.log.Error("distro: encode beat times", "err", err)
		return
	}
	for _, target := range targets {
		d.spawn(func() {
			if _, err := d.do(d.ctx, Request{Method: http.MethodPut, Addr: target, Path: beatsPath, Header: jsonHeader(), Body: body,
				Timeout: time.Second}); err != nil && d.ctx.Err() == nil {
				d.log.Debug("distro: beat times round failed", "target", target, "err", err)
			}
		})
	}
}

// beatsBody is {"namespaceId":{"group@@service":{"datumKey":ms,…},…},…}.
type beatsBody map[string]map[string]map[string]int64

func encodeBeats(list []ServiceBeats) ([]byte, error) {
	b := beatsBody{}
	for _, s := range list {
		m := b[s.NamespaceID]
		if m == nil {
			m = map[string]map[string]int64{}
			b[s.NamespaceID] = m
		}
		m[s.Service] = s.Beats
	}
	return json.Marshal(b)
}

// OnBeats is PUT /v1/nacosd/distro/beats from the owner of the services
// named: their copies here take the reported last beats.
func (d *Distro) OnBeats(body []byte) error {
	var b beatsBody
	if err := json.Unmarshal(body, &b); err != nil {
		return fmt.Errorf("distro: beat times: %w", err)
	}
	for ns, svcs := range b {
		for svc, beats := range svcs {
			d.cfg.Store.ApplyBeatTimes(ServiceRef{ns, svc}, beats)
		}
	}
	return nil
}

// trustBeats records the last beats a list from a nacosd member carries:
// that member's copy is its owner's (the owner ships its list and reports
// its beats every second), so a member that later owns the service (a
// restarted one, which loaded its lists) expires exactly the instances
// that stopped beating. A Java member's lists carry the beats of the last
// sync only: not recorded, the new owner gives them a fresh window.
func (d *Distro) trustBeats(ref ServiceRef, list []compat.DistroInstance) {
	beats := make(map[string]int64, len(list))
	for _, in := range list {
		beats[DatumKey(in)] = in.LastBeat
	}
	d.cfg.Store.ApplyBeatTimes(ref, beats)
}
