package report

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/runs"
)

// Progress prints a running campaign's counts: a line per second on a terminal (rewritten in place) and a
// plain line every 10 seconds otherwise.
type Progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
	shown bool
}

// NewProgress returns a progress line on w, rewritten in place when tty.
func NewProgress(w io.Writer, tty bool) *Progress {
	return &Progress{w: w, tty: tty, start: time.Now()}
}

// Update shows c's counts n.
func (p *Progress) Update(c runs.Campaign, n runs.Counts) {
	now := time.Now()
	if !p.tty && now.Sub(p.last) < 10*time.Second && n.Queued+n.Leased > 0 {
		return
	}
	p.last = now
	el := now.Sub(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(n.Done) / el
	}
	line := fmt.Sprintf("%s  %d/%d done  pass %d  fail %d  pending %d  task faults %d  in flight %d  tokens %d  %.2f/s  %s",
		c.Name, n.Done, n.Tasks, n.Pass, n.Fail, n.Pending, n.TaskFaults, n.Leased,
		n.PromptTokens+n.CompletionTokens, rate, time.Duration(el*float64(time.Second)).Round(time.Second))
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.shown = true
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// Finish ends the line on a terminal.
func (p *Progress) Finish() {
	if p.tty && p.shown {
		fmt.Fprintln(p.w)
	}
}

// Faults tallies a campaign's model faults by class (engine.Engine's
// OnFault); safe for concurrent use. The zero value is ready.
type Faults struct {
	mu sync.Mutex
	n  map[string]int
}

// Add counts a fault of class.
func (f *Faults) Add(_ runs.Campaign, class string, _ error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[class]++
}

// Print prints the tally's line to w, nothing when there was no fault.
func (f *Faults) Print(w io.Writer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.n) > 0 {
		fmt.Fprintf(w, "model faults (failed calls, retried ones included): %s\n", TopClasses(f.n, len(f.n)))
	}
}
