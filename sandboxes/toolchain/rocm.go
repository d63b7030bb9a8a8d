package toolchain

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	rdna2ISAFile = "oclc_isa_version_1030.bc"
	rdna3ISAFile = "oclc_isa_version_1100.bc"
	// deriveStamp records which source file and tools made the derived
	// file, so a changed system library is derived again.
	deriveStamp = ".kiln-derived"
)

// DeriveRDNA3DeviceLibs fills dstDir with the AMD device libraries of
// srcDir plus oclc_isa_version_1100.bc, which ROCm 5.2 lacks: it is the
// gfx1030 file with its only constant, the ISA version 10300, changed to
// 11000 (llvm-dis, edit, llvm-as). The other .bc files are linked (copied
// where links fail). It is idempotent and safe to run concurrently; a
// stamp file makes repeated calls cheap. Folders are created mode 0755 so
// sandbox uids can read them.
func DeriveRDNA3DeviceLibs(ctx context.Context, llvmDis, llvmAs, srcDir, dstDir string) error {
	if !filepath.IsAbs(dstDir) || !filepath.IsAbs(srcDir) {
		return errors.New("derive rdna3 device libs: folders must be absolute")
	}
	src := filepath.Join(srcDir, rdna2ISAFile)
	srcBytes, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("derive rdna3 device libs: %w", err)
	}
	sum := sha256.Sum256(srcBytes)
	stamp := fmt.Sprintf("%s %s\n", hex.EncodeToString(sum[:]), srcDir)
	if err := os.MkdirAll(dstDir, 0o755); err != nil {
		return fmt.Errorf("derive rdna3 device libs: %w", err)
	}
	if b, err := os.ReadFile(filepath.Join(dstDir, deriveStamp)); err == nil && string(b) == stamp &&
		fileExists(filepath.Join(dstDir, rdna3ISAFile)) {
		return nil
	}

	// Link every system library next to the derived one.
	entries, err := os.ReadDir(srcDir)
	if err != nil {
		return fmt.Errorf("derive rdna3 device libs: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".bc") || name == rdna3ISAFile {
			continue
		}
		if err := linkOrCopy(filepath.Join(srcDir, name), filepath.Join(dstDir, name)); err != nil {
			return fmt.Errorf("derive rdna3 device libs: %w", err)
		}
	}

	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var ll, stderr bytes.Buffer
	dis := exec.CommandContext(ctx, llvmDis, "-o", "-", src)
	dis.Stdout, dis.Stderr = &ll, &stderr
	dis.Env = []string{"LC_ALL=C"}
	if err := dis.Run(); err != nil {
		return fmt.Errorf("derive rdna3 device libs: llvm-dis: %v: %s", err, firstLine(stderr.String()))
	}
	text, err := retargetISAVersion(ll.String(), 10300, 11000)
	if err != nil {
		return fmt.Errorf("derive rdna3 device libs: %w", err)
	}
	tmp, err := os.CreateTemp(dstDir, ".tmp-*.bc")
	if err != nil {
		return fmt.Errorf("derive rdna3 device libs: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	stderr.Reset()
	as := exec.CommandContext(ctx, llvmAs, "-o", tmp.Name(), "-")
	as.Stdin, as.Stderr = strings.NewReader(text), &stderr
	as.Env = []string{"LC_ALL=C"}
	if err := as.Run(); err != nil {
		return fmt.Errorf("derive rdna3 device libs: llvm-as: %v: %s", err, firstLine(stderr.String()))
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("derive rdna3 device libs: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dstDir, rdna3ISAFile)); err != nil {
		return fmt.Errorf("derive rdna3 device libs: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dstDir, deriveStamp), []byte(stamp), 0o644); err != nil {
		return fmt.Errorf("derive rdna3 device libs: %w", err)
	}
	return nil
}

// retargetISAVersion changes the ISA version constant of a disassembled
// oclc_isa_version_*.bc ("constant i32 10300"). Exactly one occurrence
// must exist: anything else means the library's shape changed and the
// edit would be a guess.
func retargetISAVersion(ll string, from, to int) (string, error) {
	old := fmt.Sprintf("constant i32 %d,", from)
	if n := strings.Count(ll, old); n != 1 {
		return "", fmt.Errorf("expected one %q in the disassembled library, found %d", old, n)
	}
	return strings.Replace(ll, old, fmt.Sprintf("constant i32 %d,", to), 1), nil
}

// linkOrCopy makes dst a symlink to src (replacing an old entry), or a
// copy when links are refused.
func linkOrCopy(src, dst string) error {
	if cur, err := os.Readlink(dst); err == nil && cur == src {
		return nil
	}
	tmp := fmt.Sprintf("%s.tmp-%d-%d", dst, os.Getpid(), time.Now().UnixNano())
	if err := os.Symlink(src, tmp); err == nil {
		if err := os.Rename(tmp, dst); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		return nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeFileAtomic(dst, b, 0o644)
}
