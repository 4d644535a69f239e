package distro

import (
	"strings"

	"github.com/nacosd/nacosd/compat"
)

// Headers of a nacosd member's sync (PUT /v1/ns/distro/datum), which Java's
// syncs do not carry and Java members ignore.
const (
	// HeaderSource names the sending member (Java's sync names none).
	HeaderSource = "X-Nacosd-Source"
	// HeaderPartial marks a sync from a member that has not loaded the
	// lists yet: its lists are what clients registered with it since it
	// started (Distro.sync).
	HeaderPartial = "X-Nacosd-Partial"
)

// Sender is what a sync says of its sender: its member address (HeaderSource;
// "" from a Java member) and whether its lists are partial.
type Sender struct {
	Addr    string
	Partial bool
	// Removed is the sync's HeaderRemoved (removed.go).
	Removed string
}

// OnDatums is PUT /v1/ns/distro/datum (DistroController.onSyncDatum): every
// ephemeral key of the payload replaces the local list, without an owner
// check; other keys are ignored. An empty map is ErrEmptyEntity; a list
// whose service name is invalid fails the request after the others were
// applied, as Java's loop stops at the exception.
//
// A nacosd member's sync names its sender, and a list is taken as Java
// takes it only from the member this node maps its service to. While
// members disagree on the membership (or a former owner's failed syncs are
// retried after a partition healed) other members send lists too:
//
//   - a list of a service this node maps to itself is added to its own
//     (the sender took registrations as the owner by its view; this node
//     may have taken others: neither may be dropped, and an instance that
//     stops beating expires on the owner), and the result is shipped as
//     this node's own change (if its view is the stale one, the member
//     that owns the service gets what it took);
//   - a list of a service this node maps to a third member is refused
//     (ErrRefused, after the others were applied): this node follows that
//     member's lists (and its checksum rounds), and the sender, which
//     counts the sync as failed, sends the list again while it maps the
//     service to itself or to this node (Distro.sync), so that it is taken
//     once this node's view agrees;
//   - a partial list (the sender has not loaded) from the owner is added;
//   - so is a list from the owner while this node has yet to deliver its
//     own list of the service to it (it took registrations as the owner
//     by its view, say cut off from the others, and its syncs are
//     retried): the owner adds that list to its own when it arrives, and
//     neither side drops what the other took.
func (d *Distro) OnDatums(body []byte, from Sender) error {
	datums, err := d.parser.Parse(body)
	if err != nil {
		return err
	}
	if len(datums) == 0 {
		return ErrEmptyEntity
	}
	d.stats.DatumsReceived.Add(int64(len(datums)))
	d.takeRemovedHeader(from.Removed)
	m := d.mapping.Load()
	owes := d.owed(from.Addr)
	var refused []string
	for _, k := range sortedKeys(datums) {
		ref, ok := parseKey(k)
		if !ok {
			continue
		}
		list := datums[k].Instances
		if from.Addr != "" {
			switch owner := m.owner(d.self, ref.Service); {
			case owner == from.Addr:
				if from.Partial || owes(ref) {
					list = d.union(ref, list, false)
				}
			case owner == d.self:
				list = d.union(ref, list, true)
				d.queue(ref, d.cfg.SyncDelay) // its list as the owner changed: the others get it
			default:
				d.stats.DatumsRefused.Add(1)
				d.log.Debug("distro: refused the list of a service another member owns", "service", ref.Service,
					"namespace", ref.NamespaceID, "from", from.Addr, "owner", owner)
				refused = append(refused, k)
				continue
			}
		}
		if err := d.apply(ref, list); err != nil {
			return err
		}
		if from.Addr != "" { // a nacosd member's sync
			d.trustBeats(ref, datums[k].Instances)
		}
	}
	if len(refused) > 0 {
		return ErrRefused{Keys: refused}
	}
	return nil
}

// ErrRefused is a nacosd member's sync naming lists of services this node
// maps to a third member (OnDatums): the others were applied. The HTTP
// edge answers it 409 with the message.
type ErrRefused struct{ Keys []string }

func (e ErrRefused) Error() string {
	return "distro: lists of services another member owns refused: " + strings.Join(e.Keys, ",")
}

// union is list with the instances held here of ref that list lacks (by
// datum key), after list's; with localWins, the held copy of an instance
// in both replaces list's. Either way the copy kept has the later of the
// two last beats.
func (d *Distro) union(ref ServiceRef, list []compat.DistroInstance, localWins bool) []compat.DistroInstance {
	held, ok := d.view.datum(ref, d.cfg.Store)
	if !ok || len(held.Instances) == 0 {
		return list
	}
	local := make(map[string]int, len(held.Instances))
	for i, in := range held.Instances {
		local[DatumKey(in)] = i
	}
	out := make([]compat.DistroInstance, 0, len(list)+len(held.Instances))
	for _, in := range list {
		k := DatumKey(in)
		if i, ok := local[k]; ok {
			h := held.Instances[i]
			if localWins {
				in, h = h, in
			}
			in.LastBeat = max(in.LastBeat, h.LastBeat)
			delete(local, k)
		}
		out = append(out, in)
	}
	for _, in := range held.Instances {
		if _, ok := local[DatumKey(in)]; ok {
			out = append(out, in)
		}
	}
	return out
}
