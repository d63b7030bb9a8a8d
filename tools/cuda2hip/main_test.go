package cuda2hip

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/kit/kittest"
)

// testHost is the real host the tests verify on: a sandbox runner and the
// toolchains found here, caches in a temp folder.
var testHost kit.Host

func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h, cleanup, err := kittest.NewHost(ctx, "kiln-cuda2hip-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	testHost = h
	return m.Run()
}
