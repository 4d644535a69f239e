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
// owns go to every other member; nothing is sent when it owns none. A node
// that has not loaded the lists yet (start-up) sends nothing: what it
// holds is not what it owns, and its round would make the members fetch
// its partial lists for the whole ones and drop the lists it has not
// received. The round also names this node's owner mapping (ViewParam,
// which a Java member ignores), so that a nacosd member can tell whether
// an omission means anything (processChecksums).
func (d *Distro) verifyRound() {
	if !d.loaded.Load() {
		return
	}
	m := d.mapping.Load()
	sums := map[string]string{}
	for _, r := range d.view.refs() {
		if !m.responsible(d.self, r.Service) {
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
	q := url.Values{"source": {d.self}, ViewParam: {m.digest}}
	for _, target := range d.cfg.Members.Others() {
		d.spawn(func() {
			_, err := d.do(d.ctx, Request{Method: http.MethodPut, Addr: target, Path: "/v1/ns/distro/checksum",
				Query: q, Header: h, Body: body})
			if err != nil && d.ctx.Err() == nil {
				d.log.Debug("distro: checksum round failed", "target", target, "err", err)
				return
			}
			d.stats.VerifySent.Add(1)
		})
	}
}

// ViewParam is the query parameter of a nacosd member's checksum round
// that names its owner mapping (a digest of its sorted healthy members).
const ViewParam = "nacosdView"

// OnChecksums is PUT /v1/ns/distro/checksum?source=… (onReceiveChecksums),
// processed in the background (the caller answers "ok" at once). view is
// the sender's owner mapping (the nacosdView parameter; "" from a Java
// member). Keys missing here or with another checksum are fetched from the
// source; lists the source owns by this node's mapping but omitted are
// removed under the rule of processChecksums. A map naming a key this node
// owns aborts the round (the peers disagree on owners, which a membership
// change resolves). Rounds from one source do not overlap.
func (d *Distro) OnChecksums(source, view string, sums map[string]string) {
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
		d.processChecksums(d.ctx, source, view, sums)
	})
}

// omission is the first of a member's checksum rounds that omitted a list
// it owns by this node's mapping.
type omission struct {
	at     time.Time
	digest string // this node's mapping then
}

