package kittest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// SavedVerdict is one verdict of a two-phase check: a CPU host verifies
// and saves it with the executables its pending stages need; a GPU host,
// which has no compiler, loads it and completes it (tools.Completer).
type SavedVerdict struct {
	// Name identifies the answer (a peer file, a twin), Expect what the
	// completing host must find: "pass" or a failure class.
	Name, Expect string
	Item         tools.Item
	Verdict      tools.Verdict
	// Artifacts name the verdict's artifacts by the SHA-256 of their
	// content, stored gzipped as blobs/<sum>.gz beside the index.
	Artifacts map[string]string
}

// Files of a saved-verdict folder.
const (
	verdictIndex   = "verdicts.json"
	toolchainsFile = "toolchain.json"
)

// SaveToolchains writes reg's report to dir, for LoadToolchains on the
// completing host.
func SaveToolchains(dir string, reg *toolchain.Registry) error {
	b, err := json.MarshalIndent(reg.Report(), "", "  ")
	if err != nil {
		return fmt.Errorf("save toolchains: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save toolchains: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, toolchainsFile), b, 0o644)
}

// LoadToolchains is the registry SaveToolchains wrote to dir (the
// verifying host's compilers, which the completing host lacks) with this
// host's GPU.
func LoadToolchains(ctx context.Context, dir string) (*toolchain.Registry, error) {
	b, err := os.ReadFile(filepath.Join(dir, toolchainsFile))
	if err != nil {
		return nil, fmt.Errorf("load toolchains: %w", err)
	}
	var rep toolchain.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("load toolchains: %s: %w", toolchainsFile, err)
	}
	return toolchain.FromReport(rep).WithGPU(toolchain.DetectGPU(ctx, toolchain.Config{})), nil
}

// SaveVerdicts writes vs to dir: verdicts.json, and each artifact once per
// content under blobs/. The verdicts' Artifacts maps are moved out of the
// JSON (vs is modified).
func SaveVerdicts(dir string, vs []SavedVerdict) error {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o755); err != nil {
		return fmt.Errorf("save verdicts: %w", err)
	}
	for i := range vs {
		vs[i].Artifacts = map[string]string{}
		for name, b := range vs[i].Verdict.Artifacts {
			sum := sha256.Sum256(b)
			h := hex.EncodeToString(sum[:])
			vs[i].Artifacts[name] = h
			if err := writeBlob(filepath.Join(dir, "blobs", h+".gz"), b); err != nil {
				return fmt.Errorf("save verdicts: %w", err)
			}
		}
		vs[i].Verdict.Artifacts = nil
	}
	b, err := json.MarshalIndent(vs, "", "  ")
	if err != nil {
		return fmt.Errorf("save verdicts: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, verdictIndex), b, 0o644)
}

func writeBlob(path string, b []byte) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// LoadVerdicts reads the verdicts SaveVerdicts wrote to dir, artifacts put
// back.
func LoadVerdicts(dir string) ([]SavedVerdict, error) {
	b, err := os.ReadFile(filepath.Join(dir, verdictIndex))
	if err != nil {
		return nil, fmt.Errorf("load verdicts: %w", err)
	}
	var vs []SavedVerdict
	if err := json.Unmarshal(b, &vs); err != nil {
		return nil, fmt.Errorf("load verdicts: %s: %w", verdictIndex, err)
	}
	if len(vs) == 0 {
		return nil, errors.New("load verdicts: " + verdictIndex + " holds no verdict")
	}
	blobs := map[string][]byte{}
	for i := range vs {
		vs[i].Verdict.Artifacts = map[string][]byte{}
		for name, h := range vs[i].Artifacts {
			data, ok := blobs[h]
			if !ok {
				if data, err = readBlob(filepath.Join(dir, "blobs", h+".gz")); err != nil {
					return nil, fmt.Errorf("load verdicts: %s artifact %s: %w", vs[i].Name, name, err)
				}
				blobs[h] = data
			}
			vs[i].Verdict.Artifacts[name] = data
		}
	}
	return vs, nil
}

func readBlob(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
