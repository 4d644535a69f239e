// Package testlog routes slog output to t.Log, the way hashicorp/raft's
// testLoggerAdapter does: only failing tests print their logs.
package testlog

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// New returns a debug-level logger writing to t.Log until t's cleanup runs,
// and dropping lines after that (background goroutines may log while
// shutting down, and t.Log after the test ends panics). Create it before
// anything whose cleanup must still be able to log.
func New(t testing.TB) *slog.Logger {
	w := &writer{t: t}
	t.Cleanup(w.stop)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type writer struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *writer) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}
