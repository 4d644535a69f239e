// Package audit writes nacosd's audit trail: one JSON line per change a
// client asked for (config publish and delete, instance registration and
// deregistration, service, namespace, user, role and permission changes),
// saying who asked, from where, what, and what came of it. Lines go to
// <dir>/audit.<yyyy-MM-dd>.log (a new file each local day, beside the
// access log under logs/, as Java Nacos writes its config and naming trace
// logs there).
//
// Recording never blocks the request that made the change: Record puts the
// entry on a bounded queue and returns; one goroutine writes. When the
// queue is full the entry is dropped and counted, and the file says how
// many were dropped once there is room again. The line format is in
// docs/deployment.md ("Audit trail").
package audit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/internal/clock"
)

// Entry is one audited request.
type Entry struct {
	// Action names the change: config.publish, instance.register,
	// user.create, … (docs/deployment.md lists them).
	Action string
	// User is the authenticated user ("" when auth is off or the request
	// was refused before a user was known).
	User string
	// IP is the client's address as Java reads it (X-Forwarded-For, then
	// X-Real-IP, then the socket); Remote is the socket's peer.
	IP, Remote string
	// Method and Path are the request's, the path with the context path.
	Method, Path string
	// Status is the HTTP status answered; Result is "ok" (2xx), "denied"
	// (401, 403) or "failed".
	Status int
	Result string
	// Relayed marks a request another node relayed here (a write a
	// follower forwarded to the raft leader, a registration Distro sent to
	// the service's owner): the node the client reached recorded it too.
	Relayed bool
	// Target is what the change is about, as request parameters (dataId,
	// group, tenant; serviceName, ip, port; username, role, …); never a
	// password or token.
	Target []Param
}

// Param is one name/value of Entry.Target.
type Param struct{ Name, Value string }

// Config configures a Log.
type Config struct {
	// Dir is the directory of the files (created when missing).
	Dir string
	// QueueSize bounds the entries waiting to be written (default 8192).
	QueueSize int
	// FlushInterval bounds how long a written line stays buffered (1 s).
	FlushInterval time.Duration
	Clock         clock.Clock
	// Location is the time zone of the time stamps and file dates (time.Local).
	Location *time.Location
	Logger   *slog.Logger
}

// Log is the audit trail. Safe for concurrent use.
type Log struct {
	cfg     Config
	queue   chan stamped
	dropped atomic.Int64
	written atomic.Int64
	closing chan struct{}
	done    chan struct{}
	once    sync.Once

	// writer goroutine only
	day     string
	f       *os.File
	w       *bufio.Writer
	werr    error
	lastGap time.Time
}

type stamped struct {
	at time.Time
	e  Entry
}

