package kit

import (
	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/tools"
)

// RepairPrompt is the repair turn after the failed verdict v: the lane's
// (Kit.Repair), or the agent's generic one where the lane has none or its
// own fails.
func (k *Kit) RepairPrompt(v tools.Verdict) string {
	if k.Repair != nil {
		if s, err := k.Repair(v); err == nil {
			return s
		}
	}
	return agent.RepairPrompt(v)
}
