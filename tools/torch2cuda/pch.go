package torch2cuda

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// Precompiled headers for the pybind module (issue 23). load_inline
// compiles the module's main.cpp, which includes <torch/extension.h>, with
// g++; against a precompiled form of that header built from the same flags
// the compile takes a third to a half of the time (judge.py's make_pch).
// The lane makes the headers once per torch toolchain, in a sandbox, for
// the flag sets models use most, and keeps them under CacheDir; compile
// boxes see them read-only (sandboxes.Spec.ReadOnly). g++ takes a
// precompiled header only where it is valid for the compile, and reads
// the header otherwise, so what is built does not change.

// pchFlagSets are the extra_cflags the headers are made for: none (most
// answers, and KernelBench's [""]) and -O3 (the commonest that models add;
// it changes predefined macros, so the first header does not serve it).
var pchFlagSets = [][]string{{}, {"-O3"}}

// PCH modes (Config.PCH).
const (
	PCHAuto = "" // on when judging on a GPU with a CacheDir
	PCHOn   = "on"
	PCHOff  = "off"
)

// pchState is the lane's headers: made in the background at the first
// build; builds before they are ready go without.
type pchState struct {
	once sync.Once
	mu   sync.Mutex
	root string // the headers' folder, "" when it could not be made
	done bool   // the making has ended
	err  error  // its last failure
}

func (l *Lane) pchEnabled() bool {
	switch l.cfg.PCH {
	case PCHOn:
		return l.cfg.CacheDir != ""
	case PCHOff:
		return false
	}
	return l.cfg.CacheDir != "" && l.cfg.Device != "cpu"
}

// pchRoot returns the folder of the lane's precompiled headers ("" when
// they are off); the first call creates it and starts making them. The
// folder is given to builds from the start, empty until a header is made:
// a box sees the headers that appear in it later (a bind mount is a view
// of the folder), and judge.py reads the folder at each build, so build
// servers started before the headers were made use them as soon as they
// are (no process is started again for them).
func (l *Lane) pchRoot(py, arch string) string {
	if !l.pchEnabled() {
		return ""
	}
	l.pch.once.Do(func() {
		root := l.pchDir(py)
		if err := os.MkdirAll(root, 0o755); err != nil {
			l.cfg.Logger.Warn("torch2cuda: no precompiled headers; builds go without them", "err", err)
			l.pch.mu.Lock()
			l.pch.err, l.pch.done = err, true
			l.pch.mu.Unlock()
			return
		}
		l.pch.mu.Lock()
		l.pch.root = root
		l.pch.mu.Unlock()
		go l.makePCHs(py, arch, root)
	})
	l.pch.mu.Lock()
	defer l.pch.mu.Unlock()
	return l.pch.root
}

// pchDir names the headers of this torch toolchain and judging device.
func (l *Lane) pchDir(py string) string {
	t, _ := l.cfg.Toolchains.Get(toolchain.Torch)
	h := sha256.New()
	for _, part := range []string{buildVersion, t.Version, py, l.cfg.Device} {
		fmt.Fprintf(h, "%d:%s\x00", len(part), part)
	}
	dir := filepath.Join(l.cfg.CacheDir, "pch", hex.EncodeToString(h.Sum(nil))[:16])
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // a sandbox's read-only path is absolute
	}
	return dir
}

// makePCHs makes the headers of every flag set at once, each into
// root/<index>; builds use one as soon as it is there (judge.py takes a
// header only for the flag set it was made for).
func (l *Lane) makePCHs(py, arch, root string) {
	removeStaleTmp(root, time.Hour)
	var wg sync.WaitGroup
	for i, flags := range pchFlagSets {
		dst := filepath.Join(root, strconv.Itoa(i))
		if _, err := os.Stat(filepath.Join(dst, "kiln_pch.json")); err == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if err := l.makePCH(py, arch, flags, dst); err != nil {
				l.cfg.Logger.Warn("torch2cuda: no precompiled header; builds go without it", "extra_cflags", flags, "err", err)
				l.pch.mu.Lock()
				l.pch.err = err
				l.pch.mu.Unlock()
				return
			}
			l.cfg.Logger.Info("torch2cuda: precompiled torch/extension.h", "extra_cflags", flags, "took", time.Since(start).Round(time.Second))
		}()
	}
	wg.Wait()
	l.pch.mu.Lock()
	l.pch.done = true
	l.pch.mu.Unlock()
}

// removeStaleTmp removes the copies of headers (root.N.tmp-*, about 700 MB
// each) that a kiln killed while copying one left, once older than age (a
// lane copying one now is younger).
func removeStaleTmp(root string, age time.Duration) {
	left, _ := filepath.Glob(root + ".*.tmp-*")
	for _, p := range left {
		if fi, err := os.Lstat(p); err == nil && time.Since(fi.ModTime()) > age {
			_ = os.RemoveAll(p)
		}
	}
}

// makePCH runs judge.py pch in a sandbox and keeps its header in dst
// (root/N): copied first beside root (root.N.tmp-*), then moved in whole, so
// that a build never sees half a header.
func (l *Lane) makePCH(py, arch string, flags []string, dst string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	box, err := l.cfg.Sandbox.OpenSized(ctx, 3<<30, 1<<20)
	if err != nil {
		return err
	}
	defer box.Close()
	if err := box.WriteTree(".", map[string][]byte{"judge.py": judgeScript}); err != nil {
		return err
	}
	fl, _ := json.Marshal(flags)
	argv := []string{py, "-I", "judge.py", "pch", "--out", "pch", "--extra-cflags", string(fl), "--work", "work"}
	if l.cfg.Device != "cpu" {
		argv = append(argv, "--with-cuda")
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, Env: judgeEnv(py, arch), Limits: l.judgeLimits(1, 1, 10*time.Minute)})
	if err != nil {
		return err
	}
	if !res.OK() {
		return fmt.Errorf("judge.py pch: %s: %s", res.Describe(), clip(string(res.Stdout)+string(res.Stderr), 800))
	}
	// this making's own (another lane may make the same header into the same folder)
	root := filepath.Dir(dst)
	tmp, err := os.MkdirTemp(filepath.Dir(root), filepath.Base(root)+"."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's 0700 would hide it from the boxes' user
		return err
	}
	for _, name := range []string{"torch/extension.h", "torch/extension.h.gch", "kiln_pch.json"} {
		if err := copyRegular(filepath.Join(box.Dir(), "pch", name), filepath.Join(tmp, name)); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "kiln_pch.json")); err == nil {
		return nil // made meanwhile by another lane; builds may be using it
	}
	_ = os.RemoveAll(dst) // an unfinished one
	return os.Rename(tmp, dst)
}

// copyRegular copies a regular file (not a link) made in a box.
func copyRegular(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
