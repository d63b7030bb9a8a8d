package toolchain

import (
	"log/slog"
	"path/filepath"
)

// HostConfig is the configuration kiln detects a host's toolchains with:
// the derived device libraries and the probe cache in dir, torch in
// whichever python3 the folders of path (the user's PATH) find first (a
// virtualenv on GPU hosts), else the system's. With probe false only
// versions and paths are read.
func HostConfig(dir, path string, probe bool, log *slog.Logger) (Config, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Config{}, err
	}
	return Config{
		Names:        map[string][]string{Torch: pythonCandidates(path)},
		DeviceLibDir: filepath.Join(dir, "rocm-device-libs"),
		ProbeCache:   filepath.Join(dir, "toolchain-probe.json"),
		SkipProbes:   !probe,
		Logger:       log,
	}, nil
}

// pythonCandidates lists the python3 executables of path's folders, in
// order, then "python3" (looked up in the registry's own path).
func pythonCandidates(path string) []string {
	var out []string
	for _, dir := range filepath.SplitList(path) {
		if filepath.IsAbs(dir) {
			out = append(out, filepath.Join(dir, "python3"))
		}
	}
	return append(out, "python3")
}
