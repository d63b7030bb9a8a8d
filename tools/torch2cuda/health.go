package torch2cuda

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
)

// GPU health. After a batch on GPU g ends badly (gpuFault), the runner
// probes g ("judge.py probe --devices g" in a sandbox with the GPU, within
// Config.ProbeTimeout). A GPU that fails is quarantined: its slots take no
// more work, and the batch's evaluations without a real verdict go back
// to the front of the queue (at most maxRequeues times each). When work
// waits and Config.ReprobeInterval has passed, a free slot of a
// quarantined GPU probes it again, and a healthy GPU returns to service.
// While every GPU is quarantined and none is being probed, the queue fails
// at once with ErrGPUQuarantined.

// ErrGPUQuarantined matches (errors.Is) the errors of evaluations that
// could not be judged because GPUs failed their health probes.
var ErrGPUQuarantined = errors.New("GPU quarantined")

// quarantineError is an error that matches ErrGPUQuarantined.
type quarantineError string

func (e quarantineError) Error() string        { return string(e) }
func (e quarantineError) Is(target error) bool { return target == ErrGPUQuarantined }

// maxRequeues bounds how often an evaluation is put back after its GPU
// failed a probe: a candidate that breaks GPUs costs at most 1+maxRequeues
// of them (until their next probe).
const maxRequeues = 2

// gpuState is one GPU's health, guarded by batcher.mu.
type gpuState struct {
	down    string    // why the GPU is quarantined; "": in service
	next    time.Time // when a quarantined GPU may be probed again
	probing bool      // a free slot of the quarantined GPU is probing it
}

// scheduleLocked starts up to n runners on free slots of GPUs in service,
// starts the due probes of quarantined GPUs, and fails the queue when
// every GPU is quarantined and none is being probed. Only while work
// waits.
func (b *batcher) scheduleLocked(n int) {
	defer b.reportLocked()
	if len(b.queue) == 0 {
		return
	}
	now := time.Now()
	for g := range b.gpus {
		st := &b.gpus[g]
		if st.down != "" && !st.probing && !now.Before(st.next) {
			if slot, ok := b.takeSlotLocked(g); ok {
				st.probing = true
				go b.recheck(slot)
			}
		}
	}
	for ; n > 0; n-- {
		slot, ok := b.takeSlotLocked(-1)
		if !ok {
			break
		}
		go b.run(slot)
	}
	var why []string
	for _, st := range b.gpus {
		if st.down == "" || st.probing {
			return
		}
		next := "next probe when work comes"
		if d := st.next.Sub(now); d > 0 {
			next = "next probe in " + d.Round(time.Second).String()
		}
		why = append(why, st.down+" ("+next+")")
	}
	err := quarantineError(fmt.Sprintf("torch2cuda judge: all %d GPUs are quarantined, none can judge: %s", len(b.gpus),
		strings.Join(why, "; ")))
	for _, j := range b.queue {
		j.done <- judgeOut{err: err}
	}
	b.queue = nil
}

// reportLocked reports the slots' states (busy: held by a runner or a
// probe; quarantined: free slots of quarantined GPUs; idle: the other free
// ones) while they are live.
func (b *batcher) reportLocked() {
	if b.slots == nil || !b.slotsLive {
		return
	}
	idle, quarantined := 0, 0
	for _, slot := range b.free {
		if b.gpus[slot%len(b.gpus)].down != "" {
			quarantined++
		} else {
			idle++
		}
	}
	b.slots.Set(idle, b.nslots-len(b.free), quarantined)
}

// closeSlots stops reporting the slots' states; a later evaluation
// reports them again.
func (b *batcher) closeSlots() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.slotsLive = false
	if b.slots != nil {
		b.slots.Close()
	}
}

// takeSlotLocked takes a free slot of GPU gpu, or of any GPU in service
// when gpu < 0.
func (b *batcher) takeSlotLocked(gpu int) (int, bool) {
	for i, slot := range b.free {
		g := slot % len(b.gpus)
		if (gpu >= 0 && g == gpu) || (gpu < 0 && b.gpus[g].down == "") {
			b.free = append(b.free[:i], b.free[i+1:]...)
			return slot, true
		}
	}
	return 0, false
}

