package sass2rdna

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/kit/kittest"
)

// host is the real host the tests verify on: a sandbox runner and the
// toolchains found here, caches in a temp folder (as tools/lanes builds
// it for the conformance suite).
var host kit.Host

func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h, cleanup, err := kittest.NewHost(ctx, "kiln-sass2rdna-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	host = h
	return m.Run()
}

// testLane opens the lane on the test host, skipping the test when a tool
// it needs is missing.
func testLane(t *testing.T, need ...string) *Lane {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	reg, err := host.Toolchains(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range append([]string{toolchain.LLVMMC, toolchain.HIPCC}, need...) {
		if err := reg.Require(tool); err != nil {
			t.Skipf("%v", err)
		}
	}
	l, err := openLane(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
