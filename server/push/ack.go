package push

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"
)

// maxDatagram is the receive buffer (Java Receiver: 64 KiB); longer
// datagrams are truncated by the kernel and then fail to parse.
const maxDatagram = 64 * 1024

// errNotObject is returned for acks whose JSON is not an object.
var errNotObject = errors.New("ack is not a JSON object")

// ack is the part of Java AckPacket {type, lastRefTime, data} that matters.
type ack struct {
	Type        string
	LastRefTime int64
}

// readAcks is Java PushService.Receiver: every datagram on the push socket is
// an ack; it clears the pending entry keyed by source ip, port and
// lastRefTime. Errors are logged and the loop goes on until Close.
func (s *Service) readAcks() {
	defer close(s.readDone)
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("push: read ack", "err", err)
			continue
		}
		s.handleDatagram(buf[:n], from)
		s.acksRead.Add(1) // after handling, so tests can wait for it
	}
}

// handleDatagram parses one datagram and applies it as an ack.
func (s *Service) handleDatagram(b []byte, from *net.UDPAddr) {
	a, err := parseAck(b)
	if err != nil {
		s.log.Debug("push: bad ack", "from", from.String(), "err", err)
		return
	}
	s.handleAck(javaHostAddress(from.IP, from.Zone), from.Port, a)
}

// handleAck removes the pending push acked by a datagram from ip:port.
func (s *Service) handleAck(ip string, port int, a ack) {
	k := ackKey{ip: ip, port: port, ref: a.LastRefTime}
	s.mu.Lock()
	e, ok := s.pending[k]
	var sentAt time.Time
	if ok {
		sentAt = e.sentAt
		s.acked++
		delete(s.pending, k)
		if e.timer != nil {
			e.timer.Stop()
		}
	}
	unacked, total := len(s.pending), s.total
	now := s.cfg.Clock.Now()
	s.mu.Unlock()
	if !ok {
		s.log.Debug("push: unable to find ack entry", "key", k.String())
		return
	}
	cost := now.Sub(sentAt)
	if s.cfg.OnAck != nil {
		s.cfg.OnAck(cost)
	}
	if cost > s.cfg.AckTimeout {
		s.log.Debug("push: ack takes too long", "key", k.String(), "cost", cost)
	}
	s.log.Debug("push: received ack", "key", k.String(), "type", a.Type, "cost", cost,
		"unacked", unacked, "total", total)
}

// parseAck decodes an ack datagram the way Java's Receiver does: the text is
// trimmed (chars <= ' '), must be a JSON object, unknown fields are ignored,
// trailing content after the object is ignored (Jackson readValue), and
// lastRefTime may be a number (fractions truncated), a string holding a
// decimal long (trimmed; "" and "null" mean 0), null or absent (0). type and
// data may be any scalar; objects and arrays there are errors.
func parseAck(b []byte) (ack, error) {
	b = bytes.TrimFunc(b, func(r rune) bool { return r <= ' ' })
	if len(b) == 0 || b[0] != '{' {
		return ack{}, errNotObject
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return ack{}, fmt.Errorf("decode ack: %w", err)
	}
	var a ack
	for _, f := range []string{"type", "data"} {
		raw, ok := m[f]
		if !ok {
			continue
		}
		s, err := scalarString(raw)
		if err != nil {
			return ack{}, fmt.Errorf("ack field %s: %w", f, err)
		}
		if f == "type" {
			a.Type = s
		}
	}
	if raw, ok := m["lastRefTime"]; ok {
		v, err := parseJavaLong(raw)
		if err != nil {
			return ack{}, fmt.Errorf("ack field lastRefTime: %w", err)
		}
		a.LastRefTime = v
	}
	return a, nil
}

// scalarString is Jackson's String coercion: strings as is, numbers and
// booleans as their text, null as "".
func scalarString(raw json.RawMessage) (string, error) {
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case '{', '[':
		return "", errors.New("not a scalar")
	case 'n':
		return "", nil
	default:
		return string(raw), nil
	}
}

// parseJavaLong is Jackson's primitive long deserialisation with default
// features (coercion of strings and floats allowed, null → 0).
func parseJavaLong(raw json.RawMessage) (int64, error) {
	switch c := raw[0]; {
	case c == 'n':
		return 0, nil
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
		if s == "" || s == "null" {
			return 0, nil
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("not a valid long value: %q", s)
		}
		return v, nil
	case c == '-' || (c >= '0' && c <= '9'):
		txt := string(raw)
		if !strings.ContainsAny(txt, ".eE") {
			v, err := strconv.ParseInt(txt, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("numeric value %s out of range of long", txt)
			}
			return v, nil
		}
		d, err := strconv.ParseFloat(txt, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, err
		}
		if d < math.MinInt64 || d > math.MaxInt64 || math.IsInf(d, 0) {
			return 0, fmt.Errorf("numeric value %s out of range of long", txt)
		}
		if d >= math.MaxInt64 { // (double) Long.MAX_VALUE rounds to 2^63; Java's cast saturates
			return math.MaxInt64, nil
		}
		return int64(d), nil
	default:
		return 0, fmt.Errorf("cannot deserialize long from %s", raw)
	}
}
