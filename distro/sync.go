package distro

import (
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// Changed takes one change of the registry's change stream: the view of
// the lists held follows it, and a list this node changed as the owner
// (c.Ship) is queued for every other member (DistroProtocol.sync): it waits
// SyncDelay for more changes (a service already queued keeps its due
// time), then joins the batch to that member. It never blocks on I/O and
// takes only Distro's own locks, so the registry may call it from its
// mutating goroutine; changes of one service must arrive in the order they
// were applied.
func (d *Distro) Changed(c ListChange) {
	d.view.apply(c, d.cfg.Store)
	if c.Ship && c.Deregistered {
		d.mu.Lock()
		d.noteRemovedLocked(c.Ref, d.cfg.Clock.Now().UnixMilli(), c.Key)
		d.mu.Unlock()
	}
	if c.Ship {
		d.queue(c.Ref, d.cfg.SyncDelay)
	}
}

func (d *Distro) queue(ref ServiceRef, delay time.Duration) {
	due := d.cfg.Clock.Now().Add(delay)
	targets := d.cfg.Members.Others()
	d.mu.Lock()
	for _, t := range targets {
		p := d.pending[t]
		if p == nil {
			p = map[ServiceRef]time.Time{}
			d.pending[t] = p
		}
		if _, ok := p[ref]; !ok {
			p[ref] = due
		}
	}
	d.mu.Unlock()
}

func (d *Distro) queueFor(target string, refs []ServiceRef, delay time.Duration) {
	due := d.cfg.Clock.Now().Add(delay)
	d.mu.Lock()
	p := d.pending[target]
	if p == nil {
		p = map[ServiceRef]time.Time{}
		d.pending[target] = p
	}
	for _, r := range refs {
		if _, ok := p[r]; !ok {
			p[r] = due
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
		due := make([]ServiceRef, 0, len(p))
		for ref, at := range p {
			if !at.After(now) {
				due = append(due, ref)
			}
		}
		slices.SortFunc(due, compareRefs) // a batch lists its services in one order
		for _, ref := range due {
			delete(p, ref)
			b := d.batches[target]
			if b == nil {
				b = &batch{since: now, seen: map[ServiceRef]bool{}}
				d.batches[target] = b
			}
			if !b.seen[ref] {
				b.seen[ref] = true
				b.refs = append(b.refs, ref)
			}
		}
		if len(p) == 0 {
			delete(d.pending, target)
		}
	}
	for target, b := range d.batches {
		if _, busy := d.sending[target]; busy {
			continue
		}
		if len(b.refs) >= d.cfg.BatchKeys || !now.Before(b.since.Add(d.batchDelay(target))) {
			ready = append(ready, target)
		}
	}
	slices.Sort(ready)
	jobs := make(map[string][]ServiceRef, len(ready))
	for _, target := range ready {
		b := d.batches[target]
		n := min(len(b.refs), d.cfg.BatchKeys)
		jobs[target] = b.refs[:n:n]
		if n == len(b.refs) {
			delete(d.batches, target)
		} else {
			rest := &batch{since: now, refs: slices.Clone(b.refs[n:]), seen: map[ServiceRef]bool{}}
			for _, r := range rest.refs {
				rest.seen[r] = true
			}
			d.batches[target] = rest
		}
		d.sending[target] = jobs[target]
	}
	d.mu.Unlock()
	for _, target := range ready {
		refs := jobs[target]
		d.spawn(func() {
			d.sync(target, refs)
			d.mu.Lock()
			delete(d.sending, target)
			d.mu.Unlock()
		})
	}
}

// batchDelay is the collecting time of the next batch to target: the base
// delay, plus 100 ms per 2 000 instances the last batch carried, at most
// MaxBatchDelay (caller holds d.mu).
func (d *Distro) batchDelay(target string) time.Duration {
	delay := d.cfg.BatchDelay + time.Duration(d.lastSize[target]/2000)*100*time.Millisecond
	return min(delay, max(d.cfg.MaxBatchDelay, d.cfg.BatchDelay))
}

// sync sends the current lists of refs to target (DistroHttpAgent.syncData
// → PUT /v1/ns/distro/datum). Lists no longer held are skipped; a member
// that left is skipped (counted as done); a failure re-queues every service
// after RetryDelay.
//
// Before this node has loaded the lists (start-up), what it holds of a
// service it owns is what clients registered since it started: part of
// the list. Its syncs then carry HeaderPartial, and a nacosd member adds
// their instances to its list instead of replacing it (OnDatums); a Java
// member, which would replace, waits for the load.
func (d *Distro) sync(target string, refs []ServiceRef) {
	if !d.cfg.Members.IsMember(target) {
		return
	}
	partial := !d.loaded.Load()
	if partial && !d.cfg.Members.IsNacosd(target) {
		d.queueFor(target, refs, d.cfg.RetryDelay)
		return
	}
	datums := make([]compat.Datum, 0, len(refs))
	size := 0
	for _, r := range refs {
		if dt, ok := d.view.datum(r, d.cfg.Store); ok {
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
	h.Set(HeaderSource, d.self) // a Java member ignores it
	if partial {
		h.Set(HeaderPartial, "true")
	}
	if d.cfg.Members.IsNacosd(target) {
		if v := d.removedHeader(refs); v != "" {
			h.Set(HeaderRemoved, v)
		}
	}
	_, err := d.do(d.ctx, Request{Method: http.MethodPut, Addr: target, Path: "/v1/ns/distro/datum", Header: h,
		Body: compat.DatumsJSON(datums, compat.DatumBatchCapacity)})
	if d.ctx.Err() != nil {
		return
	}
	if err != nil {
		// retried while this node owns the service or owes its list to
		// the target, its owner now (a list a third member owns is that
		// member's to send: the target refuses it, OnDatums)
		m := d.mapping.Load()
		retry := slices.DeleteFunc(slices.Clone(refs), func(r ServiceRef) bool {
			o := m.owner(d.self, r.Service)
			return o != d.self && o != target
		})
		d.stats.SyncFailed.Add(1)
		d.mu.Lock()
		first := !d.failing[target]
		d.failing[target] = true
		d.mu.Unlock()
		lvl := slog.LevelDebug // one warning per outage, not one per retry
		if first {
			lvl = slog.LevelWarn
		}
		d.log.Log(d.ctx, lvl, "distro: sync failed; retrying", "target", target, "services", len(retry), "dropped", len(refs)-len(retry),
			"every", d.cfg.RetryDelay, "err", err)
		d.queueFor(target, retry, d.cfg.RetryDelay)
		return
	}
	d.mu.Lock()
	recovered := d.failing[target]
	delete(d.failing, target)
	d.mu.Unlock()
	if recovered {
		d.log.Info("distro: sync works again", "target", target)
	}
	d.stats.SyncSent.Add(1)
	d.stats.SyncKeys.Add(int64(len(datums)))
}

// owes reports whether this node has yet to deliver its list of ref to
// target: a sync of it is queued, collecting or in flight (a failed sync
// is queued again). Caller holds d.mu.
func (d *Distro) owesLocked(target string, ref ServiceRef) bool {
	if _, ok := d.pending[target][ref]; ok {
		return true
	}
	if b := d.batches[target]; b != nil && b.seen[ref] {
		return true
	}
	return slices.Contains(d.sending[target], ref)
}

// owed filters the services of refs whose lists this node has yet to
// deliver to target.
func (d *Distro) owed(target string) func(ServiceRef) bool {
	return func(ref ServiceRef) bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.owesLocked(target, ref)
	}
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
		n += len(b.refs)
	}
	return n
}
