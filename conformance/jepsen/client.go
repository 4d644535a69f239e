package jepsen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Client is one HTTP client with its own connections, bound to the
// clients' address.
type Client struct {
	hc      *http.Client
	timeout time.Duration
}

// NewClient makes a client whose connections leave from localIP.
func NewClient(localIP string, timeout time.Duration) *Client {
	d := &net.Dialer{Timeout: timeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(localIP)}}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second,
		DisableCompression: true}
	return &Client{hc: &http.Client{Transport: tr}, timeout: timeout}
}

// Close drops idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Do sends one request; form (if any) goes as an urlencoded body.
func (c *Client) Do(ctx context.Context, n *Node, method, path string, q, form url.Values, hdr map[string]string, timeout time.Duration) (int, string, error) {
	if timeout <= 0 {
		timeout = c.timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := "http://" + n.Addr() + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("User-Agent", "Nacos-Java-Client:v1.4.8")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.StatusCode, string(b), err
	}
	return resp.StatusCode, string(b), nil
}

// Get is Do for a GET.
func (c *Client) Get(ctx context.Context, n *Node, path string, q url.Values, timeout time.Duration) (int, string, error) {
	return c.Do(ctx, n, http.MethodGet, path, q, nil, nil, timeout)
}

// classify turns a transport error or an HTTP answer into an outcome: a
// refused connection sent nothing (a definite failure); any other
// transport error or timeout may have reached the node (unknown).
// okBody says whether a 200 answer acknowledges the op.
func classify(op *Op, st int, body string, err error, okBody func(string) bool) Outcome {
	op.Status = st
	switch {
	case err != nil:
		op.Err = err.Error()
		if st == 0 && errors.Is(err, syscall.ECONNREFUSED) {
			return Fail // nothing was sent: the node is down
		}
		return Unknown
	case st == http.StatusServiceUnavailable && strings.Contains(body, "server is starting"):
		op.Err = trim(body)
		return Fail
	case st >= 500:
		op.Err = trim(body)
		if op.Kind == CfgCAS && (strings.Contains(body, "Cas publish fail") || strings.Contains(body, "md5 may have changed")) {
			op.Err = CASRefusedPrefix + op.Err
			return Fail
		}
		return Unknown
	case st >= 400:
		op.Err = trim(body)
		return Fail
	case st != http.StatusOK:
		op.Err = trim(body)
		return Unknown
	}
	if okBody != nil && !okBody(body) {
		op.Err = trim(body)
		return Unknown
	}
	return OK
}

func trim(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func bodyIs(want string) func(string) bool {
	return func(b string) bool { return strings.TrimSpace(b) == want }
}

// restResult is Nacos's {"code":…,"message":…,"data":…}.
type restResult struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// hostsAnswer is the part of /v1/ns/instance/list the checks read.
type hostsAnswer struct {
	Hosts []struct {
		IP       string            `json:"ip"`
		Port     int               `json:"port"`
		Metadata map[string]string `json:"metadata"`
	} `json:"hosts"`
}

// parseSlots reads a persistent service's list: slot i is the instance on
// clientIP:basePort+i; other hosts, and a slot's host listed again, are
// counted in extra (a node must list an instance once: a second, stale
// copy of a slot would otherwise hide or fake its value, depending on
// which came last).
func parseSlots(body, clientIP string, basePort, slots int) ([]Slot, int, error) {
	var h hostsAnswer
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		return nil, 0, fmt.Errorf("instance list: %w", err)
	}
	out := make([]Slot, slots)
	extra := 0
	for _, x := range h.Hosts {
		i := x.Port - basePort
		if x.IP != clientIP || i < 0 || i >= slots || out[i].P {
			extra++
			continue
		}
		out[i] = Slot{P: true, V: x.Metadata["v"], M: x.Metadata["m"]}
	}
	return out, extra, nil
}

// parseInsts reads an ephemeral service's list as a set of ip:port.
func parseInsts(body string) (map[string]bool, error) {
	var h hostsAnswer
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		return nil, fmt.Errorf("instance list: %w", err)
	}
	out := make(map[string]bool, len(h.Hosts))
	for _, x := range h.Hosts {
		out[net.JoinHostPort(x.IP, strconv.Itoa(x.Port))] = true
	}
	return out, nil
}

// parseUpdated reads a metadata batch answer into slots.
func parseUpdated(body, clientIP string, basePort, slots int) (uint8, error) {
	var a struct {
		Updated []string `json:"updated"`
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		return 0, fmt.Errorf("metadata batch answer: %w", err)
	}
	var m uint8
	for _, u := range a.Updated {
		// ip:port:unknown:cluster:persist|ephemeral
		parts := strings.Split(u, ":")
		if len(parts) < 2 || parts[0] != clientIP {
			continue
		}
		p, err := strconv.Atoi(parts[1])
		if err != nil {
			continue
		}
		if i := p - basePort; i >= 0 && i < slots {
			m |= 1 << i
		}
	}
	return m, nil
}

// svcValue is what the checks compare of a service: the metadata key
// "u" and the protect threshold, as "u|0.30".
func svcValue(u string, threshold float64) string {
	return u + "|" + strconv.FormatFloat(threshold, 'f', 2, 64)
}

// parseService reads GET /v1/ns/service.
func parseService(body string) (string, bool, error) {
	var s struct {
		ProtectThreshold float64           `json:"protectThreshold"`
		Metadata         map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		return "", false, fmt.Errorf("service: %w", err)
	}
	u, ok := s.Metadata["u"]
	if !ok {
		return "", false, nil
	}
	return svcValue(u, s.ProtectThreshold), true, nil
}

// parseBeta reads GET /v1/cs/configs?beta=true.
func parseBeta(body string) (string, bool, error) {
	var r restResult
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return "", false, fmt.Errorf("beta answer: %w", err)
	}
	if r.Code != 200 {
		return "", false, fmt.Errorf("beta answer: code %d %s", r.Code, r.Message)
	}
	if len(r.Data) == 0 || string(r.Data) == "null" {
		return "", false, nil
	}
	var d struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return "", false, fmt.Errorf("beta answer data: %w", err)
	}
	return d.Content, true, nil
}

// canonical renders a node's full state for the final comparison.
func canonicalSlots(s []Slot) string { return slotsString(s) }

func canonicalInsts(m map[string]bool) string {
	var l []string
	for k, v := range m {
		if v {
			l = append(l, k)
		}
	}
	sort.Strings(l)
	return "{" + strings.Join(l, " ") + "}"
}
