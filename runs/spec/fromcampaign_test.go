package spec

import (
	"strings"
	"testing"
)

// TestFromCampaign: tasks.from_campaign names a campaign whose verified
// records are the tasks; it leaves tasks.corpus unset (no builtin
// default) and excludes tasks.corpus and tasks.templates.
func TestFromCampaign(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(minimal+"tasks: {from_campaign: cass-overnight, limit: 5}\n"), "c.yaml", Options{CheckPaths: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Tasks.FromCampaign != "cass-overnight" || s.Tasks.Corpus != "" || s.Tasks.Templates != nil || s.Tasks.Limit != 5 || s.Tasks.SamplesPerTask != 1 {
		t.Errorf("tasks %+v", s.Tasks)
	}
	for _, c := range []struct{ tasks, want string }{
		{"{from_campaign: x, corpus: builtin}", "c.yaml:5: tasks.from_campaign: cannot be used together with tasks.corpus"},
		{"{from_campaign: x, templates: {dir: builtin}}", "c.yaml:5: tasks.from_campaign: cannot be used together with tasks.templates"},
		{"{from_campain: x}", `tasks.from_campain: unknown field (did you mean "from_campaign"?)`},
		{"{corpus: \"\"}", `tasks.corpus: required ("builtin", "bench" or a folder), or give tasks.templates or tasks.from_campaign`},
	} {
		_, err := Parse([]byte(minimal+"tasks: "+c.tasks+"\n"), "c.yaml", Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tasks: %s: %v, want %q", c.tasks, err, c.want)
		}
	}
}
