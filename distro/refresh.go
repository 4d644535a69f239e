package distro

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Refresh fetches the list of ref from owner (GET /v1/ns/distro/datum, as a
// checksum round fetches a differing list) and applies it here. A node that
// proxied a client's write of ref to its owner calls it after the owner's
// answer and before it relays it, so that the client reads its own write on
// the node it talks to: the owner's sync reaches this node only after
// SyncDelay and BatchDelay (Java: about 2 s), and Nacos clients read from
// the node they wrote through (a Java cluster does not wait, and its
// clients miss their write for that long).
//
// Refresh applies nothing when this node does not map ref to owner (the
// views disagree: the member it follows sends the list), nor when the owner
// holds no list of ref. A list this node owes the owner is added to the
// fetched one, as in OnDatums.
func (d *Distro) Refresh(ctx context.Context, owner string, ref ServiceRef) error {
	if d.mapping.Load().owner(d.self, ref.Service) != owner {
		return nil
	}
	body, err := json.Marshal(map[string]string{"keys": ref.key()})
	if err != nil {
		return fmt.Errorf("distro: refresh %s: %w", ref.Service, err)
	}
	resp, err := d.do(ctx, Request{Method: http.MethodGet, Addr: owner, Path: "/v1/ns/distro/datum", Header: jsonHeader(), Body: body})
	if err != nil {
		return fmt.Errorf("distro: refresh %s from %s: %w", ref.Service, owner, err)
	}
	if _, err := d.applyPayload(resp.Body, d.owed(owner), resp.Header.Get(HeaderSource) != ""); err != nil {
		return fmt.Errorf("distro: refresh %s from %s: %w", ref.Service, owner, err)
	}
	d.stats.Refreshed.Add(1)
	return nil
}
