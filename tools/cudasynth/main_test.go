package cudasynth

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

var (
	cacheFlag = flag.String("cudasynth.cache", "", "compile cache dir to fill (or, with a toolchain.json in it, to replay on a GPU host); default a temp dir")
)

var (
	testRunner   *sandboxes.Runner
	testRegistry *toolchain.Registry
	testCache    *toolchain.Cache
	testDir      string
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
	testRegistry, err = loadRegistry(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolchain:", err)
		return 1
	}
	testRunner, err = sandboxes.New(sandboxes.Config{ScratchRoot: filepath.Join(testDir, "boxes"), UIDBase: 2_100_300_000,
		ReadOnlyPaths: testRegistry.SandboxPaths()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 1
	}
	defer testRunner.Close()
	cacheDir := *cacheFlag
	if cacheDir == "" {
		cacheDir = filepath.Join(testDir, "cache")
	}
	testCache, err = toolchain.NewCache(toolchain.CacheConfig{Dir: cacheDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cache:", err)
		return 1
	}
	return m.Run()
}
