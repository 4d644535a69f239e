package push

import (
	"github.com/nacosd/nacosd/compat"

	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// State is the snapshot behind GET /v1/ns/operator/push/state (§3.8).
type State struct {
	// Succeed is Total - Failed.
	Succeed int64
	// Total counts distinct pushes (ack keys) ever sent (Java totalPush).
	Total int64
	// Failed is the number of un-acked pushes plus those given up or failed
	// to send (Java getFailedPushCount).
	Failed int64
	// Ratio is Java's float (Total-Failed)/Total, 0 when Total is 0.
	Ratio float64
	// Data holds, when requested, each un-acked datagram decoded as UTF-8
	// (gzipped ones come out mostly as U+FFFD, as in Java).
	Data []string
	// Reset echoes the reset parameter (Java puts it into the body).
	Reset bool
}

// State returns the push counters; with detail the un-acked datagrams too
// (in Java ackMap iteration order). With reset the un-acked map is cleared afterwards
// (Java resetPushState), which stops their retransmission; the give-up
// counter and total are kept.
func (s *Service) State(detail, reset bool) State {
	s.mu.Lock()
	defer s.mu.Unlock()
	failed := int64(len(s.pending)) + s.failed
	st := State{Succeed: s.total - failed, Total: s.total, Failed: failed, Reset: reset}
	if s.total > 0 {
		st.Ratio = float64((float32(s.total) - float32(failed)) / float32(s.total))
	}
	if detail {
		// Java iterates ackMap (a default ConcurrentHashMap) by bin of the
		// key string's hash, then by key insertion.
		type item struct {
			bin int
			e   *ackEntry
		}
		n := chmTableSize(16, s.pendingPeak)
		items := make([]item, 0, len(s.pending))
		for k, e := range s.pending {
			items = append(items, item{bin: chmBin(compat.JavaStringHash(k.String()), n), e: e})
		}
		sort.Slice(items, func(i, j int) bool {
			if items[i].bin != items[j].bin {
				return items[i].bin < items[j].bin
			}
			return items[i].e.pseq < items[j].e.pseq
		})
		st.Data = make([]string, 0, len(items))
		for _, it := range items {
			st.Data = append(st.Data, javaUTF8(it.e.data))
		}
	}
	if reset {
		for k, e := range s.pending {
			if e.timer != nil {
				e.timer.Stop()
			}
			delete(s.pending, k)
		}
	}
	return st
}

// RenderState is the exact body of GET /v1/ns/operator/push/state:
// {"succeed":N,"total":N,"ratio":R,"data":[...],"reset":B}, with "data" only
// when detail is true and "ratio" the int 0 when total is 0, otherwise a
// Java float (OperatorController.pushState, §3.8).
func (s *Service) RenderState(st State, detail bool) []byte {
	b := make([]byte, 0, 96)
	b = append(b, `{"succeed":`...)
	b = strconv.AppendInt(b, st.Succeed, 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, st.Total, 10)
	b = append(b, `,"ratio":`...)
	if st.Total > 0 {
		b = append(b, javaFloat(float32(st.Ratio))...)
	} else {
		b = append(b, '0')
	}
	if detail {
		b = append(b, `,"data":[`...)
		for i, d := range st.Data {
			if i > 0 {
				b = append(b, ',')
			}
			b = compat.AppendJavaString(b, d)
		}
		b = append(b, ']')
	}
	b = append(b, `,"reset":`...)
	b = strconv.AppendBool(b, st.Reset)
	return append(b, '}')
}

// javaUTF8 is new String(bytes, UTF_8): each invalid byte becomes U+FFFD.
func javaUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		sb.WriteRune(r) // RuneError for an invalid byte
		b = b[n:]
	}
	return sb.String()
}

// javaFloat formats f as Java Float.toString (which Jackson uses for a
// FloatNode): shortest digits; plain notation with at least one fraction
// digit for 1e-3 <= |f| < 1e7, otherwise "d.dddE[-]n".
func javaFloat(f float32) string {
	switch {
	case math.IsNaN(float64(f)):
		return "NaN"
	case math.IsInf(float64(f), 1):
		return "Infinity"
	case math.IsInf(float64(f), -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(float64(f)) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := f
	if abs < 0 {
		abs = -abs
	}
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(float64(f), 'f', -1, 32)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(float64(f), 'e', -1, 32) // e.g. 1.5e-04, 1e+08
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
