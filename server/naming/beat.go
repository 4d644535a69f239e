package naming

import (
	"context"
	"strings"

	"github.com/nacosd/nacosd/compat"
)

// BeatResult is the answer to a beat.
type BeatResult = compat.BeatResult

// BeatForm is a parsed PUT /instance/beat.
type BeatForm struct {
	NamespaceID, ServiceName, ClusterName, IP string
	Port                                      int
	Beat                                      *BeatInfo
	// ReceivedAt is when the member the client sent the beat to received
	// it (unix ms; 0: now, here), for a beat another member proxied.
	ReceivedAt int64
}

// Beat refreshes an ephemeral instance, or re-registers it from the beat JSON
// (§3.3, §4.1). f's strings may share the request's memory (the handler's
// ParseBeatInto): Beat copies whatever it keeps.
func (r *Registry) Beat(ctx context.Context, f BeatForm) (BeatResult, error) {
	r.stats.beats.Add(1)
	sw := r.Switches()
	res := BeatResult{ClientBeatInterval: sw.ClientBeatInterval}
	cluster, ip, port := f.ClusterName, f.IP, f.Port
	if f.Beat != nil {
		if !JavaTrimBlank(f.Beat.Cluster) {
			cluster = f.Beat.Cluster
		}
		ip, port = f.Beat.IP, f.Beat.Port
	}
	var kb [128]byte
	key := appendDatumKey(kb[:0], ip, port, cluster)
	s := r.service(f.NamespaceID, f.ServiceName)
	// a proxied beat counts from when a member received it: one held up on
	// its way (a partition; checker seed 1001: 11 s) must not keep a
	// stopped instance alive for longer
	at := r.nowMillis()
	if f.ReceivedAt > 0 && f.ReceivedAt < at {
		at = f.ReceivedAt
	}
	b, ok := s.beatLocked(key, r.nowMillis(), at)
	if !ok && s.deregisteredSince(key, r.nowMillis(), f.ReceivedAt) {
		// a beat the client sent as it deregistered, or one a member
		// received before the deregistration and delivered after it (a
		// proxy held up by a partition: checker seed 908): answered,
		// never re-registering what was removed (Java re-registers it,
		// and the instance lingers 30 s after an acknowledged
		// deregistration)
		res.Code = compat.BeatOK
		return res, nil
	}
	if !ok {
		if f.Beat == nil {
			r.stats.beatsUnknown.Add(1)
			res.Code = compat.BeatNotFound
			return res, nil
		}
		bi := f.Beat.clone()
		eph := true
		if bi.Ephemeral != nil {
			eph = *bi.Ephemeral
		}
		reg := Instance{IP: bi.IP, Port: port, Weight: bi.Weight, Metadata: bi.Metadata, ClusterName: strings.Clone(cluster),
			ServiceName: strings.Clone(f.ServiceName), Ephemeral: eph, Healthy: true, Enabled: true}
		if err := r.Register(ctx, InstanceForm{NamespaceID: strings.Clone(f.NamespaceID), ServiceName: reg.ServiceName, Instance: reg}); err != nil {
			return res, err
		}
		if s = r.service(f.NamespaceID, f.ServiceName); s == nil {
			return res, compat.ErrServiceNotFoundBeat(f.ServiceName, f.NamespaceID)
		}
		b, _ = s.beatLocked(key, r.nowMillis(), at)
	}
	if b.recovered {
		ns, svc := strings.Clone(f.NamespaceID), strings.Clone(f.ServiceName)
		r.log.Info("instance recovered by beat", "service", svc, "ip", strings.Clone(ip), "port", port)
		r.emit(ns, svc, ChangedEphemeral|ChangedHealth) // the owner ships the health flip at once
	}
	res.Code = compat.BeatOK
	if b.hasInterval {
		res.ClientBeatInterval = b.interval
	}
	res.LightBeatEnabled = sw.LightBeatEnabled
	return res, nil
}

// beatOutcome is what a beat found and did.
type beatOutcome struct {
	recovered   bool  // an unhealthy, unmarked ephemeral instance turned healthy
	interval    int64 // the instance's preserved.heart.beat.interval
	hasInterval bool
}

// deregisterQuiet is how long after an explicit deregistration a beat
// for the instance does not bring it back: longer than a beat in flight
// takes, shorter than a client's beat period (5 s), so a client that is
// really alive re-registers with its next beat, as in Java.
const deregisterQuiet = 3000 // ms

// deregisterKeep is how long a deregistration is remembered, for beats
// received before it and delivered after it (deregisteredSince).
const deregisterKeep = 60_000 // ms

// deregisteredSince reports whether a beat must not bring key back: it was
// deregistered less than deregisterQuiet before now, or (receivedAt > 0:
// a member received the beat then) at or after the beat was received.
func (s *Service) deregisteredSince(key []byte, now, receivedAt int64) bool {
	if s == nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	at, ok := s.deregistered.get(string(key))
	return ok && (now-at < deregisterQuiet || receivedAt > 0 && at >= receivedAt)
}

// beatLocked records a beat of the instance with the datum key, made at
// at (when a member received it; at most now), in one critical section:
// the last beat moves forward only, and an unhealthy instance recovers
// only if the beat is within its heartbeat timeout of now. ok is false
// when neither list of s (nil: no service) holds the key.
func (s *Service) beatLocked(key []byte, now, at int64) (b beatOutcome, ok bool) {
	if s == nil {
		return b, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	eo, eok := s.ephemeral[string(key)]
	po, pok := s.persistent[string(key)]
	if !eok && !pok {
		return b, false
	}
	if eok {
		eo.LastBeat = max(eo.LastBeat, at)
		if !eo.Marked && !eo.Healthy && now-at <= eo.HeartBeatTimeout() {
			eo.Healthy = true
			b.recovered = true
		}
	}
	for _, o := range [2]*Instance{po, eo} { // the ephemeral one's wins
		if o != nil {
			if _, ok := o.Metadata[MetaHeartBeatInterval]; ok {
				b.interval, b.hasInterval = o.HeartBeatInterval(), true
			}
		}
	}
	if b.recovered {
		s.touch(now)
	}
	return b, true
}

// JavaTrimBlank reports whether s is empty after String.trim.
//
// Deprecated: use compat.JavaTrim(s) == "" (kept for Beat while it is
// reworked).
func JavaTrimBlank(s string) bool { return compat.JavaTrim(s) == "" }
