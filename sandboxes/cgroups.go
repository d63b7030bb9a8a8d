package sandboxes

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cgroups: each run gets a memory and a pids cgroup (and, where cgroup v2
// is mounted, a v2 cgroup for cgroup.kill), created below the daemon's own
// cgroup in each hierarchy as kiln-sandboxes/<instance>/run-<n>, joined by
// stage 2 just before it execs the target (so the trampoline's own
// processes are not counted), killed and removed after the run. cgroup v1
// and v2 are both handled, and hybrid hosts (v1 controllers, v2 kill).

const cgroupParent = "kiln-sandboxes"

// cgroupHier is one hierarchy we use: dir is our instance directory in it.
type cgroupHier struct {
	dir    string
	v2     bool
	memory bool
	pids   bool
	// memsw: v1 memory.memsw.limit_in_bytes exists (swap accounting).
	memsw bool
	// kill: v2 cgroup.kill exists.
	kill bool
}

// cgroups is the Runner's set of hierarchies; nil when the layer is off.
type cgroups struct {
	hiers  []cgroupHier
	detail string
}

type cgroupMount struct {
	point, root string
	v2          bool
	opts        []string
}

// cgroupMounts parses /proc/self/mountinfo for cgroup file systems.
func cgroupMounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []cgroupMount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root point opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		switch qf[0] {
		case "cgroup":
			out = append(out, cgroupMount{point: unescapeMount(pf[4]), root: unescapeMount(pf[3]), opts: strings.Split(qf[2], ",")})
		case "cgroup2":
			out = append(out, cgroupMount{point: unescapeMount(pf[4]), root: unescapeMount(pf[3]), v2: true})
		}
	}
	return out, sc.Err()
}

func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// ownCgroups maps "memory", "pids", ... and "" (v2) to this process's
// cgroup path, from /proc/self/cgroup.
func ownCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

// ownDir is the directory of our cgroup in mount m.
func ownDir(m cgroupMount, path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, m.root)
	if !ok && m.root != "/" {
		return "", false
	}
	if !ok {
		rel = path
	}
	return filepath.Join(m.point, rel), true
}

// setupCgroups finds the hierarchies, reclaims stale instances left by
// dead daemons and creates this instance's directories. It returns nil and
// why when memory and pids cannot both be limited.
func setupCgroups(instance, parentPath string, alive func(string) bool) (*cgroups, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	own, err := ownCgroupPaths(parentPath)
	if err != nil {
		return nil, err
	}
	memH, pidsH, killH, v2why := prepareHierarchies(mounts, own, instance, alive)
	cg := collectCgroups(memH, pidsH, killH)
	if memH == nil || pidsH == nil {
		cg.remove()
		why := "no memory and pids controllers mounted"
		if v2why != "" {
			why = v2why
		} else if memH != nil {
			why = "no pids controller"
		} else if pidsH != nil {
			why = "no memory controller"
		}
		return nil, errors.New(why)
	}
	return cg, nil
}

