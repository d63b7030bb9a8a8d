// Command kiln-sandbox-init is kiln's sandbox trampoline on its own: the
// process that starts each sandboxed run's two stages (see package
// sandboxes). kiln re-executes itself for this by default; this small
// binary starts in about 2 ms where the daemon's 70 MB take about 25 ms of
// CPU, twice a run. ./setup.sh builds it beside bin/kiln, where kiln finds
// it (or name it in $KILN_SANDBOX_INIT). It is not meant to be run by hand.
package main

import (
	"fmt"
	"os"

	"github.com/kiln-dev/kiln/sandboxes"
)

func main() {
	sandboxes.MaybeRunInit()
	fmt.Fprintln(os.Stderr, "kiln-sandbox-init: kiln's sandbox trampoline; kiln starts it (put it beside kiln or name it in $KILN_SANDBOX_INIT)")
	os.Exit(2)
}
