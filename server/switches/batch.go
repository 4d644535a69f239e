package switches

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/nacosd/nacosd/compat"
)

// The batch entry: JacksonUtils.toObj(value, SwitchDomain.class), with
// Jackson 2's default coercions.

const switchDomainClass = "com.alibaba.nacos.naming.misc.SwitchDomain"

// switchDeserializeError is NacosDeserializationException through
// ConsoleExceptionHandler; the cause is Go's wording, not Jackson's.
func switchDeserializeError(cause string) error {
	return compat.ServerError("errCode: 101, errMsg: Nacos deserialize for class ["+switchDomainClass+"] failed.  ", cause)
}

type swField struct {
	key string
	raw json.RawMessage
}

// swObject reads a JSON object's members in order (duplicates kept: Jackson
// calls the setter again, so the last one wins).
func swObject(dec *json.Decoder) ([]swField, error) {
	var out []swField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, swField{key, raw})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, err
	}
	return out, nil
}

func swObjectOf(raw json.RawMessage) ([]swField, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	if tok == nil {
		return nil, true, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, false, fmt.Errorf("cannot deserialize object from %s", raw)
	}
	f, err := swObject(dec)
	return f, false, err
}

func swScalar(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); ok {
		return nil, fmt.Errorf("cannot deserialize value of scalar type out of %v token", d)
	}
	return tok, nil
}

// swJInt coerces a JSON value to a Java int/long the way Jackson 2 does by
// default: null → 0, floats truncated, numeric strings parsed.
func swJInt(raw json.RawMessage, bits int) (int64, error) {
	v, err := swScalar(raw)
	if err != nil {
		return 0, err
	}
	var text string
	switch x := v.(type) {
	case nil:
		return 0, nil
	case json.Number:
		text = string(x)
	case string:
		text = strings.TrimSpace(x)
		if text == "" {
			return 0, nil
		}
	default:
		return 0, fmt.Errorf("cannot coerce %v to a Java integer", x)
	}
	if n, err := strconv.ParseInt(text, 10, bits); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("cannot deserialize integer from %q", text)
	}
	lim := math.Ldexp(1, bits-1)
	if f >= lim || f < -lim {
		return 0, fmt.Errorf("numeric value (%s) out of range", text)
	}
	return int64(f), nil
}

func swJFloat(raw json.RawMessage) (float32, error) {
	v, err := swScalar(raw)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case nil:
		return 0, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 32)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, err
		}
		return float32(f), nil
	case string:
		if strings.TrimSpace(x) == "" {
			return 0, nil
		}
		f, err := swParseFloat(x)
		if err != nil {
			return 0, fmt.Errorf("cannot deserialize float from %q", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("cannot coerce %v to a Java float", v)
}

func swJBool(raw json.RawMessage) (bool, error) {
	v, err := swScalar(raw)
	if err != nil {
		return false, err
	}
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return false, fmt.Errorf("cannot coerce %s to boolean", x)
		}
		return n != 0, nil
	case string:
		switch strings.TrimSpace(x) {
		case "true", "True", "TRUE":
			return true, nil
		case "false", "False", "FALSE", "":
			return false, nil
		}
		return false, fmt.Errorf("cannot deserialize boolean from %q", x)
	}
	return false, fmt.Errorf("cannot coerce %v to boolean", v)
}

// swJString returns the text of a scalar (numbers and booleans as written);
// null reports isNull.
func swJString(raw json.RawMessage) (s string, isNull bool, err error) {
	v, err := swScalar(raw)
	if err != nil {
		return "", false, err
	}
	switch x := v.(type) {
	case nil:
		return "", true, nil
	case string:
		return x, false, nil
	case json.Number:
		return string(x), false, nil
	case bool:
		return strconv.FormatBool(x), false, nil
	}
	return "", false, fmt.Errorf("cannot deserialize string from %v", v)
}

// swJStrings reads a List/Set of strings; null elements are refused (Java
// would keep them as null).
func swJStrings(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("cannot deserialize collection out of %s", raw)
	}
	out := []string{}
	for dec.More() {
		var el json.RawMessage
		if err := dec.Decode(&el); err != nil {
			return nil, err
		}
		s, isNull, err := swJString(el)
		if err != nil {
			return nil, err
		}
		if isNull {
			return nil, fmt.Errorf("null element in string collection (not supported)")
		}
		out = append(out, s)
	}
	return out, nil
}

