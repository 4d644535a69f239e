package config

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// SwitchDataID is the config SwitchService loads its switches from
// (DEFAULT_GROUP, public namespace; config-v1.md §4.7).
const SwitchDataID = "com.alibaba.nacos.meta.switch"

var switchGroupKey = compat.GroupKey(SwitchDataID, compat.ConfigDefaultGroup, "")

// switches are the long-poll switches of SwitchService.
type switches struct {
	fixedPolling bool
	interval     time.Duration // fixedPollingInertval (sic)
	delay        time.Duration // fixedDelayTime; < 0: Config.LongPollDelay
}

var defaultSwitches = switches{interval: 10 * time.Second, delay: -1}

// parseSwitches reads key=value lines: '#' comments and blank lines skipped,
// lines not splitting into exactly two parts on '=' ignored, keys and values
// trimmed; bad numbers keep the default.
func parseSwitches(content string) switches {
	sw := defaultSwitches
	for _, line := range strings.Split(content, "\n") {
		line = compat.JavaTrim(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kv := compat.JavaSplit(line, "=")
		if len(kv) != 2 {
			continue
		}
		k, v := compat.JavaTrim(kv[0]), compat.JavaTrim(kv[1])
		switch k {
		case "isFixedPolling":
			sw.fixedPolling = compat.JavaParseBoolean(v)
		case "fixedPollingInertval":
			if n, err := strconv.ParseInt(v, 10, 32); err == nil {
				sw.interval = time.Duration(n) * time.Millisecond
			}
		case "fixedDelayTime":
			if n, err := strconv.ParseInt(v, 10, 32); err == nil {
				sw.delay = time.Duration(n) * time.Millisecond
			}
		}
	}
	return sw
}

// updateSwitchesLocked reloads the switches after the switch config changed
// (s.mu held).
func (s *Service) updateSwitchesLocked() {
	it := s.items[switchGroupKey]
	sw := defaultSwitches
	if it != nil && it.info != nil {
		sw = parseSwitches(it.info.Content)
	}
	s.switches.Store(&sw)
}

func (s *Service) currentSwitches() switches {
	if p := s.switches.Load(); p != nil {
		return *p
	}
	return defaultSwitches
}

// AggrDataID is the config holding the aggregation whitelist
// (AggrWhitelist, config-v1.md §1).
const AggrDataID = "com.alibaba.nacos.metadata.aggrIDs"

var aggrGroupKey = compat.GroupKey(AggrDataID, compat.ConfigDefaultGroup, "")

// parseAggr reads one glob per line ('#' lines skipped): '*' any run, '?'
// one char, everything else literal (RegexParser.regexFormat).
func parseAggr(content string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, line := range strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n") {
		line = compat.JavaTrim(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		b.WriteString("^")
		for _, r := range line {
			switch r {
			case '*':
				b.WriteString(".*")
			case '?':
				b.WriteString(".")
			default:
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		b.WriteString("$")
		if re, err := regexp.Compile(b.String()); err == nil {
			out = append(out, re)
		}
	}
	return out
}

func (s *Service) updateAggrLocked() {
	var l []*regexp.Regexp
	if it := s.items[aggrGroupKey]; it != nil && it.info != nil {
		l = parseAggr(it.info.Content)
	}
	s.aggr.Store(&l)
}

// isAggr reports whether dataID is on the aggregation whitelist.
func (s *Service) isAggr(dataID string) bool {
	p := s.aggr.Load()
	if p == nil {
		return false
	}
	for _, re := range *p {
		if re.MatchString(dataID) {
			return true
		}
	}
	return false
}
