package distro

import (
	"net/http"
	"slices"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// EphemeralChanged queues a changed service for every other member
// (DistroProtocol.sync): the key waits SyncDelay for more changes (a key
// already queued keeps its due time), then joins the batch to that member.
func (d *Distro) EphemeralChanged(namespaceID, groupedService string) {
	d.queue(compat.EphemeralKey(namespaceID, groupedService), d.cfg.SyncDelay)
}

func (d *Distro) queue(key string, delay time.Duration) {
	due := d.cfg.Clock.Now().Add(delay)
	targets := d.cfg.Members.Others()
	d.mu.Lock()
	for _, t := range targets {
		p := d.pending[t]
		if p == nil {
			p = map[string]time.Time{}
			d.pending[t] = p
		}
		if _, ok := p[key]; !ok {
			p[key] = due
		}
	}
	d.mu.Unlock()
}

func (d *Distro) queueFor(target string, keys []string, delay time.Duration) {
	due := d.cfg.Clock.Now().Add(delay)
	d.mu.Lock()
	p := d.pending[target]
	if p == nil {
		p = map[string]time.Time{}
		d.pending[target] = p
	}
	for _, k := range keys {
		if _, ok := p[k]; !ok {
			p[k] = due
		}
	}
	d.mu.Unlock()
}

// tick is the delay engine: due keys join their member's batch; a batch
// that is old enough or full is sent, one sync per member at a time.
func (d *Distro) tick() {
	now := d.cfg.Clock.Now()
	var ready []string
	d.mu.Lock()
	for target, p := range d.pending {
		for key, due := range p {
			if due.After(now) {
				continue
			}
			delete(p, key)
			b := d.batches[target]
			if b == nil {
				b = &batch{since: now, seen: map[string]bool{}}
				d.batches[target] = b
			}
			if !b.seen[key] {
				b.seen[key] = true
				b.keys = append(b.keys, key)
			}
		}
		if len(p) == 0 {
			delete(d.pending, target)
		}
	}
	for target, b := range d.batches {
		if d.sending[target] {
			continue
		}
		if len(b.keys) >= d.cfg.BatchKeys || !now.Before(b.since.Add(d.batchDelay(target))) {
			ready = append(ready, target)
		}
	}
	slices.Sort(ready)
	jobs := make(map[string][]string, len(ready))
	for _, target := range ready {
		b := d.batches[target]
		n := min(len(b.keys), d.cfg.BatchKeys)
		jobs[target] = b.keys[:n:n]
		if n == len(b.keys) {
			delete(d.batches, target)
		} else {
			rest := &batch{since: now, keys: slices.Clone(b.keys[n:]), seen: map[string]bool{}}
			for _, k := range rest.keys {
				rest.seen[k] = true
			}
			d.batches[target] = rest
		}
		d.sending[target] = true
	}
	d.mu.Unlock()
	for _, target := range ready {
		keys := jobs[target]
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.sync(target, keys)
			d.mu.Lock()
			delete(d.sending, target)
			d.mu.Unlock()
		}()
	}
}

// batchDelay is the collecting time of the next batch to target: the base
// delay, plus 100 ms per 2 000 instances the last batch carried, at most
// MaxBatchDelay (caller holds d.mu).
func (d *Distro) batchDelay(target string) time.Duration {
	delay := d.cfg.BatchDelay + time.Duration(d.lastSize[target]/2000)*100*time.Millisecond
	return min(delay, max(d.cfg.MaxBatchDelay, d.cfg.BatchDelay))
}

// sync sends the current lists of keys to target (DistroHttpAgent.syncData
// → PUT /v1/ns/distro/datum). Keys no longer held are skipped; a member
// that left is skipped (counted as done); a failure re-queues every key
// after RetryDelay.
func (d *Distro) sync(target string, keys []string) {
	if !d.cfg.Members.IsMember(target) {
		return
	}
	datums := make([]compat.Datum, 0, len(keys))
	size := 0
	for _, k := range keys {
		if dt, ok := d.cfg.Store.Datum(k); ok {
			datums = append(datums, dt)
			size += len(dt.Instances)
		}
	}
	d.mu.Lock()
	d.lastSize[target] = size
	d.mu.Unlock()
	if len(datums) == 0 {
		return
	}
	h := jsonHeader()
	h.Set("Accept-Encoding", "gzip,deflate,sdch")
	_, err := d.do(d.ctx, Request{Method: http.MethodPut, Addr: target, Path: "/v1/ns/distro/datum", Header: h,
		Body: compat.DatumsJSON(datums, compat.DatumBatchCapacity)})
	if d.ctx.Err() != nil {
		return
	}
	if err != nil {
		d.stats.SyncFailed.Add(1)
		d.log.Warn("distro: sync failed; retrying", "target", target, "keys", len(keys), "err", err)
		d.queueFor(target, keys, d.cfg.RetryDelay)
		return
	}
	d.stats.SyncSent.Add(1)
	d.stats.SyncKeys.Add(int64(len(datums)))
}

// Pending is the number of keys waiting to be synced, all members counted.
func (d *Distro) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, p := range d.pending {
		n += len(p)
	}
	for _, b := range d.batches {
		n += len(b.keys)
	}
	return n
}
