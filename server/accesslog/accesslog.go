// Package accesslog is Tomcat's AccessLogValve as Java Nacos 1.4.8 runs it
// (server.tomcat.accesslog.*): one line per request in Tomcat's pattern
// language, written to <dir>/<prefix>.<yyyy-MM-dd><suffix>, a new file each
// local day. Unlike Tomcat it never writes a secret: the values of the
// accessToken, password and token parameters and of the Authorization and
// server identity headers are replaced by "***" wherever a pattern would
// print them. Plain Go; the HTTP layer hands it an Entry per request.
package accesslog

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nacosd/nacosd/internal/clock"
)

// Config is server.tomcat.accesslog.* with Spring Boot 2.7's defaults.
type Config struct {
	// Enabled is server.tomcat.accesslog.enabled (default false; the Java
	// distribution's conf sets it true).
	Enabled bool
	// Dir is the directory (server.tomcat.accesslog.directory, "logs"
	// below the base directory); created when missing.
	Dir string
	// Prefix and Suffix frame the file name (access_log, .log).
	Prefix, Suffix string
	// Pattern is the format ("common" by default; "combined" and Tomcat's
	// %-codes are understood).
	Pattern string
	// RedactHeaders are further request headers whose values are never
	// written (the server identity key).
	RedactHeaders []string
	// FlushInterval bounds how long a line stays buffered (1 s).
	FlushInterval time.Duration
	Clock         clock.Clock
	// Location is the time zone of %t and of the file date (time.Local).
	Location *time.Location
	Logger   *slog.Logger
}

// Entry is one finished request. The header functions are called only
// during Write.
type Entry struct {
	Start    time.Time
	Duration time.Duration
	Method   string
	// Path is the raw request path; Query the raw query string without '?'.
	Path, Query string
	Protocol    string
	Status      int
	BytesSent   int
	RemoteIP    string
	// LocalAddr is host:port of the accepting socket.
	LocalAddr string
	ReqHeader func(string) string
	// RespHeader may be nil.
	RespHeader func(string) string
}

// Log writes access log lines. Safe for concurrent use.
type Log struct {
	cfg     Config
	pattern []element
	redact  map[string]bool // lower-case header names

	mu     sync.Mutex
	day    string // date of the open file
	f      *os.File
	w      *bufio.Writer
	buf    []byte
	closed bool
	werr   error // last write error, logged once

	stop chan struct{}
	done chan struct{}
}

// Open checks the pattern, creates the directory and starts the flusher.
// The file itself is opened with the first line.
func Open(cfg Config) (*Log, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = time.Second
	}
	if cfg.Prefix == "" && cfg.Suffix == "" {
		cfg.Prefix, cfg.Suffix = "access_log", ".log"
	}
	if cfg.Dir == "" {
		return nil, errors.New("accesslog: Dir is empty")
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("accesslog: create %s: %w", cfg.Dir, err)
	}
	l := &Log{cfg: cfg, pattern: parsePattern(cfg.Pattern), redact: map[string]bool{"authorization": true, "accesstoken": true},
		stop: make(chan struct{}), done: make(chan struct{})}
	for _, h := range cfg.RedactHeaders {
		if h != "" {
			l.redact[lower(h)] = true
		}
	}
	go l.flusher()
	return l, nil
}

// FileName is the file a line written at t goes to.
func (l *Log) FileName(t time.Time) string {
	return filepath.Join(l.cfg.Dir, l.cfg.Prefix+"."+t.In(l.cfg.Location).Format("2006-01-02")+l.cfg.Suffix)
}

// Write formats e and appends it to the day's file (buffered).
func (l *Log) Write(e *Entry) {
	now := l.cfg.Clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.buf = l.format(l.buf[:0], e)
	l.buf = append(l.buf, '\n')
	if err := l.rotateLocked(now); err != nil {
		l.failLocked(err)
		return
	}
	if _, err := l.w.Write(l.buf); err != nil {
		l.failLocked(err)
	}
}

func (l *Log) failLocked(err error) {
	if l.werr == nil {
		l.cfg.Logger.Error("access log write failed; lines are being dropped", "dir", l.cfg.Dir, "err", err)
	}
	l.werr = err
}

// rotateLocked opens the file of now's day, closing the previous one.
func (l *Log) rotateLocked(now time.Time) error {
	day := now.In(l.cfg.Location).Format("2006-01-02")
	if l.f != nil && day == l.day {
		return nil
	}
	if l.f != nil {
		_ = l.w.Flush()
		_ = l.f.Close()
		l.f, l.w = nil, nil
	}
	f, err := os.OpenFile(l.FileName(now), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("accesslog: open: %w", err)
	}
	l.f, l.w, l.day = f, bufio.NewWriterSize(f, 32<<10), day
	if l.werr != nil {
		l.cfg.Logger.Info("access log writes again", "file", f.Name())
		l.werr = nil
	}
	return nil
}

func (l *Log) flusher() {
	defer close(l.done)
	t := time.NewTicker(l.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			_ = l.Flush()
		}
	}
}

// Flush writes buffered lines to the file.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return nil
	}
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("accesslog: flush: %w", err)
	}
	return nil
}

// Close flushes and closes the file and stops the flusher; later writes
// are dropped.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	var err error
	if l.w != nil {
		err = l.w.Flush()
		if cerr := l.f.Close(); err == nil {
			err = cerr
		}
		l.f, l.w = nil, nil
	}
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	if err != nil {
		return fmt.Errorf("accesslog: close: %w", err)
	}
	return nil
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
