package kittest_test

import (
	"testing"

	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/kit/kittest"
	"github.com/kiln-dev/kiln/tools/kit/kittest/toylane"
)

// TestToyLane runs the suite on the guide's example lane: a kit in one
// folder passes it with no toolchain and no sandbox.
func TestToyLane(t *testing.T) {
	kittest.Run(t, toylane.Kit(), kit.Host{})
}

// TestIncompleteKit: the registry refuses a kit that lacks a required part
// and names it.
func TestIncompleteKit(t *testing.T) {
	k := toylane.Kit()
	k.Example = nil
	if _, err := kit.NewRegistry(k); err == nil || err.Error() != "kit toy-upper: missing Example" {
		t.Errorf("registry of a kit without an example: %v", err)
	}
}
