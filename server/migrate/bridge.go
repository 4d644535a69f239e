package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// BridgeOptions configure Bridge.
type BridgeOptions struct {
	// Interval between rounds (3 s).
	Interval time.Duration
	// Live is how long after its last beat an instance counts as beaten by
	// its client (12 s: more than two 5 s beats, less than the 15 s after
	// which a server marks an unbeaten instance unhealthy).
	Live time.Duration
	// Report, when set, receives each round's figures.
	Report func(BridgeRound)
}

// BridgeRound is what one round saw and did.
type BridgeRound struct {
	// LiveJava and LiveNacosd count ephemeral instances whose clients beat
	// that server; LiveJava reaching 0 means every client has moved.
	LiveJava, LiveNacosd int
	// ToNacosd and ToJava count the copies registered or refreshed.
	ToNacosd, ToJava int
	// Errors counts failed copies (logged).
	Errors int
}

// String is the round as one log line.
func (b BridgeRound) String() string {
	return fmt.Sprintf("clients beating Java: %d (mirrored to nacosd: %d), beating nacosd: %d (mirrored to Java: %d), errors: %d",
		b.LiveJava, b.ToNacosd, b.LiveNacosd, b.ToJava, b.Errors)
}

type instKeyFull struct {
	ns, service, cluster, ip string
	port                     int
}

// sighting is what the bridge knows of one instance on one server.
type sighting struct {
	inst      instance
	lastBeat  int64     // the server's lastBeat at the last round
	ours      int64     // lastBeat right after the bridge's own write (0: none)
	changedAt time.Time // when a client last moved lastBeat (bridge clock)
}