// ownCgroupPaths is ownCgroups' map; when parentPath is set, every entry,
// and the v2, memory and pids entries in any case, are parentPath instead.
func ownCgroupPaths(parentPath string) (map[string]string, error) {
	own, err := ownCgroups()
	if err != nil {
		return nil, fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	if parentPath != "" {
		for k := range own {
			own[k] = parentPath
		}
		for _, c := range []string{"", "memory", "pids"} {
			own[c] = parentPath
		}
	}
	return own, nil
}

// prepareHierarchies creates this instance's directory in each usable
// hierarchy of mounts, in mount order, and returns the first with memory,
// with pids and with cgroup.kill (nil where none), and the last reason a
// hierarchy or a controller could not be used ("" if none).
func prepareHierarchies(mounts []cgroupMount, own map[string]string, instance string, alive func(string) bool) (memH, pidsH, killH *cgroupHier, v2why string) {
	for _, m := range mounts {
		if m.v2 {
			h, ok, why := prepareV2Hierarchy(m, own[""], instance, alive)
			if why != "" {
				v2why = why
			}
			if !ok {
				continue
			}
			hh := h
			if h.memory && memH == nil {
				memH = &hh
			}
			if h.pids && pidsH == nil {
				pidsH = &hh
			}
			if h.kill && killH == nil {
				killH = &hh
			}
			continue
		}
		for _, c := range []string{"memory", "pids"} {
			if !contains(m.opts, c) || (c == "memory" && memH != nil) || (c == "pids" && pidsH != nil) {
				continue
			}
			h, ok, why := prepareV1Hierarchy(m, c, own[c], instance, alive)
			if why != "" {
				v2why = why
			}
			if !ok {
				continue
			}
			if c == "memory" {
				memH = &h
			} else {
				pidsH = &h
			}
		}
	}
	return memH, pidsH, killH, v2why
}

// prepareV2Hierarchy enables memory and pids for our children in the v2
// mount m where it can, and creates this instance's directory below our
// cgroup ownPath. ok is false when the mount is not usable; why is the
// last reason a controller or the mount could not be used ("" if none).
func prepareV2Hierarchy(m cgroupMount, ownPath, instance string, alive func(string) bool) (h cgroupHier, ok bool, why string) {
	base, ok := ownDir(m, ownPath)
	if !ok {
		return h, false, ""
	}
	h = cgroupHier{v2: true}
	ctrl, _ := os.ReadFile(filepath.Join(base, "cgroup.controllers"))
	avail := strings.Fields(string(ctrl))
	// Enabling a controller for our children needs it in our own
	// subtree_control: possible only if we are the root cgroup or it
	// is already delegated (cgroup v2 forbids processes in inner
	// cgroups with controllers).
	sub, _ := os.ReadFile(filepath.Join(base, "cgroup.subtree_control"))
	enabled := strings.Fields(string(sub))
	for _, c := range []string{"memory", "pids"} {
		if !contains(avail, c) {
			continue
		}
		if !contains(enabled, c) {
			if werr := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+"+c), 0); werr != nil {
				why = fmt.Sprintf("cgroup v2: %s not delegated to %s (%v)", c, base, errors.Unwrap(werr))
				continue
			}
		}
		if c == "memory" {
			h.memory = true
		} else {
			h.pids = true
		}
	}
	h.dir = filepath.Join(base, cgroupParent, instance)
	if err := prepareInstance(base, instance, &h, alive); err != nil {
		return h, false, "cgroup v2: " + err.Error()
	}
	h.kill = fileExists(filepath.Join(h.dir, "cgroup.kill"))
	return h, true, why
}

// prepareV1Hierarchy creates this instance's directory in the v1 mount m
// of controller c ("memory" or "pids") below our cgroup ownPath. ok is
// false when the mount is not usable; why says why when it failed.
func prepareV1Hierarchy(m cgroupMount, c, ownPath, instance string, alive func(string) bool) (h cgroupHier, ok bool, why string) {
	base, ok := ownDir(m, ownPath)
	if !ok {
		return h, false, ""
	}
	h = cgroupHier{dir: filepath.Join(base, cgroupParent, instance), memory: c == "memory", pids: c == "pids"}
	if err := prepareInstance(base, instance, &h, alive); err != nil {
		return h, false, fmt.Sprintf("cgroup v1 %s: %v", c, err)
	}
	if c == "memory" {
		h.memsw = fileExists(filepath.Join(h.dir, "memory.memsw.limit_in_bytes"))
	}
	return h, true, ""
}

// collectCgroups is the set of the chosen hierarchies, each directory
// once, with a description of which gives memory, pids and kill.
func collectCgroups(memH, pidsH, killH *cgroupHier) *cgroups {
	cg := &cgroups{}
	var parts []string
	seen := map[string]bool{}
	for _, h := range []*cgroupHier{memH, pidsH, killH} {
		if h == nil || seen[h.dir] {
			continue
		}
		seen[h.dir] = true
		cg.hiers = append(cg.hiers, *h)
	}
	describe := func(h *cgroupHier, what string) {
		if h == nil {
			return
		}
		v := "v1"
		if h.v2 {
			v = "v2"
		}
		parts = append(parts, v+" "+what)
	}
	describe(memH, "memory")
	describe(pidsH, "pids")
	describe(killH, "kill")
	cg.detail = strings.Join(parts, ", ")
	return cg
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// prepareInstance creates base/kiln-sandboxes/instance after removing the
// instances of dead daemons.
func prepareInstance(base, instance string, h *cgroupHier, alive func(string) bool) error {
	parent := filepath.Join(base, cgroupParent)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if h.v2 {
		enableControllers(parent, h)
	}
	if ents, err := os.ReadDir(parent); err == nil {
		for _, e := range ents {
			if e.IsDir() && e.Name() != instance && !alive(e.Name()) {
				removeCgroupTree(filepath.Join(parent, e.Name()), h.v2)
			}
		}
	}
	err := os.Mkdir(h.dir, 0o755)
	if errors.Is(err, os.ErrNotExist) {
		// Another Runner's Close removed the (then empty) parent: again.
		if err = os.Mkdir(parent, 0o755); err == nil || errors.Is(err, os.ErrExist) {
			if h.v2 {
				enableControllers(parent, h)
			}
			err = os.Mkdir(h.dir, 0o755)
		}
	}
	if err != nil {
		return err
	}
	if h.v2 {
		enableControllers(h.dir, h)
	}
	return nil
}

func enableControllers(dir string, h *cgroupHier) {
	var c []string
	if h.memory {
		c = append(c, "+memory")
	}
	if h.pids {
		c = append(c, "+pids")
	}
	if len(c) > 0 {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.Join(c, " ")), 0)
	}
}

