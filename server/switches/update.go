package switches

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/nacosd/nacosd/compat"
)

// Switch entry names (SwitchEntry.java).
const (
	EntryBatch                    = "batch"
	EntryDistroThreshold          = "distroThreshold"
	EntryClientBeatInterval       = "clientBeatInterval"
	EntryPushVersion              = "pushVersion"
	EntryPushCacheMillis          = "pushCacheMillis"
	EntryDefaultCacheMillis       = "defaultCacheMillis"
	EntryMasters                  = "masters"
	EntryDistro                   = "distro"
	EntryCheck                    = "check"
	EntryPushEnabled              = "pushEnabled"
	EntryServiceStatusSyncPeriod  = "serviceStatusSynchronizationPeriodMillis"
	EntryServerStatusSyncPeriod   = "serverStatusSynchronizationPeriodMillis"
	EntryHealthCheckTimes         = "healthCheckTimes"
	EntryDisableAddIP             = "disableAddIP"
	EntrySendBeatOnly             = "sendBeatOnly"
	EntryLimitedURLMap            = "limitedUrlMap"
	EntryEnableStandalone         = "enableStandalone"
	EntryOverriddenServerStatus   = "overriddenServerStatus"
	EntryDefaultInstanceEphemeral = "defaultInstanceEphemeral"
	EntryDistroServerExpiredMilli = "distroServerExpiredMillis"
	EntryLightBeatEnabled         = "lightBeatEnabled"
	EntryAutoChangeHealthCheck    = "autoChangeHealthCheckEnabled"
)

var swVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// Apply is SwitchManager.update(entry, value) on s (naming-v1.md §9.2):
// validation failures are 400 *compat.Error with Java's messages, Java
// parse failures NumberFormatException texts; s is changed only on success.
// Unknown entries are a no-op. Quirks kept on purpose: enableStandalone is set
// only when value is empty (to false); batch keeps the current
// enableStandalone; pushVersion without ':' is Java 8's
// ArrayIndexOutOfBoundsException (500 "caused: 1;").
func (s *Domain) Apply(entry, value string) error {
	switch entry {
	case EntryBatch:
		return s.applyBatch(value)
	case EntryPushVersion:
		return s.applyPushVersion(value)
	}
	if f := switchByEntry[entry]; f != nil {
		return f.update(s, f, value)
	}
	return nil
}

func (s *Domain) applyBatch(value string) error {
	dom, err := parseBatchSwitches(value)
	if err != nil {
		return err
	}
	dom.EnableStandalone = s.EnableStandalone
	h, t := dom.HTTPHealthParams, dom.TCPHealthParams
	if h.Min < 500 || t.Min < 500 {
		return compat.IllegalArgument("min check time for http or tcp is too small(<500)")
	}
	if h.Max < 3000 || t.Max < 3000 {
		return compat.IllegalArgument("max check time for http or tcp is too small(<3000)")
	}
	if h.Factor < 0 || h.Factor > 1 || t.Factor < 0 || t.Factor > 1 {
		return compat.IllegalArgument("malformed factor")
	}
	*s = dom
	return nil
}

func (s *Domain) applyPushVersion(value string) error {
	parts := compat.JavaSplit(value, ":")
	if len(parts) < 2 {
		// value.split(":")[1] on a shorter array (Java 8 message).
		return compat.ServerError(strconv.Itoa(len(parts)))
	}
	typ, version := parts[0], parts[1]
	if !swVersionRE.MatchString(version) {
		return compat.IllegalArgument(`illegal version, must match: [0-9]+\.[0-9]+\.[0-9]+`)
	}
	name, ok := pushVersionFields[typ]
	if !ok {
		return compat.IllegalArgument("unsupported client type: " + typ)
	}
	f := switchByName[name]
	*f.ptr(s).(*string) = version
	s.nulls &^= f.null
	return nil
}

// pushVersionFields are the fields pushVersion sets, by client type (not
// csharp: Java's switch forgot it).
var pushVersionFields = map[string]string{"java": "pushJavaVersion", "python": "pushPythonVersion", "c": "pushCVersion", "go": "pushGoVersion"}

// The per-field updaters of switchFields.

// updateBool is Boolean.parseBoolean(value).
func updateBool(s *Domain, f *switchField, value string) error {
	*f.ptr(s).(*bool) = compat.JavaParseBoolean(value)
	return nil
}

// updateCommonsBool is BooleanUtils.toBoolean(value).
func updateCommonsBool(s *Domain, f *switchField, value string) error {
	*f.ptr(s).(*bool) = compat.CommonsToBoolean(value)
	return nil
}

