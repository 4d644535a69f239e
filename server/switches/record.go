package switches

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The stored form of the switches (the CP record's payload after its
// version byte): a JSON object with "v" and one member per switchFields
// entry, named like the wire property. Floats travel as strconv 'g' text
// (keeps NaN, ±Inf and the float32 bits), IntMaps as [{"k","v"}] lists in
// their iteration order, Java nulls as JSON null. The member names and
// encodings are on disk (testdata/switches-record holds records written
// before the table existed): change them only with a new version.

// switchesRecordVersion is the version of the Marshal format.
const switchesRecordVersion = 1

type swKV struct {
	K string `json:"k"`
	V int    `json:"v"`
}

type swHealthRec struct {
	Max    int    `json:"max"`
	Min    int    `json:"min"`
	Factor string `json:"factor"` // strconv 'g' text: keeps NaN/Inf and float32 bits
}

func swFloatText(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }

func swKVs(m IntMap) *[]swKV {
	if m.Values == nil {
		return nil
	}
	l := make([]swKV, 0, len(m.Keys))
	for _, k := range m.Keys {
		l = append(l, swKV{k, m.Values[k]})
	}
	return &l
}

func swFromKVs(l *[]swKV) IntMap {
	if l == nil {
		return IntMap{}
	}
	m := emptyIntMap()
	for _, kv := range *l {
		if _, dup := m.Values[kv.K]; !dup {
			m.Keys = append(m.Keys, kv.K)
		}
		m.Values[kv.K] = kv.V
	}
	return m
}

func swHealthOut(h HealthParams) swHealthRec {
	return swHealthRec{Max: h.Max, Min: h.Min, Factor: swFloatText(h.Factor)}
}

func swHealthIn(r swHealthRec) (HealthParams, error) {
	f, err := strconv.ParseFloat(r.Factor, 32)
	if err != nil {
		return HealthParams{}, fmt.Errorf("naming: switches: factor %q: %w", r.Factor, err)
	}
	return HealthParams{Max: r.Max, Min: r.Min, Factor: float32(f)}, nil
}

// Marshal encodes the switches in nacosd's stored form (versioned JSON, not
// the wire format); Unmarshal reads it back exactly.
func (s Domain) Marshal() ([]byte, error) {
	rec := map[string]any{"v": switchesRecordVersion}
	for i := range switchFields {
		f := &switchFields[i]
		var v any
		switch p := f.ptr(&s).(type) {
		case *[]string:
			v = *p
		case *IntMap:
			v = swKVs(*p)
		case *int64:
			v = *p
		case *int:
			v = *p
		case *float32:
			v = swFloatText(*p)
		case *bool:
			v = *p
		case *HealthParams:
			if s.nulls&f.null == 0 {
				v = swHealthOut(*p)
			}
		case *string:
			if s.nulls&f.null == 0 {
				v = *p
			}
		case **string:
			v = *p
		}
		rec[f.name] = v
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("naming: marshal switches: %w", err)
	}
	return b, nil
}

// Unmarshal decodes the form written by Marshal. Members it does
// not hold keep their zero value.
func Unmarshal(b []byte) (Domain, error) {
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(b, &rec); err != nil {
		return Domain{}, fmt.Errorf("naming: unmarshal switches: %w", err)
	}
	var version int
	if err := json.Unmarshal(rec["v"], &version); err != nil || version != switchesRecordVersion {
		return Domain{}, fmt.Errorf("naming: unmarshal switches: unknown version %s", rec["v"])
	}
	var s Domain
	for i := range switchFields {
		f := &switchFields[i]
		raw, ok := rec[f.name]
		if !ok {
			continue
		}
		if err := s.unmarshalField(f, raw); err != nil {
			return Domain{}, fmt.Errorf("naming: unmarshal switches: %s: %w", f.name, err)
		}
	}
	return s, nil
}

func (s *Domain) unmarshalField(f *switchField, raw json.RawMessage) error {
	isNull := string(raw) == "null"
	switch p := f.ptr(s).(type) {
	case *IntMap:
		var l *[]swKV
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		*p = swFromKVs(l)
	case *float32:
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return err
		}
		v, err := strconv.ParseFloat(text, 32)
		if err != nil {
			return fmt.Errorf("%q: %w", text, err)
		}
		*p = float32(v)
	case *HealthParams:
		s.setNull(f.null, isNull)
		if isNull {
			return nil
		}
		var h swHealthRec
		if err := json.Unmarshal(raw, &h); err != nil {
			return err
		}
		v, err := swHealthIn(h)
		if err != nil {
			return err
		}
		*p = v
	case *string:
		s.setNull(f.null, isNull)
		if isNull {
			return nil
		}
		return json.Unmarshal(raw, p)
	default: // *[]string, *int64, *int, *bool, **string: plain JSON
		return json.Unmarshal(raw, p)
	}
	return nil
}
