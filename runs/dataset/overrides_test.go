package dataset

import (
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/runs/curate"
)

// TestOverridesApply checks that only the choices whose flag was given
// override the spec's, and the output choices and their checks.
func TestOverridesApply(t *testing.T) {
	t.Parallel()
	base := func() Overrides {
		return Overrides{Format: "raw", Think: "field", Texts: true, Dedup: true, Round: -1, Set: map[string]bool{}}
	}
	cases := []struct {
		name    string
		edit    func(x *Overrides)
		dest    Dest
		check   func(t *testing.T, o Options)
		wantErr string
	}{
		{name: "unset flags leave the spec's", edit: func(x *Overrides) { x.KeepSpeedup, x.Dedup, x.Validation = 9, false, 0.5 },
			dest: Dest{Dir: "d"},
			check: func(t *testing.T, o Options) {
				if o.Selection.KeepSpeedup != 7 || !o.Dedup || o.Validation != 0.2 {
					t.Errorf("keep %v dedup %v validation %v, want the spec's 7 true 0.2", o.Selection.KeepSpeedup, o.Dedup, o.Validation)
				}
			}},
		{name: "set flags override", edit: func(x *Overrides) {
			x.KeepSpeedup, x.Dedup, x.Validation, x.Select = 9, false, 0.5, "concur"
			x.Set = map[string]bool{"keep-speedup": true, "dedup": true, "validation": true, "select": true}
		}, dest: Dest{Dir: "d"},
			check: func(t *testing.T, o Options) {
				if o.Selection.KeepSpeedup != 9 || o.Dedup || o.Validation != 0.5 || o.Selection.Policy != curate.Concur {
					t.Errorf("keep %v dedup %v validation %v policy %v, want 9 false 0.5 concur", o.Selection.KeepSpeedup, o.Dedup, o.Validation, o.Selection.Policy)
				}
			}},
		{name: "one stream has no split, one round", edit: func(x *Overrides) { x.Round = 2 },
			check: func(t *testing.T, o Options) {
				if o.Validation != 0 || o.Round == nil || *o.Round != 2 {
					t.Errorf("validation %v round %v, want 0 and 2", o.Validation, o.Round)
				}
			}},
		{name: "bad select", edit: func(x *Overrides) { x.Select, x.Set["select"] = "bogus", true }, wantErr: "--select: "},
		{name: "bad stream", edit: func(x *Overrides) { x.Stream, x.Set["stream"] = "bogus", true }, wantErr: "--stream: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := base()
			tc.edit(&x)
			opt, err := x.Layout()
			if err != nil {
				t.Fatal(err)
			}
			opt.Selection.KeepSpeedup, opt.Validation = 7, 0.2 // the spec's
			err = x.Apply(&opt, tc.dest)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q...", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, opt)
		})
	}
}

func TestOverridesLayout(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		x       Overrides
		wantErr string
	}{
		{name: "ok", x: Overrides{Format: "messages", Think: "tags", Round: -1}},
		{name: "format", x: Overrides{Format: "bogus", Think: "field", Round: -1}, wantErr: "--format: "},
		{name: "think", x: Overrides{Format: "raw", Think: "bogus", Round: -1}, wantErr: "--think: "},
		{name: "all with a trainer format", x: Overrides{Format: "messages", Think: "field", All: true, Round: -1}, wantErr: "--all is"},
		{name: "all with select", x: Overrides{Format: "raw", Think: "field", All: true, Round: -1, Set: map[string]bool{"select": true}}, wantErr: "--all is"},
		{name: "round", x: Overrides{Format: "raw", Think: "field", Round: -2}, wantErr: "--round -2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.x.Layout()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}
