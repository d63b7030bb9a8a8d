package cudasynth

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// cacheFlag names a compile cache folder kept after the tests. On the CPU
// host the tests fill it and write toolchain.json (the registry's report)
// into it; a test binary run on a GPU host with the same flag replays the
// compiles from it (that host has no nvcc 11.8 or hipcc) and runs the
// binaries: see gpu_test.go.
var cacheFlag = flag.String("cudasynth.cache", "", "compile cache dir to fill, or to replay with its toolchain.json (default: a temp dir)")

// weakFlag lets the GPU host run without isolation layers it lacks.
var weakFlag = flag.Bool("cudasynth.weak", false, "allow weak sandbox isolation (hosts without cgroups or landlock)")

var (
	testRunner   *sandboxes.Runner
	testRegistry *toolchain.Registry
	testCache    *toolchain.Cache
	testDir      string
	testCacheDir string
	// testSkip is why the real-toolchain tests cannot run here ("" when
	// they can).
	testSkip string
)

func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	testDir, err = os.MkdirTemp("", "kiln-cudasynth-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(testDir)
	if err := os.Chmod(testDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	testCacheDir = *cacheFlag
	if testCacheDir == "" {
		testCacheDir = filepath.Join(testDir, "cache")
	} else if testCacheDir, err = filepath.Abs(testCacheDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testRegistry, err = loadRegistry(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolchain:", err)
		return 1
	}
	for _, tool := range []string{toolchain.NVCC, toolchain.CUObjdump, toolchain.HIPCC} {
		if err := testRegistry.Require(tool); err != nil {
			testSkip = err.Error()
		}
	}
	rcfg := sandboxes.Config{ScratchRoot: filepath.Join(testDir, "boxes"), UIDBase: 2_100_300_000,
		ReadOnlyPaths: testRegistry.SandboxPaths(), AllowWeakIsolation: *weakFlag}
	testRunner, err = sandboxes.New(rcfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 1
	}
	defer testRunner.Close()
	testCache, err = toolchain.NewCache(toolchain.CacheConfig{Dir: testCacheDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cache:", err)
		return 1
	}
	if *cacheFlag != "" && testSkip == "" && !testRegistry.GPU().Present {
		// Filling a cache for a GPU host: it cannot build the probe.
		l, err := sharedLane()
		if err == nil {
			err = l.PrepareGPUProbe(ctx)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gpu probe:", err)
			return 1
		}
	}
	return m.Run()
}

// loadRegistry replays the registry saved in the cache folder when there
// is one (with this host's GPU), else detects the toolchains (versions
// only: the toolchain package tests the probes) and saves the report.
func loadRegistry(ctx context.Context) (*toolchain.Registry, error) {
	reportPath := filepath.Join(testCacheDir, "toolchain.json")
	if b, err := os.ReadFile(reportPath); err == nil {
		var rep toolchain.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			return nil, fmt.Errorf("%s: %w", reportPath, err)
		}
		return toolchain.FromReport(rep).WithGPU(toolchain.DetectGPU(ctx, toolchain.Config{})), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	reg, err := toolchain.Detect(ctx, toolchain.Config{DeviceLibDir: filepath.Join(testDir, "devlibs"), SkipProbes: true})
	if err != nil {
		return nil, err
	}
	if *cacheFlag != "" {
		b, err := json.MarshalIndent(reg.Report(), "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(testCacheDir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(reportPath, b, 0o644); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// needToolchains skips tests that compile when nvcc, cuobjdump or hipcc is
// missing (CI installs them, as do the development hosts).
func needToolchains(t *testing.T) {
	t.Helper()
	if testSkip != "" {
		t.Skip(testSkip)
	}
}
