package cudasynth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

func loadRegistry(ctx context.Context) (*toolchain.Registry, error) {
	return toolchain.Detect(ctx, toolchain.Config{DeviceLibDir: filepath.Join(testDir, "devlibs"), ProbeCache: "/tmp/tcx/probe.json", SkipProbes: false})
}

func TestScratch(t *testing.T) {
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, Cache: testCache})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/*.cu")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		v, err := l.Verify(context.Background(), tools.Item{}, string(b))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(f, v.Pass, v.Class, v.Stage, v.Diagnostic)
		for _, s := range v.Stages {
			fmt.Printf("   %-20s ok=%v skip=%v %v %q\n", s.Name, s.OK, s.Skipped, s.Duration, s.Detail)
		}
		fmt.Println(v.Measurements)
	}
}