// swJIntMap reads a Map<String,Integer> as Jackson's LinkedHashMap.
func swJIntMap(raw json.RawMessage) (IntMap, error) {
	fields, isNull, err := swObjectOf(raw)
	if err != nil || isNull {
		return IntMap{}, err
	}
	m := emptyIntMap()
	for _, f := range fields {
		if v, _ := swScalar(f.raw); v == nil {
			return IntMap{}, fmt.Errorf("null map value for %q (not supported)", f.key)
		}
		n, err := swJInt(f.raw, 32)
		if err != nil {
			return IntMap{}, err
		}
		if _, dup := m.Values[f.key]; !dup {
			m.Keys = append(m.Keys, f.key)
		}
		m.Values[f.key] = int(n)
	}
	return m, nil
}

func swJHealth(raw json.RawMessage, def HealthParams) (HealthParams, bool, error) {
	fields, isNull, err := swObjectOf(raw)
	if err != nil || isNull {
		return HealthParams{}, isNull, err
	}
	h := def
	for _, f := range fields {
		switch f.key {
		case "max", "min":
			n, err := swJInt(f.raw, 32)
			if err != nil {
				return h, false, err
			}
			if f.key == "max" {
				h.Max = int(n)
			} else {
				h.Min = int(n)
			}
		case "factor":
			if h.Factor, err = swJFloat(f.raw); err != nil {
				return h, false, err
			}
		}
	}
	return h, false, nil
}

// parseBatchSwitches reads a whole SwitchDomain JSON like Nacos' JacksonUtils
// (unknown properties ignored, missing ones keep their defaults, trailing
// text ignored).
func parseBatchSwitches(value string) (Domain, error) {
	if msg := compat.JacksonSyntaxError(value); msg != "" {
		return Domain{}, switchDeserializeError(msg)
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	tok, err := dec.Token()
	if err == io.EOF {
		return Domain{}, switchDeserializeError("No content to map due to end-of-input")
	}
	if err != nil {
		return Domain{}, switchDeserializeError(err.Error())
	}
	if tok == nil { // JSON null: dom.setEnableStandalone → NullPointerException
		return Domain{}, compat.ServerError("")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Domain{}, switchDeserializeError(fmt.Sprintf("cannot construct SwitchDomain from %v", tok))
	}
	fields, err := swObject(dec)
	if err != nil {
		return Domain{}, switchDeserializeError(err.Error())
	}
	d := Default()
	nulled := map[string]bool{} // nullFails fields the JSON set to null (last value wins)
	for _, m := range fields {
		f := switchByName[m.key]
		if f == nil {
			continue
		}
		isNull, err := d.setJSON(f, m.raw)
		if err != nil {
			return Domain{}, switchDeserializeError(fmt.Sprintf("%s: %v", m.key, err))
		}
		if f.nullFails {
			nulled[f.name] = isNull
		}
	}
	for _, isNull := range nulled {
		if isNull { // getHttpHealthParams().getMin() on null
			return Domain{}, compat.ServerError("")
		}
	}
	return d, nil
}

// setJSON sets field f from a batch member (Jackson's setter for it) and
// reports whether the value was null.
func (d *Domain) setJSON(f *switchField, raw json.RawMessage) (isNull bool, err error) {
	switch p := f.ptr(d).(type) {
	case *[]string:
		var l []string
		if l, err = swJStrings(raw); err != nil {
			return false, err
		}
		if l != nil && f.set { // a HashSet: duplicates dropped, hash order
			seen := map[string]bool{}
			uniq := []string{}
			for _, s := range l {
				if !seen[s] {
					seen[s] = true
					uniq = append(uniq, s)
				}
			}
			l = compat.JavaHashOrderStrings(uniq, 16)
		}
		*p = l
		return l == nil, nil
	case *IntMap:
		*p, err = swJIntMap(raw)
		return p.Values == nil, err
	case *int64:
		*p, err = swJInt(raw, 64)
	case *int:
		var n int64
		n, err = swJInt(raw, 32)
		*p = int(n)
	case *float32:
		*p, err = swJFloat(raw)
	case *bool:
		*p, err = swJBool(raw)
	case *HealthParams:
		*p, isNull, err = swJHealth(raw, f.def)
		d.setNull(f.null, isNull)
	case *string:
		*p, isNull, err = swJString(raw)
		d.setNull(f.null, isNull)
	case **string:
		var v string
		v, isNull, err = swJString(raw)
		*p = nil
		if !isNull {
			*p = &v
		}
	}
	return isNull, err
}

// setNull sets or clears a Java-null bit (no-op for bit 0).
func (d *Domain) setNull(bit uint8, isNull bool) {
	if isNull {
		d.nulls |= bit
	} else {
		d.nulls &^= bit
	}
}
