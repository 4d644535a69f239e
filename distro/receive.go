package distro

import (
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
//     stops beating expires on the owner);
//   - a list of a service this node maps to a third member is ignored:
//     this node follows that member's lists (and its checksum rounds);
//   - a partial list (the sender has not loaded) from the owner is added.
func (d *Distro) OnDatums(body []byte, from Sender) error {
	datums, err := d.parser.Parse(body)
	if err != nil {
		return err
	}
	if len(datums) == 0 {
		return ErrEmptyEntity
	}
	d.stats.DatumsReceived.Add(int64(len(datums)))
	m := d.mapping.Load()
	for _, k := range sortedKeys(datums) {
		ref, ok := parseKey(k)
		if !ok {
			continue
		}
		list := datums[k].Instances
		if from.Addr != "" {
			switch owner := m.owner(d.self, ref.Service); {
			case owner == from.Addr:
				if from.Partial {
					list = d.union(ref, list, false)
				}
			case owner == d.self:
				list = d.union(ref, list, true)
			default:
				d.stats.DatumsIgnored.Add(1)
				d.log.Debug("distro: ignored the list of a service another member owns", "service", ref.Service,
					"namespace", ref.NamespaceID, "from", from.Addr, "owner", owner)
				continue
			}
		}
		if err := d.cfg.Store.Apply(ref, list); err != nil {
			return err
		}
	}
	return nil
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