// remove deletes this instance's directories (runs must be over).
func (c *cgroups) remove() {
	if c == nil {
		return
	}
	for _, h := range c.hiers {
		removeCgroupTree(h.dir, h.v2)
		// The shared parent too, once no instance is left in it (it sits
		// in the daemon's own cgroup, which its manager may want to remove).
		_ = syscall.Rmdir(filepath.Dir(h.dir))
	}
}

// removeCgroupTree kills what is left in dir and its children and removes
// them, deepest first.
func removeCgroupTree(dir string, v2 bool) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			removeCgroupTree(filepath.Join(dir, e.Name()), v2)
		}
	}
	killCgroup(dir, v2)
	rmdirRetry(dir)
}

// killCgroup kills every process in dir: cgroup.kill on v2, else SIGKILL
// to each listed process until none is left.
func killCgroup(dir string, v2 bool) {
	if v2 && os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	for i := 0; i < 50; i++ {
		pids := cgroupProcs(dir)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func cgroupProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// rmdirRetry removes a cgroup directory; it is busy for a moment after its
// last process died.
func rmdirRetry(dir string) {
	for i := 0; i < 200; i++ {
		err := syscall.Rmdir(dir)
		if err == nil || err == syscall.ENOENT {
			return
		}
		if err != syscall.EBUSY {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// runCgroup is one run's set of cgroup directories.
type runCgroup struct {
	dirs []string
	c    *cgroups
}

// create makes the run's cgroups and writes the limits.
func (c *cgroups) create(name string, lim Limits) (*runCgroup, error) {
	rc := &runCgroup{c: c}
	for _, h := range c.hiers {
		dir := filepath.Join(h.dir, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			rc.destroy()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
		rc.dirs = append(rc.dirs, dir)
		var writes [][2]string
		if h.memory && lim.RSS > 0 {
			v := strconv.FormatInt(lim.RSS, 10)
			if h.v2 {
				writes = append(writes, [2]string{"memory.max", v}, [2]string{"memory.swap.max", "0"})
			} else {
				writes = append(writes, [2]string{"memory.limit_in_bytes", v})
				if h.memsw {
					writes = append(writes, [2]string{"memory.memsw.limit_in_bytes", v})
				}
			}
		}
		if h.pids && lim.Procs > 0 {
			writes = append(writes, [2]string{"pids.max", strconv.FormatInt(lim.Procs, 10)})
		}
		for _, w := range writes {
			if err := os.WriteFile(filepath.Join(dir, w[0]), []byte(w[1]), 0); err != nil {
				if w[0] == "memory.swap.max" && errors.Is(err, os.ErrNotExist) {
					continue // no swap accounting: no swap to escape to either
				}
				rc.destroy()
				return nil, fmt.Errorf("cgroup %s: %w", w[0], err)
			}
		}
	}
	return rc, nil
}

// procsFiles are the cgroup.procs files stage 2 writes itself into.
func (rc *runCgroup) procsFiles() []string {
	out := make([]string, len(rc.dirs))
	for i, d := range rc.dirs {
		out[i] = filepath.Join(d, "cgroup.procs")
	}
	return out
}

// oomKills reads how many processes the OOM killer ended in the run.
func (rc *runCgroup) oomKills() int {
	for i, h := range rc.c.hiers {
		if !h.memory {
			continue
		}
		file, key := "memory.oom_control", "oom_kill"
		if h.v2 {
			file = "memory.events"
		}
		b, err := os.ReadFile(filepath.Join(rc.dirs[i], file))
		if err != nil {
			return 0
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, key+" "); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				return n
			}
		}
	}
	return 0
}

// destroy kills anything left and removes the directories.
func (rc *runCgroup) destroy() {
	for i, d := range rc.dirs {
		killCgroup(d, rc.c.hiers[i].v2)
	}
	for _, d := range rc.dirs {
		rmdirRetry(d)
	}
}
