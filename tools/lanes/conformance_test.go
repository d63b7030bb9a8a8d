package lanes

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

// host is the real host the conformance suite verifies on: a sandbox
// runner and the toolchains found here, caches in a temp folder.
var host kit.Host

func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h, cleanup, err := kittest.NewHost(ctx, "kiln-lanes-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	host = h
	return m.Run()
}

// TestConformance runs the lane kit conformance suite over every
// registered lane, the lanes in parallel.
func TestConformance(t *testing.T) {
	kits := Kits()
	if len(kits) == 0 {
		t.Fatal("no lane registered")
	}
	for _, k := range kits {
		t.Run(k.Name, func(t *testing.T) {
			t.Parallel() // the lanes share only the host, which is safe for concurrent use
			kittest.Run(t, k, host)
		})
	}
}

// TestRegistry: the registered kits are complete, uniquely named, and
// their refinement rules compile together.
func TestRegistry(t *testing.T) {
	t.Parallel()
	r, err := Registry()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Names()) != len(Kits()) {
		t.Errorf("%d names for %d kits", len(r.Names()), len(Kits()))
	}
	if _, err := r.Lookup("no-such-lane"); err == nil {
		t.Error("lookup of an unknown lane succeeded")
	}
	if _, err := kit.NewRegistry(append(Kits(), Kits()[0])...); err == nil {
		t.Error("a lane registered twice was accepted")
	}
}
