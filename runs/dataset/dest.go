package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/runs"
)

// Dest is where kiln export writes: a folder (Dir), a file (File), or
// stdout (both empty).
type Dest struct{ Dir, File string }

// ParseDest reads kiln export's -o: "-" is stdout; an existing folder, a
// name ending in / or, for a trainer format, a name not ending in .jsonl is
// a folder; anything else a file.
func ParseDest(out string, f Format) (Dest, error) {
	if out == "-" {
		return Dest{}, nil
	}
	if out == "" {
		return Dest{}, errors.New("empty path")
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return Dest{Dir: out}, nil
	}
	if strings.HasSuffix(out, "/") || (f != Raw && !strings.HasSuffix(out, ".jsonl")) {
		return Dest{Dir: out}, nil
	}
	return Dest{File: out}, nil
}

// Where names the destination in messages: the folder, the file or
// "stdout".
func (d Dest) Where() string {
	switch {
	case d.Dir != "":
		return d.Dir
	case d.File != "":
		return d.File
	}
	return "stdout"
}

// Write runs write on the export's stream: stdout, or for a file a
// temporary file renamed into place once write succeeds, so that a
// half-written export never looks like a whole one. A folder export
// (d.Dir) writes its own files: write gets stdout, unused.
func (d Dest) Write(stdout io.Writer, write func(io.Writer) error) error {
	if d.File == "" {
		if err := write(stdout); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(d.File), ".kiln-export-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("export: %w", err)
	}
	return closeAndRename(tmp, d.File)
}

func closeAndRename(f *os.File, path string) error {
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("export: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// WriteAll writes a campaign's records as st.Export gives them (kiln export
// --all: every judged result, uncurated) to d, a file or stdout, and returns
// how many it wrote.
func WriteAll(ctx context.Context, st *runs.Store, campaignID string, d Dest, stdout io.Writer, opt runs.ExportOptions) (int, error) {
	var n int
	err := d.Write(stdout, func(w io.Writer) error {
		var err error
		n, err = st.Export(ctx, campaignID, w, opt)
		return err
	})
	return n, err
}

// WriteSummary prints what an export wrote to d, and what it left out, as
// kiln export does.
func WriteSummary(w io.Writer, s *Summary, d Dest) {
	fmt.Fprintf(w, "kiln: exported %d samples of campaign %s to %s (%s", s.Written, s.CampaignID, d.Where(), s.Format)
	if d.Dir != "" {
		fmt.Fprintf(w, "; train %d, validation %d", s.Train, s.Validation)
	}
	fmt.Fprintf(w, ") in %.1fs\n", s.Seconds)
	fmt.Fprintf(w, "kiln: %d results, %d eligible; left out: %s\n", s.Results, s.Eligible, countsLine(s.Excluded))
	if len(s.Benchmarks) > 0 {
		fmt.Fprintf(w, "kiln: contamination: %d samples match a benchmark (%s)\n", s.Contaminated,
			map[bool]string{true: "kept, flagged", false: "left out"}[s.Settings.KeepContaminated])
	}
}

// countsLine lists m's counts, largest first (ties by name): "none" when
// empty.
func countsLine(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || (m[keys[i]] == m[keys[j]] && keys[i] < keys[j]) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// Progress shows an export's progress (Options.Progress) on a terminal,
// rewritten in place at most five times a second; elsewhere it shows
// nothing.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	last  time.Time
	shown bool
}

// NewProgress returns a progress line on w, shown only when tty.
func NewProgress(w io.Writer, tty bool) *Progress {
	return &Progress{w: w, tty: tty}
}

// Update is an Options.Progress: stage has done of total steps.
func (p *Progress) Update(stage string, done, total int) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 200*time.Millisecond && done != total {
		return
	}
	p.last = time.Now()
	line := fmt.Sprintf("export: %s %d", stage, done)
	if total > 0 {
		const width = 30
		fill := min(width, done*width/total)
		line = fmt.Sprintf("export: %-7s [%s%s] %d/%d", stage, strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total)
	}
	fmt.Fprintf(p.w, "\r%-70s", line)
	p.shown = true
}

// Finish clears the progress line, if one was shown.
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintf(p.w, "\r%-70s\r", "")
	}
}
