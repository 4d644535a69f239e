package distro

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// ErrEmptyEntity is PUT /distro/datum with an empty map (Java's
// NacosException 400 "receive empty entity!", answered 500).
var ErrEmptyEntity = errors.New("receive empty entity!")

// verifyRound is DistroVerifyTask: the checksums of the lists this node
// owns go to every other member; nothing is sent when it owns none.
func (d *Distro) verifyRound() {
	sums := map[string]string{}
	for _, r := range d.view.refs() {
		if !d.Responsible(r.Service) {
			continue
		}
		if sum, ok := d.view.checksum(r, d.cfg.Store); ok {
			sums[r.key()] = sum
		}
	}
	if len(sums) == 0 {
		return
	}
	body := compat.ChecksumsJSON(sums)
	h := jsonHeader()
	h.Set("Accept-Encoding", "gzip")
	for _, target := range d.cfg.Members.Others() {
		d.spawn(func() {
			_, err := d.do(d.ctx, Request{Method: http.MethodPut, Addr: target, Path: "/v1/ns/distro/checksum",
				Query: url.Values{"source": {d.self}}, Header: h, Body: body})
			if err != nil && d.ctx.Err() == nil {
				d.log.Debug("distro: checksum round failed", "target", target, "err", err)
				return
			}
			d.stats.VerifySent.Add(1)
		})
	}
}

// OnChecksums is PUT /v1/ns/distro/checksum?source=… (onReceiveChecksums),
// processed in the background (the caller answers "ok" at once). Keys the
// source no longer has but owns by the mapping are removed; keys missing
// here or with another checksum are fetched from the source. A map naming
// a key this node owns aborts the round (the peers disagree on owners,
// which a membership change resolves). Rounds from one source do not
// overlap.
func (d *Distro) OnChecksums(source string, sums map[string]string) {
	d.stats.VerifyReceived.Add(1)
	d.mu.Lock()
	if d.verifies[source] {
		d.mu.Unlock()
		d.log.Debug("distro: checksum round from source already in process", "source", source)
		return
	}
	d.verifies[source] = true
	d.mu.Unlock()
	d.spawn(func() {
		defer func() {
			d.mu.Lock()
			delete(d.verifies, source)
			d.mu.Unlock()
		}()
		d.processChecksums(d.ctx, source, sums)
	})
}

func (d *Distro) processChecksums(ctx context.Context, source string, sums map[string]string) {
	var update []string
	rec := PeerChecksum{At: d.cfg.Clock.Now(), Lists: len(sums)}
	defer func() { d.recordPeer(source, rec) }()
	named := make(map[ServiceRef]bool, len(sums))
	for k, sum := range sums {
		ref, ok := parseKey(k)
		if !ok { // not an ephemeral instance list: nothing held here
			continue
		}
		named[ref] = true
		if d.Responsible(ref.Service) {
			d.log.Warn("distro: received the checksum of a key this node owns; round aborted", "key", k, "source", source)
			rec.Aborted = true
			return
		}
		if local, ok := d.view.checksum(ref, d.cfg.Store); !ok || local != sum {
			update = append(update, k)
		}
	}
	for _, ref := range d.view.refs() {
		if named[ref] || d.MapSrv(ref.Service) != source {
			continue
		}
		d.stats.KeysRemoved.Add(1)
		d.log.Info("distro: removing a list its owner no longer has", "service", ref.Service, "namespace", ref.NamespaceID, "owner", source)
		d.cfg.Store.Remove(ref)
	}
	if len(update) == 0 {
		return
	}
	slices.Sort(update)
	rec.Differing = len(update)
	d.stats.ChecksumMismatches.Add(int64(len(update)))
	body, _ := json.Marshal(map[string]string{"keys": strings.Join(update, ",")})
	resp, err := d.do(ctx, Request{Method: http.MethodGet, Addr: source, Path: "/v1/ns/distro/datum", Header: jsonHeader(), Body: body})
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("distro: fetch of changed lists failed", "source", source, "keys", len(update), "err", err)
		}
		rec.FetchFailed = true
		return
	}
	n, err := d.applyPayload(resp.Body)
	if err != nil {
		d.log.Warn("distro: bad datum payload", "source", source, "err", err)
		rec.FetchFailed = true
	}
	d.stats.KeysFetched.Add(int64(n))
}