// Open creates the directory and starts the writer. The file is opened
// with the first entry.
func Open(cfg Config) (*Log, error) {
	if cfg.Dir == "" {
		return nil, errors.New("audit: Dir is empty")
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 8192
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("audit: create %s: %w", cfg.Dir, err)
	}
	l := &Log{cfg: cfg, queue: make(chan stamped, cfg.QueueSize), closing: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l, nil
}

// Record queues e; it never blocks. The time stamp is taken now.
func (l *Log) Record(e Entry) {
	select {
	case <-l.closing:
		return
	default:
	}
	select {
	case l.queue <- stamped{l.cfg.Clock.Now(), e}:
	default:
		l.dropped.Add(1)
	}
}

// Dropped is the number of entries dropped because the queue was full.
func (l *Log) Dropped() int64 { return l.dropped.Load() }

// Written is the number of entries written.
func (l *Log) Written() int64 { return l.written.Load() }

// FileName is the file an entry stamped t goes to.
func (l *Log) FileName(t time.Time) string {
	return filepath.Join(l.cfg.Dir, "audit."+t.In(l.cfg.Location).Format("2006-01-02")+".log")
}

// Close writes what is queued, flushes and closes the file. Entries
// recorded after Close are dropped.
func (l *Log) Close() error {
	l.once.Do(func() { close(l.closing) })
	<-l.done
	if l.werr != nil {
		return fmt.Errorf("audit: %w", l.werr)
	}
	return nil
}

func (l *Log) run() {
	defer close(l.done)
	t := time.NewTicker(l.cfg.FlushInterval) // a safety net: a drained queue flushes at once
	defer t.Stop()
	var reported int64
	for {
		select {
		case s := <-l.queue:
			l.write(s)
			reported = l.gap(reported)
			// the queue drained: the lines reach the file
			if len(l.queue) == 0 {
				l.flush()
			}
		case <-t.C:
			reported = l.gap(reported)
			l.flush()
		case <-l.closing:
			for len(l.queue) > 0 {
				l.write(<-l.queue)
			}
			l.gap(reported)
			l.flush()
			if l.f != nil {
				if err := l.f.Close(); err != nil && l.werr == nil {
					l.werr = err
				}
			}
			return
		}
	}
}

// gap writes one line for entries dropped since the last report.
func (l *Log) gap(reported int64) int64 {
	n := l.dropped.Load()
	if n == reported {
		return reported
	}
	now := l.cfg.Clock.Now()
	l.writeLine(now, "audit.dropped", []slog.Attr{slog.Int64("count", n-reported),
		slog.String("reason", "the audit queue was full; the requests were served")})
	if now.Sub(l.lastGap) >= time.Minute {
		l.lastGap = now
		l.cfg.Logger.Warn("audit: entries dropped: the audit queue was full", "dropped", n-reported, "total", n)
	}
	return n
}

func (l *Log) write(s stamped) {
	e := s.e
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs, slog.String("user", e.User), slog.String("ip", e.IP))
	if e.Remote != "" && e.Remote != e.IP {
		attrs = append(attrs, slog.String("remote", e.Remote))
	}
	attrs = append(attrs, slog.String("method", e.Method), slog.String("path", e.Path),
		slog.String("result", e.Result), slog.Int("status", e.Status))
	if e.Relayed {
		attrs = append(attrs, slog.Bool("relayed", true))
	}
	if len(e.Target) > 0 {
		t := make([]any, 0, len(e.Target))
		for _, p := range e.Target {
			t = append(t, slog.String(p.Name, p.Value))
		}
		attrs = append(attrs, slog.Group("target", t...))
	}
	l.writeLine(s.at, e.Action, attrs)
	l.written.Add(1)
}

// writeLine writes {"time":…,"action":…,<attrs>} as one JSON line.
func (l *Log) writeLine(at time.Time, action string, attrs []slog.Attr) {
	if err := l.rotate(at); err != nil {
		l.fail(err)
		return
	}
	h := slog.NewJSONHandler(l.w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		switch {
		case len(groups) > 0:
			return a
		case a.Key == slog.LevelKey:
			return slog.Attr{}
		case a.Key == slog.MessageKey:
			a.Key = "action"
		case a.Key == slog.TimeKey:
			a.Value = slog.StringValue(a.Value.Time().In(l.cfg.Location).Format("2006-01-02T15:04:05.000Z07:00"))
		}
		return a
	}})
	r := slog.NewRecord(at, slog.LevelInfo, action, 0)
	r.AddAttrs(attrs...)
	if err := h.Handle(context.Background(), r); err != nil {
		l.fail(err)
	}
}

func (l *Log) rotate(now time.Time) error {
	day := now.In(l.cfg.Location).Format("2006-01-02")
	if l.f != nil && day == l.day {
		return nil
	}
	if l.f != nil {
		_ = l.w.Flush()
		_ = l.f.Close()
		l.f, l.w = nil, nil
	}
	f, err := os.OpenFile(l.FileName(now), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	l.f, l.w, l.day = f, bufio.NewWriterSize(f, 32<<10), day
	if l.werr != nil {
		l.cfg.Logger.Info("audit: the audit log is written again", "file", f.Name())
		l.werr = nil
	}
	return nil
}

func (l *Log) flush() {
	if l.w == nil {
		return
	}
	if err := l.w.Flush(); err != nil {
		l.fail(err)
	}
}

func (l *Log) fail(err error) {
	if l.werr == nil {
		l.cfg.Logger.Error("audit: writing the audit log failed; entries are being lost", "dir", l.cfg.Dir, "err", err)
	}
	l.werr = err
}
