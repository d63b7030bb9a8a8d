package cudasynth

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// devMemInterval is the pause between two nvidia-smi queries of the GPU
// memory of compute processes during a run.
const devMemInterval = 20 * time.Millisecond

// devMemSampler records the peak GPU memory that compute processes hold
// while a program runs, read from nvidia-smi (run by the daemon, outside the
// sandbox: it is the host's tool, not generated code). The sandboxed program
// lives in its own PID namespace, so its host PID is not known here: the
// peak is over every compute process on the GPU, which is the program's own
// when runs hold the GPU alone (Config.GPUSlots 1, the default, and no other
// GPU user). It is sampled, so a peak shorter than the interval can be
// missed: the figure is a lower bound.
type devMemSampler struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	peakMiB int64
	samples int // lines with a process
	queries int // nvidia-smi runs that answered
}

// parseDevMemLine reads one "pid, used_memory" line of
// `nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits`.
func parseDevMemLine(line string) (int64, bool) {
	f := strings.Split(line, ",")
	if len(f) != 2 {
		return 0, false
	}
	mib, err := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 64)
	if err != nil || mib < 0 {
		return 0, false
	}
	return mib, true
}

// startDevMem starts sampling with nvidia-smi at smi, one query after
// another (each a whole nvidia-smi run: its output is complete when it
// exits, where a looping nvidia-smi's piped output would sit in its
// buffer); nil when smi is empty (no figure is recorded, the run goes on).
func startDevMem(ctx context.Context, smi string) *devMemSampler {
	if smi == "" {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &devMemSampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for ctx.Err() == nil {
			qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
			out, err := exec.CommandContext(qctx, smi, "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits").Output()
			qcancel()
			if err == nil {
				s.mu.Lock()
				s.queries++
				for _, line := range strings.Split(string(out), "\n") {
					if mib, ok := parseDevMemLine(line); ok {
						s.samples++
						s.peakMiB = max(s.peakMiB, mib)
					}
				}
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(devMemInterval):
			}
		}
	}()
	return s
}

// stop ends sampling and returns the peak in MiB; ok is false when no
// compute process was ever seen.
func (s *devMemSampler) stop() (peakMiB int64, ok bool) {
	if s == nil {
		return 0, false
	}
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakMiB, s.samples > 0
}