// deliver hands a batch's outcomes to their callers. When one may be the
// GPU's fault, the GPU is probed first; if it is quarantined, the
// evaluations that got no real verdict are requeued instead.
func (b *batcher) deliver(jobs []*judgeJob, outs []judgeOut, gpu int) {
	var suspect []int
	var why string
	for i := range outs {
		if w := gpuFault(outs[i]); w != "" && b.probe != nil {
			suspect = append(suspect, i)
			why = cmp.Or(why, w)
		}
	}
	if len(suspect) > 0 {
		if down := b.check(gpu, why); down != "" {
			var again []*judgeJob
			for _, i := range suspect {
				j := jobs[i]
				if j.requeues < maxRequeues {
					j.requeues++
					again, jobs[i] = append(again, j), nil
					continue
				}
				outs[i] = judgeOut{err: quarantineError(fmt.Sprintf("torch2cuda judge: %s; this candidate was requeued %d times "+
					"after GPU failures and is not requeued again (it may be what breaks them)", down, maxRequeues))}
			}
			b.log.Warn("torch2cuda: evaluations requeued off a quarantined GPU", "gpu", gpu, "requeued", len(again),
				"failed", len(suspect)-len(again))
			b.mu.Lock()
			b.queue = append(again, b.queue...)
			b.scheduleLocked(len(again))
			b.mu.Unlock()
		}
	}
	for i, j := range jobs {
		if j != nil {
			j.done <- outs[i]
		}
	}
}

// check probes gpu after a bad batch (why) and quarantines it if the probe
// fails; it returns why the GPU is quarantined, "" while it is in service.
// Concurrent checks of one GPU share a probe.
func (b *batcher) check(gpu int, why string) string {
	b.mu.Lock()
	down := b.gpus[gpu].down
	b.mu.Unlock()
	if down != "" {
		return down
	}
	v, _, _ := b.probes.Do(strconv.Itoa(gpu), func() (any, error) {
		err := b.probeOnce(gpu)
		b.mu.Lock()
		defer b.mu.Unlock()
		if err == nil {
			b.log.Info("torch2cuda: GPU passed its health probe after a bad batch", "gpu", gpu, "after", why)
			return "", nil
		}
		down := fmt.Sprintf("GPU %d failed its health probe: %v (after: %s)", gpu, err, why)
		b.gpus[gpu].down, b.gpus[gpu].next = down, time.Now().Add(b.reprobe)
		b.reportLocked()
		b.log.Error("torch2cuda: GPU quarantined", "gpu", gpu, "probe", err.Error(), "after", why, "reprobe", b.reprobe)
		return down, nil
	})
	return v.(string)
}

// recheck probes a quarantined GPU from one of its slots, then gives the
// slot back; a healthy GPU returns to service.
func (b *batcher) recheck(slot int) {
	gpu := slot % len(b.gpus)
	err := b.probeOnce(gpu)
	b.mu.Lock()
	defer b.mu.Unlock()
	st := &b.gpus[gpu]
	st.probing = false
	if err == nil {
		st.down = ""
		b.log.Info("torch2cuda: GPU passed its health probe, back in service", "gpu", gpu)
	} else {
		st.down, st.next = fmt.Sprintf("GPU %d failed its health probe again: %v", gpu, err), time.Now().Add(b.reprobe)
		b.log.Warn("torch2cuda: GPU still quarantined", "gpu", gpu, "probe", err.Error(), "reprobe", b.reprobe)
	}
	b.free = append(b.free, slot)
	b.scheduleLocked(len(b.queue))
}

// probeOnce runs the probe within the probe timeout. A probe that
// overruns it fails even if it does not return (a process stuck in the
// driver of a lost GPU can outlive its kill); its goroutine ends when the
// probe does.
func (b *batcher) probeOnce(gpu int) error {
	ctx, cancel := context.WithTimeout(context.Background(), b.probeFor)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- b.probe(ctx, gpu) }()
	select {
	case err := <-errc:
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		return err
	case <-ctx.Done():
		return fmt.Errorf("probe timed out after %s", b.probeFor)
	}
}