// PeerChecksum is the outcome of the last checksum round a member sent
// this node: when, how many lists it named, how many differed here (and
// were fetched from it), and whether the round failed.
type PeerChecksum struct {
	At          time.Time
	Lists       int
	Differing   int
	FetchFailed bool // the differing lists could not be fetched
	Aborted     bool // the round named a list this node owns (membership views differ)
}

func (d *Distro) recordPeer(source string, rec PeerChecksum) {
	d.mu.Lock()
	if d.peerSums == nil {
		d.peerSums = map[string]PeerChecksum{}
	}
	d.peerSums[source] = rec
	d.mu.Unlock()
}

// PeerChecksums returns, per member, the last checksum round it sent this
// node (the console's checksum health).
func (d *Distro) PeerChecksums() map[string]PeerChecksum {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]PeerChecksum, len(d.peerSums))
	for k, v := range d.peerSums {
		out[k] = v
	}
	return out
}

// OwnedCounts returns how many of the instance lists held here each
// healthy member owns (the console's Distro column).
func (d *Distro) OwnedCounts() map[string]int {
	out := map[string]int{}
	for _, r := range d.view.refs() {
		out[d.MapSrv(r.Service)]++
	}
	return out
}

// applyPayload applies a datum map (a verify fetch or the start-up load);
// keys that are not ephemeral instance lists are ignored.
func (d *Distro) applyPayload(body []byte) (int, error) {
	datums, err := d.parser.Parse(body)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, k := range sortedKeys(datums) {
		ref, ok := parseKey(k)
		if !ok {
			continue
		}
		if err := d.cfg.Store.Apply(ref, datums[k].Instances); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func sortedKeys(m map[string]compat.Datum) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// OnDatums is PUT /v1/ns/distro/datum (DistroController.onSyncDatum): every
// ephemeral key of the payload replaces the local list, without an owner
// check; other keys are ignored. An empty map is ErrEmptyEntity; a list
// whose service name is invalid fails the request after the others were
// applied, as Java's loop stops at the exception.
func (d *Distro) OnDatums(body []byte) error {
	datums, err := d.parser.Parse(body)
	if err != nil {
		return err
	}
	if len(datums) == 0 {
		return ErrEmptyEntity
	}
	d.stats.DatumsReceived.Add(int64(len(datums)))
	for _, k := range sortedKeys(datums) {
		ref, ok := parseKey(k)
		if !ok {
			continue
		}
		if err := d.cfg.Store.Apply(ref, datums[k].Instances); err != nil {
			return err
		}
	}
	return nil
}

// QueryBody reads GET /v1/ns/distro/datum's body {"keys":"k1,k2"}.
func QueryBody(body []byte) ([]string, error) {
	var q struct {
		Keys *json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &q); err != nil {
		return nil, err
	}
	if q.Keys == nil {
		return nil, errors.New("keys is required")
	}
	var s string
	if err := json.Unmarshal(*q.Keys, &s); err != nil {
		s = strings.Trim(string(*q.Keys), `"`) // JsonNode.asText of a number or bool
	}
	return compat.JavaSplit(s, ","), nil
}

// Datums answers GET /v1/ns/distro/datum: the held lists among keys (other
// keys are not held).
func (d *Distro) Datums(keys []string) []byte {
	refs := make([]ServiceRef, 0, len(keys))
	for _, k := range keys {
		if ref, ok := parseKey(k); ok {
			refs = append(refs, ref)
		}
	}
	return compat.DatumsJSON(d.held(refs), compat.DatumBatchCapacity)
}

func (d *Distro) held(refs []ServiceRef) []compat.Datum {
	var out []compat.Datum
	for _, r := range refs {
		if dt, ok := d.view.datum(r, d.cfg.Store); ok {
			out = append(out, dt)
		}
	}
	return out
}

// AllDatums answers GET /v1/ns/distro/datums: every held list, owned or not.
func (d *Distro) AllDatums() []byte {
	return compat.DatumsJSON(d.held(d.view.refs()), compat.DatumSnapshotCapacity)
}

// Datum returns a held list as a Java node's datum carries it (its
// instances in Java's order); ok is false when none is held.
func (d *Distro) Datum(ref ServiceRef) (compat.Datum, bool) { return d.view.datum(ref, d.cfg.Store) }

// Held lists the services holding an ephemeral list here (Java's DataStore
// keys), sorted.
func (d *Distro) Held() []ServiceRef { return d.view.refs() }

// Checksum is the Instances checksum of a held list; ok is false when none
// is held.
func (d *Distro) Checksum(ref ServiceRef) (string, bool) { return d.view.checksum(ref, d.cfg.Store) }

// LoadOnce asks each other member in turn for every list
// (GET /v1/ns/distro/datums) and applies the first answer; it reports
// whether one answered. A starting node calls it before it serves clients,
// so it does not answer with empty lists while its peers hold data. When
// every other member is down (connection refused) or starting itself (its
// answer carries HeaderStarting), no member holds lists and the load is
// complete with nothing loaded.
func (d *Distro) LoadOnce(ctx context.Context) bool {
	others := d.cfg.Members.Others()
	empty := 0 // members that cannot hold lists
	for _, peer := range others {
		if ctx.Err() != nil {
			return false
		}
		resp, err := d.do(ctx, Request{Method: http.MethodGet, Addr: peer, Path: "/v1/ns/distro/datums"})
		if err != nil {
			if starting(resp) || refused(err) {
				empty++
			}
			d.log.Debug("distro: load from peer failed", "peer", peer, "err", err)
			continue
		}
		n, err := d.applyPayload(resp.Body)
		if err != nil {
			d.log.Warn("distro: load payload had bad lists", "peer", peer, "err", err)
		}
		d.log.Info("distro: loaded ephemeral data", "peer", peer, "services", n)
		d.initialized.Store(true)
		return true
	}
	if empty == len(others) {
		if len(others) > 0 {
			d.log.Info("distro: every other member is starting or down; nothing to load", "members", len(others))
		}
		d.initialized.Store(true)
		return true
	}
	return false
}

// startLoad is DistroLoadDataTask: unless LoadOnce already succeeded, fetch
// every list from the first member that answers, retrying every LoadRetry;
// after LoadWait without success the node counts as initialized anyway (it
// may be the first one up, and the checksum rounds bring in whatever the
// owners hold).
func (d *Distro) startLoad() {
	if d.initialized.Load() {
		return
	}
	d.wg.Add(1)
	go func() { // sleeps between attempts: always its own goroutine
		defer d.wg.Done()
		start := d.cfg.Clock.Now()
		for !d.LoadOnce(d.ctx) {
			if !d.initialized.Load() && d.cfg.Clock.Now().Sub(start) >= d.cfg.LoadWait {
				d.log.Info("distro: no member answered the load; starting with the checksum rounds only")
				d.initialized.Store(true)
			}
			if !d.sleep(d.cfg.LoadRetry) {
				return
			}
		}
	}()
}

// sleep waits d on the clock; false when the Distro is closing.
func (d *Distro) sleep(wait time.Duration) bool {
	done := make(chan struct{})
	t := d.cfg.Clock.AfterFunc(wait, func() { close(done) })
	select {
	case <-done:
		return true
	case <-d.ctx.Done():
		t.Stop()
		return false
	}
}

// refused reports whether err is a refused connection: nothing listens on
// the member's port.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(strings.ToLower(err.Error()), "connection refused")
}
