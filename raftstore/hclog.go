package raftstore

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter routes hashicorp/raft's hclog output to a *slog.Logger.
// hclog levels map to slog levels (Trace is Debug-4); the adapter's own
// level (SetLevel) filters on top of the slog handler's.
type hclogAdapter struct {
	base    *slog.Logger // with implied args, without the name
	l       *slog.Logger // base plus the name
	name    string
	implied []any
	level   *atomic.Int32 // hclog.Level, shared by derived loggers
}

var _ hclog.Logger = (*hclogAdapter)(nil)

func newHclogAdapter(l *slog.Logger, name string) *hclogAdapter {
	lv := new(atomic.Int32)
	lv.Store(int32(hclog.Trace))
	return &hclogAdapter{base: l, l: l.With("logger", name), name: name, level: lv}
}

func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace:
		return slog.LevelDebug - 4
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

func (a *hclogAdapter) enabled(level hclog.Level) bool {
	if level == hclog.Off || level < hclog.Level(a.level.Load()) {
		return false
	}
	return a.l.Enabled(context.Background(), slogLevel(level))
}

func (a *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	switch {
	case level == hclog.Warn && strings.HasPrefix(msg, "heartbeat timeout reached, starting election"):
		level = hclog.Info // every start of a node begins this way; not worth a warning
	case level == hclog.Error && msg == "failed to decode incoming command":
		// something that does not speak raft dialled the raft port: in a
		// mixed cluster, a Java member's JRaft (which also uses port-1000),
		// every second; not this node's error
		level = hclog.Debug
	}
	if !a.enabled(level) {
		return
	}
	a.l.Log(context.Background(), slogLevel(level), msg, slogArgs(args)...)
}

// slogArgs turns hclog's key/value arguments into slog's, rendering the
// values hclog gives a meaning (hclog.Fmt's Format, Hex, Octal, Binary,
// Quote, a captured stack trace) as hclog's own formatter does; slog
// would print Format as the slice it is ("[%+v [...]]"). Keys that are
// not strings are formatted, and a value without a key gets hclog's
// EXTRA_VALUE_AT_END rather than slog's !BADKEY.
func slogArgs(args []any) []any {
	if len(args) == 0 {
		return nil
	}
	out := make([]any, 0, len(args)+1)
	if len(args)%2 == 0 {
		return pairs(out, args)
	}
	last := args[len(args)-1]
	out = pairs(out, args[:len(args)-1])
	if st, ok := last.(hclog.CapturedStacktrace); ok {
		return append(out, "stacktrace", string(st))
	}
	return append(out, hclog.MissingKey, last)
}

func pairs(out, args []any) []any {
	for i := 0; i+1 < len(args); i += 2 {
		var key string
		switch k := args[i].(type) {
		case string:
			key = k
		default:
			key = fmt.Sprint(k)
		}
		out = append(out, key, hclogValue(args[i+1]))
	}
	return out
}

func hclogValue(v any) any {
	switch v := v.(type) {
	case hclog.Format:
		if len(v) > 0 {
			if f, ok := v[0].(string); ok {
				return fmt.Sprintf(f, v[1:]...)
			}
		}
		return fmt.Sprint([]any(v)...)
	case hclog.Hex:
		return "0x" + strconv.FormatUint(uint64(v), 16)
	case hclog.Octal:
		return "0" + strconv.FormatUint(uint64(v), 8)
	case hclog.Binary:
		return "0b" + strconv.FormatUint(uint64(v), 2)
	case hclog.Quote:
		return string(v) // the handler quotes what needs quoting
	case hclog.CapturedStacktrace:
		return string(v)
	}
	return v
}

func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }
func (a *hclogAdapter) Info(msg string, args ...any)  { a.Log(hclog.Info, msg, args...) }
func (a *hclogAdapter) Warn(msg string, args ...any)  { a.Log(hclog.Warn, msg, args...) }
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *hclogAdapter) IsTrace() bool { return a.enabled(hclog.Trace) }
func (a *hclogAdapter) IsDebug() bool { return a.enabled(hclog.Debug) }
func (a *hclogAdapter) IsInfo() bool  { return a.enabled(hclog.Info) }
func (a *hclogAdapter) IsWarn() bool  { return a.enabled(hclog.Warn) }
func (a *hclogAdapter) IsError() bool { return a.enabled(hclog.Error) }

func (a *hclogAdapter) ImpliedArgs() []any { return a.implied }

func (a *hclogAdapter) With(args ...any) hclog.Logger {
	c := *a
	c.base = a.base.With(slogArgs(args)...)
	c.l = c.base.With("logger", a.name)
	c.implied = append(a.implied[:len(a.implied):len(a.implied)], args...)
	return &c
}

func (a *hclogAdapter) Name() string { return a.name }

func (a *hclogAdapter) Named(name string) hclog.Logger {
	if a.name != "" {
		name = a.name + "." + name
	}
	return a.ResetNamed(name)
}

func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *a
	c.name = name
	c.l = a.base.With("logger", name)
	return &c
}

func (a *hclogAdapter) SetLevel(level hclog.Level) { a.level.Store(int32(level)) }
func (a *hclogAdapter) GetLevel() hclog.Level      { return hclog.Level(a.level.Load()) }

func (a *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	level := slog.LevelInfo
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = slogLevel(opts.ForceLevel)
	}
	return slog.NewLogLogger(a.l.Handler(), level)
}

func (a *hclogAdapter) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	return a.StandardLogger(opts).Writer()
}
