package sandboxes

import (
	"slices"
	"strings"
	"testing"
)

func TestParseLayers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    []Layer
		wantErr string
	}{
		{in: "uid", want: []Layer{LayerUID}},
		{in: "cgroups, seccomp", want: []Layer{LayerCgroups, LayerSeccomp}},
		{in: "uid,bogus", wantErr: `unknown layer "bogus" (known: uid, `},
		{in: "", wantErr: `unknown layer ""`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseLayers(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseLayers(%q) error %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ParseLayers(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			if back := JoinLayers(got, ","); strings.ReplaceAll(tc.in, " ", "") != back {
				t.Errorf("JoinLayers = %q, want %q", back, tc.in)
			}
		})
	}
}