// updateLong is Long.parseLong(value), refused with msg below min (no
// bound when msg is empty).
func updateLong(min int64, msg string) func(*Domain, *switchField, string) error {
	return func(s *Domain, f *switchField, value string) error {
		return swSetLong(f.ptr(s).(*int64), value, min, msg)
	}
}

// updateInt is Integer.parseInt(value).
func updateInt(s *Domain, f *switchField, value string) error {
	n, err := swParseInt(value, 32)
	if err != nil {
		return err
	}
	*f.ptr(s).(*int) = int(n)
	return nil
}

func updateMasters(s *Domain, f *switchField, value string) error {
	*f.ptr(s).(*[]string) = compat.JavaSplit(value, ",")
	return nil
}

func updateDistroThreshold(s *Domain, f *switchField, value string) error {
	v, err := swParseFloat(value)
	if err != nil {
		return err
	}
	if v <= 0 {
		return compat.IllegalArgument("distroThreshold can not be zero or negative: " + compat.FormatJavaFloat(v))
	}
	*f.ptr(s).(*float32) = v
	return nil
}

func updateLimitedURLMap(s *Domain, f *switchField, value string) error {
	if value == "" {
		return nil
	}
	m, err := parseLimitedURLs(value)
	if err != nil {
		return err
	}
	*f.ptr(s).(*IntMap) = m
	return nil
}

// updateEnableStandalone: SwitchManager tests !isNotEmpty(value), so only
// an empty value gets here, and Boolean.parseBoolean("") is false.
func updateEnableStandalone(s *Domain, f *switchField, value string) error {
	if value == "" {
		*f.ptr(s).(*bool) = false
	}
	return nil
}

// updateOverriddenServerStatus: "null" clears the override (to "").
func updateOverriddenServerStatus(s *Domain, f *switchField, value string) error {
	v := value
	if v == "null" {
		v = ""
	}
	*f.ptr(s).(**string) = &v
	return nil
}

// parseLimitedURLs is the limitedUrlMap entry: "url:status,url2:status" into a
// new HashMap(16).
func parseLimitedURLs(value string) (IntMap, error) {
	m := IntMap{Values: map[string]int{}}
	var order []string
	for _, each := range compat.JavaSplit(value, ",") {
		parts := compat.JavaSplit(each, ":")
		if len(parts) < 2 {
			return IntMap{}, compat.IllegalArgument("invalid input for limited urls")
		}
		url := parts[0]
		if url == "" {
			return IntMap{}, compat.IllegalArgument("url can not be empty, url: " + url)
		}
		code, err := swParseInt(parts[1], 32)
		if err != nil {
			return IntMap{}, err
		}
		if code <= 0 {
			return IntMap{}, compat.IllegalArgument("illegal normal status code: " + strconv.FormatInt(code, 10))
		}
		if _, dup := m.Values[url]; !dup {
			order = append(order, url)
		}
		m.Values[url] = int(code)
	}
	m.Keys = compat.JavaHashOrderStrings(order, 16)
	return m, nil
}

func swSetLong(dst *int64, value string, min int64, msg string) error {
	n, err := swParseInt(value, 64)
	if err != nil {
		return err
	}
	if msg != "" && n < min {
		return compat.IllegalArgument(msg)
	}
	*dst = n
	return nil
}

// swParseInt is Long.parseLong / Integer.parseInt (bits 64 / 32).
func swParseInt(s string, bits int) (int64, error) {
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, compat.NumberFormat(s)
	}
	return n, nil
}

var swFloatRE = regexp.MustCompile(`^[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)$`)

// swParseFloat is Float.parseFloat: Java trim, Java's grammar (no inf/nan
// spellings, no underscores, optional f/d suffix), rounding straight to float.
func swParseFloat(s string) (float32, error) {
	t := compat.JavaTrim(s)
	if t == "" {
		return 0, compat.IllegalArgument("empty String")
	}
	if !swFloatRE.MatchString(t) {
		return 0, compat.NumberFormat(t)
	}
	if strings.HasSuffix(t, "NaN") { // Go refuses a signed NaN, Java does not
		return float32(math.NaN()), nil
	}
	if !strings.HasSuffix(t, "Infinity") && strings.ContainsAny(t[len(t)-1:], "fFdD") {
		t = t[:len(t)-1]
	}
	f, err := strconv.ParseFloat(t, 32)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, compat.NumberFormat(t)
	}
	return float32(f), nil
}
