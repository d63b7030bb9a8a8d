package lanes

import (
	"fmt"
	"strings"
)

// Usage lists the lanes' verbs for kiln's usage text, a line each: kiln
// verify LANE for the lanes that judge one answer by hand, then the verbs
// of the lanes' own commands (such as bench compile).
func Usage() string {
	var b strings.Builder
	for _, k := range Kits() {
		if k.Verify != nil {
			fmt.Fprintf(&b, "  %-18s  judge one answer: %s\n", "verify "+k.Name, k.Verify.Usage)
		}
	}
	for _, k := range Kits() {
		for _, c := range k.Commands {
			fmt.Fprintf(&b, "  %-18s  %s\n", c.Verb, c.Summary)
		}
	}
	return b.String()
}
