package refinement_test

import (
	"testing"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/tools"
)

// The class constants mirror tools.FailureClass (refinement may not import
// tools); this keeps them in step.
func TestClassesMirrorTools(t *testing.T) {
	t.Parallel()
	pairs := []struct {
		ours   string
		theirs tools.FailureClass
	}{
		{refinement.ClassNoAnswer, tools.ClassNoAnswer},
		{refinement.ClassAssembleError, tools.ClassAssembleError},
		{refinement.ClassCompileError, tools.ClassCompileError},
		{refinement.ClassLinkError, tools.ClassLinkError},
		{refinement.ClassCrash, tools.ClassCrash},
		{refinement.ClassTimeout, tools.ClassTimeout},
		{refinement.ClassWrongOutput, tools.ClassWrongOutput},
		{refinement.ClassResourceLimit, tools.ClassResourceLimit},
		{refinement.ClassModelError, tools.ClassModelError},
		{refinement.ClassInternal, tools.ClassInternal},
		{refinement.ClassReferenceError, tools.ClassReferenceError},
	}
	for _, p := range pairs {
		if p.ours != string(p.theirs) {
			t.Errorf("refinement %q != tools %q", p.ours, p.theirs)
		}
	}
}
