package sandboxes

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAutomaticUIDRanges: runners that leave UIDBase zero get disjoint uid
// ranges, and a closed runner's range is handed out again.
func TestAutomaticUIDRanges(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("uid ranges are only used as root")
	}
	slots := filepath.Join(t.TempDir(), "slots")
	cfg := func() Config {
		c := testConfig(0)
		c.UIDSlotDir = slots
		return c
	}
	a, err := New(cfg())
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg())
	if err != nil {
		t.Fatal(err)
	}
	if a.cfg.UIDBase == b.cfg.UIDBase {
		t.Fatalf("two live runners share uid base %d", a.cfg.UIDBase)
	}
	if a.cfg.UIDBase != uidSlotBase || b.cfg.UIDBase != uidSlotBase+uidSlotStride {
		t.Errorf("bases %d and %d, want the first two slots", a.cfg.UIDBase, b.cfg.UIDBase)
	}
	if a.Capabilities().UIDs == b.Capabilities().UIDs {
		t.Errorf("capabilities report the same uid range %s", a.Capabilities().UIDs)
	}
	first := a.cfg.UIDBase
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := New(cfg())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer b.Close()
	if c.cfg.UIDBase != first {
		t.Errorf("after Close the range %d was not reused (got %d)", first, c.cfg.UIDBase)
	}
}
