package torch2cuda

import (
	"strings"
	"testing"
)

// The build records judge.py keeps beside a built extension reach the
// verdict: build_ms and whether the CUDA source was built slim.
func TestBuildRecords(t *testing.T) {
	files := map[string][]byte{
		"a1/kiln_done.json":   []byte(`{"name":"kiln_a1","ms":31250.5,"slim":true}`),
		"b2/kiln_done.json":   []byte(`{"name":"kiln_b2","ms":1000,"slim":null}`),
		"c3/kiln_done.json":   []byte(`{"name":"kiln_c3"}`), // written by an older judge: no time
		"a1/kiln_a1.so":       []byte("\x7fELF"),
		"d4/kiln_failed.json": []byte(`{"message":"Error building extension"}`),
	}
	r := readBuildRecords(files)
	if r.N != 2 || r.MS != 32250.5 || r.Slim != 1 || r.AsWritten != 0 {
		t.Fatalf("records %+v: want 2 builds, 32250.5 ms, 1 slim", r)
	}
	res := judgeResult{Build: r}
	if got := res.measurements()["build_ms"]; got != 32250.5 {
		t.Errorf("build_ms %v, want 32250.5", got)
	}
	if d := res.detail(); !strings.Contains(d, "built in 32.3 s (CUDA source with <torch/types.h>)") {
		t.Errorf("detail %q", d)
	}
	r = readBuildRecords(map[string][]byte{"p/kiln_done.json": []byte(`{"ms":15000,"slim":true,"header":"the per-operator prelude"}`)})
	if d := (judgeResult{Build: r}).detail(); !strings.Contains(d, "built in 15.0 s (CUDA source with the per-operator prelude)") {
		t.Errorf("detail %q", d)
	}
	r = readBuildRecords(map[string][]byte{"x/kiln_done.json": []byte(`{"ms":60000,"slim":false,"pch":true}`)})
	if r.PCH != 1 {
		t.Errorf("records %+v: want the precompiled header counted", r)
	}
	if d := (judgeResult{Build: r}).detail(); !strings.Contains(d,
		"built in 60.0 s (as written: the slimmer CUDA build failed) (pybind module with the precompiled header)") {
		t.Errorf("detail %q", d)
	}
	if _, ok := (judgeResult{}).measurements()["build_ms"]; ok {
		t.Errorf("build_ms without a record")
	}
}
