package sandboxes

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// rootsParent makes a folder for scratch roots beside the shared test root
// (searchable by the box uids).
func rootsParent(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(testRoot), "roots-"+name)
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// names lists dir's entries ("" for an error other than not existing).
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// runOnce opens a box of r, runs echo in it and closes the box.
func runOnce(t *testing.T, r *Runner) {
	t.Helper()
	b, err := r.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res := run(t, b, Spec{Argv: []string{"echo", "hi"}}); !res.OK() {
		t.Errorf("echo: %s", res.Describe())
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseRemovesScratchRoot: a box leaves nothing in its Runner's
// instance directory once closed, and the last Runner of a scratch root to
// close removes the root (the one kiln makes per data folder under the temp
// folder, which was left behind empty before).
func TestCloseRemovesScratchRoot(t *testing.T) {
	t.Parallel()
	root := filepath.Join(rootsParent(t, "close"), "data")
	cfg := testConfig(2_100_130_000)
	cfg.ScratchRoot = root
	r1, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	runOnce(t, r1)
	if got := names(t, r1.instDir); len(got) != 1 || got[0] != "view" {
		t.Errorf("instance dir after the box closed: %v", got)
	}
	cfg.UIDBase = 2_100_140_000
	r2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	runOnce(t, r2)
	if err := r1.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, root); len(got) != 1 || got[0] != r2.instance {
		t.Fatalf("root after the first Close: %v, want only %s", got, r2.instance)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("scratch root left after the last Close: %v (holds %v)", err, names(t, root))
	}
	if err := r2.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestReclaimRoots: the empty roots and the roots holding only dead
// instances go (mounts included); roots of live Runners and anything that
// is not an instance stay.
func TestReclaimRoots(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root (tmpfs mount of the dead instance)")
	}
	parent := rootsParent(t, "reclaim")
	mk := func(p string) {
		if err := os.MkdirAll(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(parent, "empty"))
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	box := filepath.Join(parent, "dead", fmt.Sprintf("%d-12345-deadbeef", dead.Process.Pid), "box-0")
	mk(box)
	if err := unix.Mount("kiln-box", box, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	mk(filepath.Join(parent, "other", "not-an-instance"))
	if err := os.WriteFile(filepath.Join(parent, "note"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(2_100_150_000)
	cfg.ScratchRoot = filepath.Join(parent, "live")
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	if n := ReclaimRoots(parent, nil); n != 2 {
		t.Errorf("ReclaimRoots removed %d roots, want 2", n)
	}
	if got := fmt.Sprint(names(t, parent)); got != "[live note other]" {
		t.Errorf("left in the parent: %s", got)
	}
	for _, m := range mountPoints() {
		if m == box {
			t.Errorf("dead instance's mount left: %s", m)
			_ = unix.Unmount(m, unix.MNT_DETACH)
		}
	}
	runOnce(t, r) // the live Runner is untouched
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(names(t, parent)); got != "[note other]" {
		t.Errorf("left in the parent after Close: %s", got)
	}
}

// TestNewWhileRootsReclaimed: Runners keep starting in a root that another
// process's ReclaimRoots removes whenever it finds it empty.
func TestNewWhileRootsReclaimed(t *testing.T) {
	t.Parallel()
	parent := rootsParent(t, "race")
	cfg := testConfig(2_100_160_000)
	cfg.ScratchRoot = filepath.Join(parent, "data")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				ReclaimRoots(parent, nil)
			}
		}
	}()
	for i := 0; i < 6; i++ {
		r, err := New(cfg)
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("New %d: %v", i, err)
		}
		runOnce(t, r)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if got := names(t, parent); len(got) != 0 {
		t.Errorf("left in the parent: %v", got)
	}
}
