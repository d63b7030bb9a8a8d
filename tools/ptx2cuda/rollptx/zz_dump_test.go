package rollptx

import (
	"os"
	"path/filepath"
	"testing"
)

func TestZZDump(t *testing.T) {
	dir := os.Getenv("DUMP")
	if dir == "" {
		t.Skip()
	}
	os.MkdirAll(dir, 0o755)
	for _, f := range loadCorpus(t) {
		os.WriteFile(filepath.Join(dir, f.name+".ptx"), []byte(f.ptx), 0o644)
		os.WriteFile(filepath.Join(dir, f.name+".rptx"), []byte(Roll(f.ptx)), 0o644)
	}
	tasks, _ := filepath.Glob("../corpus/*/*/*.ptx")
	for _, n := range tasks {
		b, _ := os.ReadFile(n)
		rel, _ := filepath.Rel("../corpus", n)
		name := filepath.Join(dir, "task", rel)
		os.MkdirAll(filepath.Dir(name), 0o755)
		os.WriteFile(name, b, 0o644)
		os.WriteFile(name+".rptx", []byte(Roll(string(b))), 0o644)
	}
}
