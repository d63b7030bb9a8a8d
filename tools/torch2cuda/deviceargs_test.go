package torch2cuda

import (
	"slices"
	"testing"
	"time"
)

// TestDeviceArgs: the judge's device flags and the batch's bounds follow
// SlotsPerDevice.
func TestDeviceArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		device string
		slots  int
		gpu    int
		want   []string
	}{
		{"", 1, 3, []string{"--devices", "3"}},
		{"", 3, 1, []string{"--devices", "1,1,1", "--exclusive-timing"}},
		{"cpu", 1, 0, []string{"--device", "cpu", "--parallel", "1"}},
		{"cpu", 2, 0, []string{"--device", "cpu", "--parallel", "2", "--exclusive-timing"}},
	} {
		l := &Lane{cfg: Config{Device: tc.device, SlotsPerDevice: tc.slots}.withDefaults()}
		if got := l.deviceArgs(tc.gpu); !slices.Equal(got, tc.want) {
			t.Errorf("device %q, %d slots, GPU %d: %q, want %q", tc.device, tc.slots, tc.gpu, got, tc.want)
		}
	}
	jobs := []*judgeJob{{lim: evalLimits{timeout: time.Minute, refTimeout: time.Minute, rss: 20 << 30}}}
	one := (&Lane{cfg: Config{SlotsPerDevice: 1}.withDefaults()}).batchLimits(jobs)
	four := (&Lane{cfg: Config{SlotsPerDevice: 4}.withDefaults()}).batchLimits(jobs)
	if one.RSS != 22<<30 || four.RSS != 80<<30 {
		t.Errorf("RSS bound: 1 slot %d GiB, 4 slots %d GiB; want 22 and 80", one.RSS>>30, four.RSS>>30)
	}
	if one.Wall != four.Wall || four.CPU != 4*one.CPU {
		t.Errorf("wall %s/%s (want equal), CPU %s/%s (want 4x)", one.Wall, four.Wall, one.CPU, four.CPU)
	}
	for _, n := range []int{-1, MaxSlotsPerDevice + 1} {
		c := Config{Sandbox: testRunner, Toolchains: testRegistry, SlotsPerDevice: n}.withDefaults()
		if err := c.Validate(); err == nil {
			t.Errorf("slots per device %d: no error", n)
		}
	}
}
