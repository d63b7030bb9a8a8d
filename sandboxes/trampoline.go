package sandboxes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// selfExe re-executes the running executable as the trampoline.
const selfExe = "/proc/self/exe"

// InitBinaryEnv names the environment variable that points the Runner at
// a kiln-sandbox-init binary when Config.InitBinary is empty.
const InitBinaryEnv = "KILN_SANDBOX_INIT"

// trampoline is the executable that starts the runs: a kiln-sandbox-init
// held open (so that a rebuild of the file while kiln runs cannot swap it
// under a running daemon: runs exec the open file), or this executable.
type trampoline struct {
	name string   // the file as found, for messages; selfExe when re-executing
	file *os.File // nil when re-executing
}

// execPath is what a run executes.
func (t trampoline) execPath() string {
	if t.file == nil {
		return selfExe
	}
	return fmt.Sprintf("/proc/self/fd/%d", t.file.Fd())
}

func (t trampoline) close() {
	if t.file != nil {
		t.file.Close()
	}
}

// findInit picks the trampoline (Config.InitBinary's rules): one named in
// the config or the environment must work; one found beside the
// executable is used only if it does; else this executable.
func findInit(configured string, log *slog.Logger) (trampoline, error) {
	path, from := configured, "Config.InitBinary"
	if path == "" {
		path, from = os.Getenv(InitBinaryEnv), "$"+InitBinaryEnv
	}
	if path != "" {
		t, err := openInit(path)
		if err != nil {
			return trampoline{}, fmt.Errorf("sandboxes: %s: %w", from, err)
		}
		return t, nil
	}
	self := trampoline{name: selfExe}
	exe, err := os.Executable()
	if err != nil {
		return self, nil
	}
	beside := filepath.Join(filepath.Dir(exe), initArg0)
	if beside == exe {
		return self, nil
	}
	t, err := openInit(beside)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("sandbox: not using the trampoline beside the executable; kiln re-executes itself instead (slower)", "err", err)
		}
		return self, nil
	}
	return t, nil
}

// openInit opens path and runs the open file as the trampoline's version
// stage: it must print this build's initProtocol.
func openInit(path string) (trampoline, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return trampoline{}, err
	}
	f, err := os.Open(abs)
	if err != nil {
		return trampoline{}, err
	}
	t := trampoline{name: abs, file: f}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.execPath())
	cmd.Args = []string{initArg0, stageVersion, "{}"}
	out, err := cmd.Output()
	if ctx.Err() != nil {
		f.Close()
		return trampoline{}, fmt.Errorf("%s: no answer in 10 s", abs)
	}
	got, want := strings.TrimSpace(string(out)), initProtocol()
	if err != nil || got != want {
		f.Close()
		if got == "" {
			got = fmt.Sprint(err)
		}
		return trampoline{}, fmt.Errorf("%s is not this kiln's sandbox trampoline (it says %.120q, want %q): "+
			"rebuild it with this kiln (./setup.sh builds bin/kiln-sandbox-init)", abs, got, want)
	}
	return t, nil
}

// InitBinary is the trampoline executable the Runner starts runs with
// (/proc/self/exe when it re-executes itself).
func (r *Runner) InitBinary() string { return r.init.name }
