package spec

import (
	"fmt"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/sandboxes"
)

// Limits are the sandbox limits of a spec's sandbox section.
func (sb Sandbox) Limits() sandboxes.Limits {
	return sandboxes.Limits{
		Wall: sb.WallTime.D(), CPU: sb.CPUTime.D(), Memory: int64(sb.MemoryMB) << 20,
		Procs: int64(sb.Processes), Output: int64(sb.OutputKB) << 10, FileSize: int64(sb.FileSizeMB) << 20,
	}
}

// ToolMode is the tools mode of the spec's endpoints, which must all use
// the same one.
func (sp *Spec) ToolMode() (agent.ToolMode, error) {
	mode := agent.ToolMode(sp.Models[0].Tools)
	for _, m := range sp.Models[1:] {
		if agent.ToolMode(m.Tools) != mode {
			return "", fmt.Errorf("models[%s].tools: all endpoints of a campaign must use the same tools mode (%s)", m.Name, mode)
		}
	}
	return mode, nil
}
