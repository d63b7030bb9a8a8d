package runs

import (
	"context"
	"maps"
	"testing"
)

// TestFaults: counts add up per campaign and class, survive a reopen, and
// stay apart between campaigns.
func TestFaults(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := mustCampaign(t, s, "a"), mustCampaign(t, s, "b")
	for _, f := range []struct{ c, class string }{{a.ID, "rate_limited"}, {a.ID, "rate_limited"}, {a.ID, "timeout"}, {b.ID, "truncated"}} {
		if err := s.AddFault(ctx, f.c, f.class); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddFault(ctx, a.ID, ""); err == nil {
		t.Error("empty class accepted")
	}
	if err := s.AddFault(ctx, "no-such-campaign", "timeout"); err == nil {
		t.Error("fault for an unknown campaign accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id, want := range map[string]map[string]int{a.ID: {"rate_limited": 2, "timeout": 1}, b.ID: {"truncated": 1}} {
		got, err := s.Faults(ctx, id)
		if err != nil || !maps.Equal(got, want) {
			t.Errorf("campaign %s: %v %v, want %v", id, got, err, want)
		}
	}
	if got, err := s.Faults(ctx, "none"); err != nil || len(got) != 0 {
		t.Errorf("unknown campaign: %v %v", got, err)
	}
}