// deviceErrRE matches CUDA errors of the device or driver, not of a
// kernel (an illegal address or a launch failure is the candidate's).
var deviceErrRE = regexp.MustCompile(`(?i)uncorrectable ECC|ECC error|fallen off the bus|GPU is lost|no CUDA-capable device|` +
	`CUDA-capable device\(s\) is/are busy or unavailable|cudaErrorDevicesUnavailable|cudaErrorNoDevice|CUDA_ERROR_NO_DEVICE|` +
	`CUDA_ERROR_ECC_UNCORRECTABLE|cudaErrorECCUncorrectable|CUDA driver version is insufficient|` +
	`cudaErrorInitializationError|CUDA_ERROR_NOT_INITIALIZED|CUDA error: initialization error|CUDA error: unknown error|` +
	`CUDA requested but not available|system not yet initialized|cudaErrorSystemNotReady|NVML`)

// gpuFault says why an outcome may be the GPU's fault rather than the
// candidate's ("" when it is not): the judge process failed, the
// reference failed (it runs before any candidate code), the judge's own
// code failed, or the diagnostic names a device-level CUDA error. The
// probe decides.
func gpuFault(out judgeOut) string {
	switch r := out.res; {
	case out.err != nil:
		return out.fault
	case r.RefError:
		return "the reference failed: " + gist(r.Diagnostic)
	case r.JudgeError:
		return "the judge failed: " + gist(r.Diagnostic)
	default:
		if m := deviceErrRE.FindString(r.Diagnostic); m != "" {
			return "device error in a result: " + m
		}
	}
	return ""
}

// excRE matches a traceback's exception line ("torch.AcceleratorError:
// CUDA error: invalid device ordinal").
var excRE = regexp.MustCompile(`(?m)^\s*[\w.]*(?:Error|Exception)\b:.*$`)

// gist is a diagnostic's first line and, when the diagnostic holds a
// traceback, its last exception line.
func gist(diag string) string {
	first := firstLine(diag)
	all := excRE.FindAllString(diag, -1)
	if len(all) == 0 {
		return first
	}
	exc := clip(strings.TrimSpace(all[len(all)-1]), 300)
	if strings.Contains(first, exc) {
		return first
	}
	return first + " ... " + exc
}

// probeGPU checks GPU gpu as a batch would use it: "judge.py probe
// --devices gpu" in a sandbox with the GPU; nil when it is healthy.
func (l *Lane) probeGPU(ctx context.Context, gpu int) error {
	py, err := l.python()
	if err != nil {
		return err
	}
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return fmt.Errorf("probe sandbox: %w", err)
	}
	defer box.Close()
	if err := box.WriteFile("judge.py", judgeScript, 0o644); err != nil {
		return fmt.Errorf("probe sandbox: %w", err)
	}
	lim := l.judgeLimits(1, 1, l.cfg.ProbeTimeout)
	lim.Wall, lim.CPU = l.cfg.ProbeTimeout, 2*l.cfg.ProbeTimeout
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{py, "-I", "judge.py", "probe", "--devices", strconv.Itoa(gpu)},
		Env: judgeEnv(py, ""), GPU: true, Limits: lim})
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	if err := parseProbe(res.Stdout, gpu); err != nil {
		if !res.OK() {
			return fmt.Errorf("%w (probe %s: %s)", err, res.Describe(), clip(lastLine(string(res.Stderr)), 300))
		}
		return err
	}
	return nil
}

// probeReport is what "judge.py probe" prints (its last line).
type probeReport struct {
	OK      bool    `json:"ok"`
	Torch   string  `json:"torch"`
	CUDA    *string `json:"cuda"`
	Error   *string `json:"error"`
	Devices []struct {
		Index   int    `json:"index"`
		Name    string `json:"name"`
		Healthy bool   `json:"healthy"`
		Detail  string `json:"detail"`
	} `json:"devices"`
}

// parseProbe reads a probe's output: nil when GPU gpu is listed and
// healthy.
func parseProbe(stdout []byte, gpu int) error {
	var p probeReport
	text := strings.TrimSpace(string(stdout))
	if err := json.Unmarshal([]byte(lastLine(text)), &p); err != nil {
		return fmt.Errorf("probe printed no report: %q", clip(text, 300))
	}
	for _, d := range p.Devices {
		if d.Index != gpu {
			continue
		}
		if !d.Healthy {
			return fmt.Errorf("%s unhealthy: %s", cmp.Or(d.Name, "device"), d.Detail)
		}
		return nil
	}
	why := fmt.Sprintf("device %d not listed", gpu)
	if p.Error != nil {
		why = *p.Error
	}
	return fmt.Errorf("%s (torch %s)", why, p.Torch)
}
