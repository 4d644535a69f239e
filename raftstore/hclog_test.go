package raftstore

import (
	"bytes"
	"log/slog"
	"strings"
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
		`level=ERROR msg="odd args" logger=raft !BADKEY=dangling`,
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
