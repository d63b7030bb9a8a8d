package rounds

import (
	"context"
	"errors"
	"testing"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools/kit"
)

// TestForkerMoreConflicts checks which of the dashboard refine button's
// errors are conflicts with the campaign (the user's, marked with their
// message only) and which are not.
func TestForkerMoreConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := runs.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const yaml = "name: m\nlane: c2x86\nmodels:\n  - {name: a, kind: openai, base_url: \"http://127.0.0.1:8000/v1\", model: m}\n"
	camp, err := st.CreateCampaign(ctx, runs.Campaign{Name: "m", Lane: "c2x86", Spec: []byte(yaml), SpecDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	noTasks := errors.New("no tasks")
	noLanes := errors.New("no lanes")
	cases := []struct {
		name      string
		id        string
		lanes     []string // spec options' known lanes
		sourceErr error
		lanesErr  error
		conflict  bool
		wantIs    error
	}{
		{name: "unknown campaign", id: "nosuch", lanes: []string{"c2x86"}, wantIs: runs.ErrNotFound},
		{name: "spec refused", id: camp.ID, lanes: []string{"other"}, conflict: true},
		{name: "no task set", id: camp.ID, lanes: []string{"c2x86"}, sourceErr: noTasks, conflict: true},
		{name: "no lanes", id: camp.ID, lanes: []string{"c2x86"}, sourceErr: nil, lanesErr: noLanes, wantIs: noLanes},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &Forker{Store: st,
				Options: func(dir string) spec.Options { return spec.Options{Lanes: tc.lanes, Dir: dir} },
				Source: func(context.Context, *spec.Spec) (*kit.TaskSet, error) {
					if tc.sourceErr != nil {
						return nil, tc.sourceErr
					}
					return &kit.TaskSet{}, nil
				},
				Lanes: func() (*kit.Registry, error) { return nil, tc.lanesErr },
				Check: func(context.Context, *spec.Spec) error { t.Error("Check called before the plan passed"); return nil },
			}
			_, err := f.More(ctx, tc.id, 1, nil)
			if err == nil {
				t.Fatal("More succeeded")
			}
			if got := errors.Is(err, api.ErrConflict); got != tc.conflict {
				t.Errorf("conflict %v, want %v: %v", got, tc.conflict, err)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v, want one wrapping %v", err, tc.wantIs)
			}
		})
	}
}
