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

// findInit picks the trampoline executable (Config.InitBinary's rules):
// one named in the config or the environment must work; one found beside
// the executable is used only if it does; else this executable.
func findInit(configured string, log *slog.Logger) (string, error) {
	path, from := configured, "Config.InitBinary"
	if path == "" {
		path, from = os.Getenv(InitBinaryEnv), "$"+InitBinaryEnv
	}
	if path != "" {
		abs, err := checkInit(path)
		if err != nil {
			return "", fmt.Errorf("sandboxes: %s: %w", from, err)
		}
		return abs, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return selfExe, nil
	}
	beside := filepath.Join(filepath.Dir(exe), initArg0)
	if beside == exe {
		return selfExe, nil
	}
	abs, err := checkInit(beside)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("sandbox: not using the trampoline beside the executable; kiln re-executes itself instead (slower)", "err", err)
		}
		return selfExe, nil
	}
	return abs, nil
}

// checkInit runs path as the trampoline's version stage: it must print
// this build's initProtocol. It returns path made absolute.
func checkInit(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, abs)
	cmd.Args = []string{initArg0, stageVersion, "{}"}
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s: no answer in 10 s", abs)
	}
	got, want := strings.TrimSpace(string(out)), initProtocol()
	if err != nil || got != want {
		if got == "" {
			got = fmt.Sprint(err)
		}
		return "", fmt.Errorf("%s is not this kiln's sandbox trampoline (it says %.120q, want %q): "+
			"rebuild it with this kiln (./setup.sh builds bin/kiln-sandbox-init)", abs, got, want)
	}
	return abs, nil
}

// InitBinary is the trampoline executable the Runner starts runs with
// (/proc/self/exe when it re-executes itself).
func (r *Runner) InitBinary() string { return r.initPath }
