package raftstore

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestHclogAdapter(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	sl := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var l hclog.Logger = newHclogAdapter(sl, "raft")

	l.Trace("trace dropped by the handler")
	l.Debug("debug msg", "k", 1)
	l.Named("transport").With("peer", "p1").Warn("warn msg", "err", "boom")
	l.Error("odd args", "dangling")
	l.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Error}).Print("std msg")

	out := buf.String()
	for _, want := range []string{
		`level=DEBUG msg="debug msg" logger=raft k=1`,
		`level=WARN msg="warn msg" peer=p1 logger=raft.transport err=boom`,
		`level=ERROR msg="odd args" logger=raft EXTRA_VALUE_AT_END=dangling`,
		`level=ERROR msg="std msg" logger=raft`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "trace dropped") {
		t.Errorf("trace passed a Debug handler:\n%s", out)
	}
	if l.IsTrace() || !l.IsDebug() || !l.IsError() {
		t.Errorf("IsTrace=%v IsDebug=%v IsError=%v", l.IsTrace(), l.IsDebug(), l.IsError())
	}
	l.SetLevel(hclog.Warn)
	if l.IsInfo() || l.GetLevel() != hclog.Warn {
		t.Errorf("SetLevel(Warn): IsInfo=%v level=%v", l.IsInfo(), l.GetLevel())
	}
	buf.Reset()
	l.Info("filtered")
	if buf.Len() != 0 {
		t.Errorf("Info after SetLevel(Warn) logged %q", buf.String())
	}
	if got := l.Named("a").Named("b").Name(); got != "raft.a.b" {
		t.Errorf("Name = %q", got)
	}
	if got := l.With("x", 1).ImpliedArgs(); len(got) != 2 {
		t.Errorf("ImpliedArgs = %v", got)
	}
}

// TestHclogAdapterValues: hclog's value types are rendered as hclog renders
// them, not as the structs slog would print (raft logs its configuration
// with hclog.Fmt("%+v", servers), which came out as servers="[%+v [...]]").
func TestHclogAdapterValues(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	sl := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l := newHclogAdapter(sl, "raft")
	type server struct{ ID, Address string }
	l.Info("initial configuration", "index", 1, "servers", hclog.Fmt("%+v", []server{{"a", "127.0.0.1:7848"}}))
	l.Info("numbers", "hex", hclog.Hex(255), "oct", hclog.Octal(8), "bin", hclog.Binary(5), "q", hclog.Quote(`a"b`))
	l.With("pct", hclog.Fmt("%0.2f%%", 12.5)).Info("implied")
	l.Info("key types", 7, "seven")
	l.Error("odd args", "dangling")
	out := buf.String()
	for _, want := range []string{
		`msg="initial configuration" logger=raft index=1 servers="[{ID:a Address:127.0.0.1:7848}]"`,
		`hex=0xff oct=010 bin=0b101 q="a\"b"`,
		`pct=12.50% logger=raft`,
		`msg="key types" logger=raft 7=seven`,
		`msg="odd args" logger=raft EXTRA_VALUE_AT_END=dangling`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "%+v") || strings.Contains(out, "BADKEY") {
		t.Errorf("unformatted hclog values:\n%s", out)
	}
}

// TestRaftStartLogFormatted: a real store's start-up lines (raft's
// "initial configuration" among them) carry no unformatted hclog value.
func TestRaftStartLogFormatted(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := mustOpen(t, testConfig(t, l, t.TempDir()))
	_ = s.Close()
	out := buf.String()
	if !strings.Contains(out, "initial configuration") {
		t.Fatalf("raft did not log its configuration:\n%s", out)
	}
	if strings.Contains(out, "%+v") || strings.Contains(out, "%#v") || strings.Contains(out, "BADKEY") {
		t.Errorf("unformatted hclog values:\n%s", out)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