// processChecksums is onReceiveChecksums, but for its removal rule. Java
// removes every list that maps to the source and is absent from the
// source's round, on the first such round. While members' views of the
// membership differ (a member just died, restarted or came back from a
// partition, and the reports that tell the others reach one member per
// round), the source does not own some of the lists this node maps to it
// and omits them: Java drops lists of instances that never stopped beating
// (issue 23 defect 6). Here a list is removed only when
//
//   - the round is evidence: a nacosd source names its owner mapping, and
//     a round whose mapping differs from this node's removes nothing (a
//     Java source names none);
//   - and the source omitted the list in two rounds at least VerifyInterval
//     apart, with no round naming it in between, and this node mapped the
//     list to the source, with the same member list, at both.
//
// So the owner omits a list for good, not for the seconds the views take
// to agree, before the members drop it. A differing list is fetched from
// the source at once, as in Java, if this node maps it to the source (it
// follows another member's list of the others, as OnDatums does).
func (d *Distro) processChecksums(ctx context.Context, source, view string, sums map[string]string) {
	var update []string
	now := d.cfg.Clock.Now()
	rec := PeerChecksum{At: now, Lists: len(sums)}
	defer func() { d.recordPeer(source, rec) }()
	m := d.mapping.Load()
	named := make(map[ServiceRef]bool, len(sums))
	for k, sum := range sums {
		ref, ok := parseKey(k)
		if !ok { // not an ephemeral instance list: nothing held here
			continue
		}
		named[ref] = true
		if m.responsible(d.self, ref.Service) {
			d.log.Warn("distro: received the checksum of a key this node owns; round aborted", "key", k, "source", source)
			rec.Aborted = true
			d.forgetOmissions(source)
			return
		}
		if m.owner(d.self, ref.Service) != source {
			continue // this node follows another member's list of it (OnDatums)
		}
		if local, ok := d.view.checksum(ref, d.cfg.Store); !ok || local != sum {
			update = append(update, k)
		}
	}
	agree := view == "" || view == m.digest
	rec.ViewsDiffer = !agree
	var remove []ServiceRef
	d.mu.Lock()
	prev := d.omitted[source]
	next := map[ServiceRef]omission{}
	if agree {
		for _, ref := range d.view.refs() {
			if named[ref] || m.owner(d.self, ref.Service) != source {
				continue
			}
			o, ok := prev[ref]
			switch {
			case !ok || o.digest != m.digest:
				next[ref] = omission{at: now, digest: m.digest}
			case now.Sub(o.at) >= d.cfg.VerifyInterval:
				remove = append(remove, ref)
			default:
				next[ref] = o
			}
		}
	}
	if d.omitted == nil {
		d.omitted = map[string]map[ServiceRef]omission{}
	}
	d.omitted[source] = next
	rec.Omitted = len(next)
	d.mu.Unlock()
	for _, ref := range remove {
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
	n, err := d.applyPayload(resp.Body, d.owed(source), resp.Header.Get(HeaderSource) != "")
	if err != nil {
		d.log.Warn("distro: bad datum payload", "source", source, "err", err)
		rec.FetchFailed = true
	}
	d.stats.KeysFetched.Add(int64(n))
}

// forgetOmissions drops what source's rounds omitted: a round that does
// not count breaks the chain.
func (d *Distro) forgetOmissions(source string) {
	d.mu.Lock()
	delete(d.omitted, source)
	d.mu.Unlock()
}

// PeerChecksum is the outcome of the last checksum round a member sent
// this node: when, how many lists it named, how many differed here (and
// were fetched from it), and whether the round failed.
type PeerChecksum struct {
	At          time.Time
	Lists       int
	Differing   int
	Omitted     int  // lists it owns by this node's mapping but omitted, kept for now
	FetchFailed bool // the differing lists could not be fetched
	Aborted     bool // the round named a list this node owns (membership views differ)
	ViewsDiffer bool // the sender's owner mapping is not this node's: nothing removed
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

// applyPayload applies a datum map (a verify fetch from a list's owner);
// keys that are not ephemeral instance lists are ignored. A list this
// node owes the owner (its own list of the service has yet to reach it:
// OnDatums) is added to the local one instead.
func (d *Distro) applyPayload(body []byte, owes func(ServiceRef) bool, nacosd bool) (int, error) {
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
		list := datums[k].Instances
		if owes(ref) {
			list = d.union(ref, list, false)
		}
		if err := d.apply(ref, list); err != nil {
			errs = append(errs, err)
			continue
		}
		if nacosd {
			d.trustBeats(ref, datums[k].Instances)
		}
		n++
	}
	return n, errors.Join(errs...)
}

// applySnapshot applies the start-up load's datum map. A node that took
// registrations before it loaded (its load failed at start) holds part of
// the lists of the services it owns: those instances are kept (its own
// copy of an instance in both is the fresher), and every owned list that
// held any is shipped again, now whole.
func (d *Distro) applySnapshot(body []byte, nacosd bool) (int, error) {
	datums, err := d.parser.Parse(body)
	if err != nil {
		return 0, err
	}
	var ship []ServiceRef
	for _, r := range d.view.refs() {
		if list, ok := d.cfg.Store.Instances(r); ok && len(list) > 0 && d.Responsible(r.Service) {
			ship = append(ship, r)
		}
	}
	n := 0
	var errs []error
	for _, k := range sortedKeys(datums) {
		ref, ok := parseKey(k)
		if !ok {
			continue
		}
		if err := d.apply(ref, d.union(ref, datums[k].Instances, true)); err != nil {
			errs = append(errs, err)
			continue
		}
		if nacosd {
			d.trustBeats(ref, datums[k].Instances)
		}
		n++
	}
	for _, r := range ship {
		d.queue(r, d.cfg.SyncDelay)
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
		n, err := d.applySnapshot(resp.Body, resp.Header.Get(HeaderSource) != "")
		if err != nil {
			d.log.Warn("distro: load payload had bad lists", "peer", peer, "err", err)
		}
		d.log.Info("distro: loaded ephemeral data", "peer", peer, "services", n)
		d.loaded.Store(true)
		d.initialized.Store(true)
		return true
	}
	if empty == len(others) {
		if len(others) > 0 {
			d.log.Info("distro: every other member is starting or down; nothing to load", "members", len(others))
		}
		d.loaded.Store(true)
		d.initialized.Store(true)
		return true
	}
	return false
}

// startLoad is DistroLoadDataTask: unless LoadOnce already succeeded, fetch
// every list from the first member that answers, retrying every LoadRetry
// until one does; after LoadWait without success the node counts as
// initialized anyway (it may be the first one up, and the checksum rounds
// bring in whatever the owners hold).
func (d *Distro) startLoad() {
	if d.initialized.Load() {
		return
	}
	start := d.cfg.Clock.Now()
	d.tasks.Every(0, d.cfg.LoadRetry, func() {
		if d.loaded.Load() || d.ctx.Err() != nil || d.LoadOnce(d.ctx) {
			return
		}
		if !d.initialized.Load() && d.cfg.Clock.Now().Sub(start) >= d.cfg.LoadWait {
			d.log.Info("distro: no member answered the load; starting with the checksum rounds only")
			d.initialized.Store(true)
		}
	})
}

// refused reports whether err is a refused connection: nothing listens on
// the member's port.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(strings.ToLower(err.Error()), "connection refused")
}