// Bridge keeps every ephemeral instance visible on both servers while
// clients move from Java Nacos to nacosd, until ctx ends: an instance
// whose client beats one server only is registered on the other too, and
// refreshed there every round, so consumers on either side never lose a
// provider. An instance counts as beaten when its lastBeat moves between
// rounds by something other than the bridge's own writes; copies are
// never mirrored back, so nothing outlives its client: once a client
// stops beating everywhere, its copies expire as any instance does. A
// restarted bridge needs two rounds to see beats again.
func Bridge(ctx context.Context, o Options, bo BridgeOptions) error {
	if o.From == "" || o.To == "" {
		return fmt.Errorf("migrate: the bridge needs -from (Java Nacos) and -to (nacosd)")
	}
	if bo.Interval <= 0 {
		bo.Interval = 3 * time.Second
	}
	if bo.Live <= 0 {
		bo.Live = 12 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	java, err := newClient(o.From, o.FromUser, o.FromPassword, o.Timeout)
	if err != nil {
		return err
	}
	to, err := newClient(o.To, o.ToUser, o.ToPassword, o.Timeout)
	if err != nil {
		return err
	}
	for _, c := range []*client{java, to} {
		if err := c.login(ctx); err != nil {
			return err
		}
	}
	b := &bridge{o: bo, sides: [2]*client{java, to}, seen: [2]map[instKeyFull]*sighting{{}, {}}}
	relogin := time.Now().Add(time.Hour) // tokens last 5 h by default
	t := time.NewTicker(bo.Interval)
	defer t.Stop()
	for {
		r := b.round(ctx)
		if bo.Report != nil {
			bo.Report(r)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if time.Now().After(relogin) {
			for _, c := range b.sides {
				_ = c.login(ctx)
			}
			relogin = time.Now().Add(time.Hour)
		}
	}
}

type bridge struct {
	o     BridgeOptions
	sides [2]*client // 0: Java, 1: nacosd
	seen  [2]map[instKeyFull]*sighting
}

// round lists both sides, updates what is beaten, and mirrors.
func (b *bridge) round(ctx context.Context) BridgeRound {
	var r BridgeRound
	now := time.Now()
	for side, c := range b.sides {
		cur, err := listEphemeral(ctx, c)
		if err != nil {
			r.Errors++
			continue // keep last round's view of this side
		}
		for k, in := range cur {
			st := b.seen[side][k]
			switch {
			case st == nil:
				b.seen[side][k] = &sighting{inst: in, lastBeat: in.LastBeat}
			case in.LastBeat != st.lastBeat:
				if in.LastBeat != st.ours {
					st.changedAt = now
				}
				st.lastBeat, st.inst = in.LastBeat, in
			default:
				st.inst = in
			}
		}
		for k := range b.seen[side] {
			if _, ok := cur[k]; !ok {
				delete(b.seen[side], k)
			}
		}
	}
	live := func(side int, k instKeyFull) bool {
		st := b.seen[side][k]
		return st != nil && !st.changedAt.IsZero() && now.Sub(st.changedAt) < b.o.Live
	}
	keys := map[instKeyFull]bool{}
	for side := range b.seen {
		for k := range b.seen[side] {
			keys[k] = true
			if live(side, k) {
				if side == 0 {
					r.LiveJava++
				} else {
					r.LiveNacosd++
				}
			}
		}
	}
	for k := range keys {
		for src := 0; src < 2; src++ {
			dst := 1 - src
			if !live(src, k) || live(dst, k) {
				continue
			}
			if err := b.mirror(ctx, dst, k, b.seen[src][k].inst); err != nil {
				r.Errors++
				continue
			}
			if dst == 1 {
				r.ToNacosd++
			} else {
				r.ToJava++
			}
		}
	}
	return r
}

// mirror registers (or refreshes) the instance on side dst and remembers
// the lastBeat that write gave it.
func (b *bridge) mirror(ctx context.Context, dst int, k instKeyFull, in instance) error {
	c := b.sides[dst]
	meta, _ := json.Marshal(nonNilMap(in.Metadata))
	q := url.Values{"serviceName": {k.service}, "namespaceId": {k.ns}, "ip": {k.ip}, "port": {strconv.Itoa(k.port)},
		"clusterName": {k.cluster}, "weight": {in.Weight.String()}, "enabled": {strconv.FormatBool(in.Enabled)},
		"healthy": {"true"}, "ephemeral": {"true"}, "metadata": {string(meta)}}
	if err := c.send(ctx, "POST", "/v1/ns/instance", q, nil); err != nil {
		return err
	}
	list, err := clusterInstances(ctx, c, k.ns, k.service, k.cluster)
	if err != nil {
		return err
	}
	for _, x := range list {
		if x.IP == k.ip && x.Port == k.port {
			st := b.seen[dst][k]
			if st == nil {
				st = &sighting{}
				b.seen[dst][k] = st
			}
			st.inst, st.lastBeat, st.ours = x, x.LastBeat, x.LastBeat
		}
	}
	return nil
}

// listEphemeral lists every ephemeral instance of a server.
func listEphemeral(ctx context.Context, c *client) (map[instKeyFull]instance, error) {
	var names struct {
		Services map[string][]string `json:"services"`
	}
	if err := c.get(ctx, "/v1/ns/service/names", nil, &names); err != nil {
		return nil, err
	}
	out := map[instKeyFull]instance{}
	for _, ns := range sortedKeys(names.Services) {
		for page := 1; ; page++ {
			var sl serviceList
			q := url.Values{"pageNo": {strconv.Itoa(page)}, "pageSize": {"100"}, "namespaceId": {ns}}
			if err := c.get(ctx, "/v1/ns/catalog/services", q, &sl); err != nil {
				return nil, err
			}
			for _, s := range sl.ServiceList {
				d, err := readService(ctx, c, ns, s.GroupName, s.Name)
				if err != nil || d == nil {
					continue
				}
				grouped := s.GroupName + "@@" + s.Name
				for _, cl := range d.Clusters {
					list, err := clusterInstances(ctx, c, ns, grouped, cl.Name)
					if err != nil {
						return nil, err
					}
					for _, in := range list {
						if in.Ephemeral {
							out[instKeyFull{ns, grouped, cl.Name, in.IP, in.Port}] = in
						}
					}
				}
			}
			if len(sl.ServiceList) == 0 || page*100 >= sl.Count {
				break
			}
		}
	}
	return out, nil
}

// clusterInstances is GET /v1/ns/catalog/instances for one cluster of a
// grouped service name.
func clusterInstances(ctx context.Context, c *client, ns, grouped, cluster string) ([]instance, error) {
	group, name := "DEFAULT_GROUP", grouped
	for i := 0; i+1 < len(grouped); i++ {
		if grouped[i] == '@' && grouped[i+1] == '@' {
			group, name = grouped[:i], grouped[i+2:]
			break
		}
	}
	var il instanceList
	q := url.Values{"serviceName": {name}, "groupName": {group}, "namespaceId": {ns}, "clusterName": {cluster},
		"pageNo": {"1"}, "pageSize": {"10000"}}
	if err := c.get(ctx, "/v1/ns/catalog/instances", q, &il); err != nil {
		return nil, err
	}
	return il.List, nil
}
