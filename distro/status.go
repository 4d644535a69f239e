package distro

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/nacosd/nacosd/compat"
)

// statusRound is ServiceManager.ServiceReporter (naming-v1.md §4.4): for
// each namespace, the checksums of the non-empty services this node owns
// go to every other member (POST /v1/ns/service/status). Java also sends
// namespaces with no owned service; nacosd skips them.
func (d *Distro) statusRound() {
	byNS := d.cfg.Store.ServiceChecksums(d.Responsible)
	targets := d.cfg.Members.Others()
	if len(byNS) == 0 || len(targets) == 0 {
		return
	}
	for _, ns := range sortedNS(byNS) {
		body := statusBody(d.self, ns, byNS[ns])
		for _, target := range targets {
			d.spawn(func() {
				_, err := d.do(d.ctx, Request{Method: http.MethodPost, Addr: target, Path: "/v1/ns/service/status",
					Header: http.Header{"Content-Type": {"application/json;charset=UTF-8"}}, Body: body})
				if err != nil && d.ctx.Err() == nil {
					d.log.Debug("distro: service status round failed", "target", target, "err", err)
					return
				}
				d.stats.StatusSent.Add(1)
			})
		}
	}
}

func sortedNS(m map[string]map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// statusBody is ServiceStatusSynchronizer's {"clientIP":…,"statuses":"<ServiceChecksum JSON as a string>"}.
func statusBody(self, ns string, sums map[string]string) []byte {
	inner := compat.NewJSON(64 + 64*len(sums))
	inner.BeginObject().Key("namespaceId").Str(ns).Key("serviceName2Checksum").BeginObject()
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range compat.JavaHashOrderStrings(keys, 16) { // ServiceChecksum's HashMap
		inner.Key(k).Str(sums[k])
	}
	inner.EndObject().EndObject()
	w := compat.NewJSON(len(inner.Bytes()) + 64)
	w.BeginObject().Key("clientIP").Str(self).Key("statuses").Str(string(inner.Bytes())).EndObject()
	return w.Bytes()
}

// ErrNotMember is a service status report from an address that is not a
// member (NacosException 400 "ip: … is not in serverlist", answered 500).
type ErrNotMember struct{ IP string }

func (e ErrNotMember) Error() string { return "ip: " + e.IP + " is not in serverlist" }

// StatusResult is the answer of POST /v1/ns/service/status: "ok", or
// "fail" when the statuses are a JSON null.
type StatusResult string

// OnServiceStatus is POST /v1/ns/service/status (ServiceController
// .serviceStatus): the body is URL-decoded, then read as JSON; the sender
// must be a member (hasMember: an address containing clientIP matches);
// every service whose local checksum differs has its instance health
// fetched from the sender (GET /v1/ns/instance/statuses) in the background.
// hasMember is the member manager's fuzzy check.
func (d *Distro) OnServiceStatus(body []byte, hasMember func(string) bool) (StatusResult, error) {
	d.stats.StatusReceived.Add(1)
	text, err := url.QueryUnescape(string(body))
	if err != nil {
		return "", fmt.Errorf("URLDecoder: %w", err)
	}
	var top map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return "", err
	}
	statuses, ok1 := asText(top["statuses"])
	client, ok2 := asText(top["clientIP"])
	if !ok1 || !ok2 {
		return "", errors.New("java.lang.NullPointerException")
	}
	if !hasMember(client) {
		return "", ErrNotMember{IP: client}
	}
	var sums *struct {
		NamespaceID          string            `json:"namespaceId"`
		ServiceName2Checksum map[string]string `json:"serviceName2Checksum"`
	}
	if err := json.Unmarshal([]byte(statuses), &sums); err != nil {
		d.log.Warn("distro: malformed service status", "from", client, "err", err)
		return "ok", nil
	}
	if sums == nil {
		return "fail", nil
	}
	var stale []string
	for svc, sum := range sums.ServiceName2Checksum {
		if svc == "" || sum == "" {
			continue
		}
		if local, ok := d.cfg.Store.ServiceChecksum(ServiceRef{sums.NamespaceID, svc}); ok && local != sum {
			stale = append(stale, svc)
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		d.stats.Statuses.Add(int64(len(stale)))
		ns := sums.NamespaceID
		d.spawn(func() {
			for _, svc := range stale {
				if err := d.fetchHealth(client, ServiceRef{ns, svc}); err != nil && d.ctx.Err() == nil {
					d.log.Debug("distro: fetch of instance statuses failed", "from", client, "service", svc, "err", err)
				}
			}
		})
	}
	return "ok", nil
}

// asText is JsonNode.asText for a present, non-null node.
func asText(raw json.RawMessage) (string, bool) {
	if raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", raw != nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	return strings.TrimSpace(string(raw)), true
}

// fetchHealth is ServiceManager.updatedHealthStatus: GET the sender's
// statuses of one service and apply them.
func (d *Distro) fetchHealth(source string, ref ServiceRef) error {
	resp, err := d.do(d.ctx, Request{Method: http.MethodGet, Addr: source, Path: "/v1/ns/instance/statuses",
		Query: url.Values{"key": {ref.NamespaceID + "##" + ref.Service}}})
	if err != nil {
		return err
	}
	var st struct {
		IPs []string `json:"ips"`
	}
	if err := json.Unmarshal(resp.Body, &st); err != nil {
		return fmt.Errorf("distro: statuses of %s from %s: %w", ref.Service, source, err)
	}
	healthy := make(map[string]bool, len(st.IPs))
	for _, ip := range st.IPs {
		parts := compat.JavaSplit(ip, "_")
		if len(parts) >= 2 {
			healthy[parts[0]] = strings.EqualFold(parts[1], "true") // Boolean.parseBoolean
		}
	}
	d.cfg.Store.ApplyHealth(ref, healthy)
	return nil
}
