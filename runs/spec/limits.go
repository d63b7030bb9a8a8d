package spec

import "github.com/kiln-dev/kiln/sandboxes"

// Limits are the sandbox limits of a spec's sandbox section.
func (sb Sandbox) Limits() sandboxes.Limits {
	return sandboxes.Limits{
		Wall: sb.WallTime.D(), CPU: sb.CPUTime.D(), Memory: int64(sb.MemoryMB) << 20,
		Procs: int64(sb.Processes), Output: int64(sb.OutputKB) << 10, FileSize: int64(sb.FileSizeMB) << 20,
	}
}
