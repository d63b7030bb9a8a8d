package ptx2cuda

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/kit"
)

var (
	// regenerateFlag rewrites the committed PTX and answers.jsonl
	// (TestCorpusPTX) instead of comparing them.
	regenerateFlag = flag.Bool("regenerate", false, "rewrite corpus/*/*/<variant>.ptx and corpus/answers.jsonl")
	// cacheFlag names a compile cache folder kept after the tests (default
	// a temp dir).
	cacheFlag = flag.String("ptx2cuda.cache", "", "compile cache dir to fill and keep (default: a temp dir)")
	// gpuDirFlag names the folder of the GPU check: TestPrepareGPUCheck
	// (CPU host) writes verdicts there, TestGPUComplete (GPU host, -tags
	// gpu) completes them. See gpu_test.go.
	gpuDirFlag = flag.String("ptx2cuda.gpudir", "", "folder of the two-phase GPU check (verdicts and executables)")
	// weakFlag lets the GPU host run without isolation layers it lacks.
	weakFlag = flag.Bool("ptx2cuda.weak", false, "allow weak sandbox isolation (hosts without cgroups or landlock)")
)

var (
	testRunner   *sandboxes.Runner
	testRegistry *toolchain.Registry
	testCache    *toolchain.Cache
	testDir      string
	// testSkip says why the nvcc tests cannot run here ("" when they can).
	testSkip string
	testHost kit.Host
)

func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	testDir, err = os.MkdirTemp("", "kiln-ptx2cuda-test-")
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
	testRegistry, err = loadRegistry(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolchain:", err)
		return 1
	}
	if err := testRegistry.Require(toolchain.NVCC); err != nil {
		testSkip = err.Error()
	}
	testRunner, err = sandboxes.New(sandboxes.Config{ScratchRoot: filepath.Join(testDir, "boxes"), UIDBase: 2_100_500_000, // unique among the tests' fixed ranges (selftest has 2_100_400_000)
		ReadOnlyPaths: testRegistry.SandboxPaths(), AllowWeakIsolation: *weakFlag})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 1
	}
	defer testRunner.Close()
	cacheDir := *cacheFlag
	if cacheDir == "" {
		cacheDir = filepath.Join(testDir, "cache")
	} else if cacheDir, err = filepath.Abs(cacheDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testCache, err = toolchain.NewCache(toolchain.CacheConfig{Dir: cacheDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cache:", err)
		return 1
	}
	testHost = kit.Host{Sandbox: func() (*sandboxes.Runner, error) { return testRunner, nil },
		Toolchains: func(context.Context, bool) (*toolchain.Registry, error) { return testRegistry, nil },
		DataDir:    filepath.Join(testDir, "data"), Log: slog.New(slog.DiscardHandler)}
	return m.Run()
}

// loadRegistry replays the registry saved in the GPU check's folder when
// there is one (with this host's GPU: the GPU host has no nvcc 11.8), else
// detects the toolchains (versions only) and, with -ptx2cuda.gpudir,
// saves its report there.
func loadRegistry(ctx context.Context) (*toolchain.Registry, error) {
	var reportPath string
	if *gpuDirFlag != "" {
		reportPath = filepath.Join(*gpuDirFlag, "toolchain.json")
		if b, err := os.ReadFile(reportPath); err == nil && gpuPhase {
			var rep toolchain.Report
			if err := json.Unmarshal(b, &rep); err != nil {
				return nil, fmt.Errorf("%s: %w", reportPath, err)
			}
			return toolchain.FromReport(rep).WithGPU(toolchain.DetectGPU(ctx, toolchain.Config{})), nil
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return toolchain.Detect(ctx, toolchain.Config{DeviceLibDir: filepath.Join(testDir, "devlibs"), SkipProbes: true})
}

// needNVCC skips tests that compile where nvcc is missing (CI installs
// it, as do the development hosts).
func needNVCC(t *testing.T) {
	t.Helper()
	if testSkip != "" {
		t.Skip(testSkip)
	}
}

// sharedLane is the lane the tests use: one compile at a time (the
// development hosts have two cores), the shared cache.
var sharedLane = sync.OnceValues(func() (*Lane, error) {
	return New(Config{Sandbox: testRunner, Toolchains: testRegistry, Cache: testCache, Parallel: 1})
})

func lane(t *testing.T) *Lane {
	t.Helper()
	l, err := sharedLane()
	if err != nil {
		t.Fatal(err)
	}
	return l
}
