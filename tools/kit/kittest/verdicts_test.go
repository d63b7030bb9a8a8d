package kittest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kiln-dev/kiln/tools"
)

// TestSavedVerdicts: verdicts come back with their artifacts, each
// artifact content stored once; a missing blob is an error naming it.
func TestSavedVerdicts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe := bytes.Repeat([]byte("\x7fELF"), 100)
	in := []SavedVerdict{
		{Name: "peer", Expect: "pass", Item: tools.Item{Lane: "l", Files: map[string]string{"a.cu": "x"}},
			Verdict: tools.Verdict{Pass: true, Stage: "run", Artifacts: map[string][]byte{"bin": exe, "src": []byte("a")}}},
		{Name: "twin", Expect: "wrong_output", Verdict: tools.Verdict{Pass: true, Artifacts: map[string][]byte{"bin": exe}}},
	}
	if err := SaveVerdicts(dir, in); err != nil {
		t.Fatal(err)
	}
	blobs, err := os.ReadDir(filepath.Join(dir, "blobs"))
	if err != nil || len(blobs) != 2 {
		t.Fatalf("%d blobs (want 2: the executable once), %v", len(blobs), err)
	}
	out, err := LoadVerdicts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Name != "peer" || out[1].Expect != "wrong_output" || out[0].Item.Files["a.cu"] != "x" ||
		!bytes.Equal(out[0].Verdict.Artifacts["bin"], exe) || !bytes.Equal(out[1].Verdict.Artifacts["bin"], exe) ||
		string(out[0].Verdict.Artifacts["src"]) != "a" || out[0].Verdict.Stage != "run" {
		t.Fatalf("loaded %+v", out)
	}
	if err := os.Remove(filepath.Join(dir, "blobs", blobs[0].Name())); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadVerdicts(dir); err == nil {
		t.Error("a missing blob loaded")
	}
	if _, err := LoadVerdicts(t.TempDir()); err == nil {
		t.Error("an empty folder loaded")
	}
}
