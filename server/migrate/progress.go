package migrate

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress draws one bar per phase: redrawn in place on a terminal, a line
// every few seconds otherwise (CI logs).
type progress struct {
	w        io.Writer
	terminal bool
	every    time.Duration

	mu       sync.Mutex
	phase    string
	done     int
	total    int // 0: unknown
	lastDraw time.Time
	started  time.Time
}

func newProgress(w io.Writer, terminal bool) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w, terminal: terminal, every: 2 * time.Second}
}

// start begins a phase with its total (0 when unknown).
func (p *progress) start(phase string, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase, p.done, p.total, p.started = phase, 0, total, time.Now()
	p.lastDraw = p.started // a log gets a line after `every`, and the final one
	if p.terminal {
		p.drawLocked(true)
	}
}

// step counts n more items of the phase.
func (p *progress) step(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	p.drawLocked(false)
}

// finish ends the phase with its final count.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.total > 0 && p.done < p.total {
		p.total = p.done
	}
	p.drawLocked(true)
	if p.terminal {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) drawLocked(force bool) {
	now := time.Now()
	interval := p.every
	if p.terminal {
		interval = 100 * time.Millisecond
	}
	if !force && now.Sub(p.lastDraw) < interval {
		return
	}
	p.lastDraw = now
	const width = 30
	bar := strings.Repeat(" ", width)
	pct := ""
	if p.total > 0 {
		n := min(width, p.done*width/p.total)
		bar = strings.Repeat("=", n) + strings.Repeat(" ", width-n)
		pct = fmt.Sprintf(" %3d%%", min(100, p.done*100/p.total))
	}
	of := ""
	if p.total > 0 {
		of = fmt.Sprintf("/%d", p.total)
	}
	line := fmt.Sprintf("%-22s [%s] %d%s%s  %s", p.phase, bar, p.done, of, pct, now.Sub(p.started).Round(time.Second))
	if p.terminal {
		fmt.Fprintf(p.w, "\r%s\033[K", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}
