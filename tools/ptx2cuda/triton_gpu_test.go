//go:build gpu

package ptx2cuda

// TestTritonReferencesRun, on a GPU host: every item of a Triton corpus
// folder (kiln ptx harvest-triton -o DIR) has its reference built (the
// harness with the driver-API launcher of its PTX) and run twice through
// the run and compare stages, as answer and as reference: the launch with
// the recorded configuration must succeed and agree with itself. It checks
// the harness and the recorded launches, not any decompilation.
//
//	kiln ptx harvest-triton -o /tmp/triton                     # on the GPU host
//	go test -c -tags gpu -o p.test ./tools/ptx2cuda            # here; carry p.test
//	cd tools/ptx2cuda && ./p.test -test.run TestTritonReferencesRun -test.v -ptx2cuda.tritondir=/tmp/triton

import (
	"context"
	"flag"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

var tritonDirFlag = flag.String("ptx2cuda.tritondir", "", "a Triton corpus folder (kiln ptx harvest-triton -o DIR) whose references TestTritonReferencesRun runs")

func TestTritonReferencesRun(t *testing.T) {
	if *tritonDirFlag == "" {
		t.Skip("no -ptx2cuda.tritondir")
	}
	needNVCC(t)
	if !testRegistry.GPU().Present {
		t.Skip("no GPU")
	}
	items, err := LoadCorpus(os.DirFS(*tritonDirFlag), ".", *tritonDirFlag, true)
	if err != nil {
		t.Fatal(err)
	}
	l := lane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var mu sync.Mutex
	classes := map[string]int{}
	var ms []float64
	fail := func(class, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		classes[class]++
		t.Errorf(format, args...)
	}
	g := errgroup.Group{}
	g.SetLimit(8) // builds in parallel; the runs take the lane's GPU slot
	for _, it := range items {
		g.Go(func() error {
			h, err := it.Harness(TritonVariant)
			if err != nil {
				fail("harness", "%s: %v", it.ID, err)
				return nil
			}
			res, err := l.builds.Run(ctx, l.referenceJob(h, it.PTX[TritonVariant]))
			if err != nil {
				return err
			}
			if !res.OK() {
				fail("build", "%s: the reference does not build: %s", it.ID, res.FailureText(compilerDiagnostics.Of(string(res.Entry.Stderr), 10)))
				return nil
			}
			bin := res.Entry.Files[exeFile]
			b := newVerdict()
			if err := l.runStages(ctx, b, h, bin, bin, nil); err != nil {
				fail("bad_item", "%s: %v", it.ID, err)
				return nil
			}
			for _, st := range b.stages {
				if !st.ok {
					fail(string(st.class), "%s: %s at %s: %s", it.ID, st.class, st.name, st.detail)
					return nil
				}
			}
			mu.Lock()
			classes["pass"]++
			ms = append(ms, b.meas["kernel_ms_reference"])
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	sort.Float64s(ms)
	if len(ms) > 0 {
		t.Logf("%d items: %v; Triton kernel time median %.4f ms, range %.4f-%.4f ms", len(items), classes, ms[len(ms)/2], ms[0], ms[len(ms)-1])
	}
}
