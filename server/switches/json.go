package switches

import (
	"math"

	"github.com/nacosd/nacosd/compat"
)

// appendJavaFloat writes a Java float as Jackson does by default:
// QUOTE_NON_NUMERIC_NUMBERS is on, so NaN and ±Infinity are JSON strings.
func appendJavaFloat(w *compat.JSON, f float32) {
	if x := float64(f); math.IsNaN(x) || math.IsInf(x, 0) {
		w.Str(compat.FormatJavaFloat(f))
		return
	}
	w.Float(f)
}

func appendHealth(w *compat.JSON, h HealthParams) {
	w.BeginObject().
		Key("max").Int(int64(h.Max)).
		Key("min").Int(int64(h.Min)).
		Key("factor")
	appendJavaFloat(w, h.Factor)
	w.EndObject()
}

func appendIntMap(w *compat.JSON, m IntMap) {
	if m.Values == nil {
		w.Null()
		return
	}
	w.BeginObject()
	for _, k := range m.Keys {
		w.Key(k).Int(int64(m.Values[k]))
	}
	w.EndObject()
}

func appendNullableList(w *compat.JSON, l []string) {
	if l == nil {
		w.Null()
		return
	}
	w.StrList(l)
}

func (s *Domain) appendNullableStr(w *compat.JSON, v string, bit uint8) {
	if s.nulls&bit != 0 {
		w.Null()
		return
	}
	w.Str(v)
}

// JSON is the body of GET /v1/ns/operator/switches: Spring's mapper writes
// nulls, fields in declaration order, then the getter-only name and checksum
// (naming-v1.md §9.1).
func (s *Domain) JSON() []byte {
	w := compat.NewJSON(1400)
	w.BeginObject()
	for i := range switchFields {
		f := &switchFields[i]
		w.Key(f.name)
		s.appendField(w, f)
	}
	w.Key("name").Str(DomainName)
	w.Key("checksum").Null()
	w.EndObject()
	return w.Bytes()
}

func (s *Domain) appendField(w *compat.JSON, f *switchField) {
	switch p := f.ptr(s).(type) {
	case *[]string:
		appendNullableList(w, *p)
	case *IntMap:
		appendIntMap(w, *p)
	case *int64:
		w.Int(*p)
	case *int:
		w.Int(int64(*p))
	case *float32:
		appendJavaFloat(w, *p)
	case *bool:
		w.Bool(*p)
	case *HealthParams:
		if s.nulls&f.null != 0 {
			w.Null()
		} else {
			appendHealth(w, *p)
		}
	case *string:
		s.appendNullableStr(w, *p, f.null)
	case **string:
		if *p == nil {
			w.Null()
		} else {
			w.Str(**p)
		}
	}
}
