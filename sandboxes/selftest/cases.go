package selftest

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
)

// hostileCase is one attack: run builds and runs it in the trial's box and
// judges the outcome; the suite then checks processes, files and secrets.
type hostileCase struct {
	name string
	// needs are layers without which the case is skipped rather than
	// failed (the damage it would do depends on them).
	needs   []sandboxes.Layer
	maxWall time.Duration
	run     func(t *trial) error
}

func expectOutcome(res sandboxes.Result, want ...sandboxes.Outcome) error {
	for _, w := range want {
		if res.Outcome() == w {
			return nil
		}
	}
	return fmt.Errorf("outcome %s (%s), want %v", res.Outcome(), res.Describe(), want)
}

// runProg runs ./prog with args and limits.
func (t *trial) runProg(lim sandboxes.Limits, args ...string) (sandboxes.Result, error) {
	return t.run(sandboxes.Spec{Argv: append([]string{"./prog"}, args...), Limits: lim})
}

// buildAndRun compiles src and runs it; the outcome must be one of want.
func buildAndRun(src string, lim sandboxes.Limits, want ...sandboxes.Outcome) func(t *trial) error {
	return func(t *trial) error {
		if err := t.buildC(src); err != nil {
			return err
		}
		res, err := t.runProg(lim)
		if err != nil {
			return err
		}
		t.note = res.Describe()
		return expectOutcome(res, want...)
	}
}

func hostileCases() []hostileCase {
	return []hostileCase{
		{
			name:    "infinite-loop",
			maxWall: 10 * time.Second,
			run: buildAndRun(`int main(void) { for (;;) ; }`,
				sandboxes.Limits{Wall: time.Second, CPU: 10 * time.Second}, sandboxes.OutcomeTimeout),
		},
		{
			name:    "cpu-limit",
			maxWall: 10 * time.Second,
			run: buildAndRun(`int main(void) { for (;;) ; }`,
				sandboxes.Limits{Wall: 10 * time.Second, CPU: time.Second}, sandboxes.OutcomeResourceLimit),
		},
		{
			name:    "pause-forever",
			maxWall: 10 * time.Second,
			run: buildAndRun("#include <unistd.h>\nint main(void) { for (;;) pause(); }",
				sandboxes.Limits{Wall: time.Second}, sandboxes.OutcomeTimeout),
		},
		{name: "fork-bomb", maxWall: 15 * time.Second, run: forkBomb},
		{name: "memory-hog", maxWall: 15 * time.Second, run: memoryHog},
		{name: "disk-filler", maxWall: 30 * time.Second, needs: []sandboxes.Layer{sandboxes.LayerScratch}, run: diskFiller},
		{name: "inode-bomb", maxWall: 30 * time.Second, needs: []sandboxes.Layer{sandboxes.LayerScratch}, run: inodeBomb},
		{name: "huge-stdout", maxWall: 20 * time.Second, run: hugeStdout},
		{name: "network", maxWall: 15 * time.Second, run: network},
		{name: "write-outside", maxWall: 10 * time.Second, run: writeOutside},
		{name: "read-secrets", maxWall: 10 * time.Second, run: readSecrets},
		{name: "symlink-plant", maxWall: 10 * time.Second, run: symlinkPlant},
		{name: "orphans", maxWall: 15 * time.Second, run: orphans},
		{name: "incbin-secret", maxWall: 30 * time.Second, run: incbinSecret},
		{name: "compile-bomb-macro", maxWall: 30 * time.Second, run: macroBomb},
		{name: "compile-bomb-fill", maxWall: 30 * time.Second, run: fillBomb},
		{name: "privileged-syscalls", maxWall: 10 * time.Second, needs: []sandboxes.Layer{sandboxes.LayerSeccomp}, run: privilegedSyscalls},
		{name: "x32-syscall", maxWall: 10 * time.Second, needs: []sandboxes.Layer{sandboxes.LayerSeccomp}, run: x32Syscall},
		{name: "signal-trampoline", maxWall: 10 * time.Second, run: signalTrampoline},
	}
}

func forkBomb(t *trial) error {
	err := t.buildC(`#include <stdio.h>
#include <unistd.h>
int main(void) { int said = 0; for (;;) { pid_t p = fork(); if (p == 0) for (;;) ;
if (p < 0 && !said) { said = 1; fputs("fork failed\n", stderr); } } }`)
	if err != nil {
		return err
	}
	res, err := t.runProg(sandboxes.Limits{Wall: 2 * time.Second, Procs: 32})
	if err != nil {
		return err
	}
	t.note = res.Describe()
	if err := expectOutcome(res, sandboxes.OutcomeTimeout); err != nil {
		return err
	}
	if !strings.Contains(string(res.Stderr), "fork failed") {
		return errors.New("forks never failed: no process limit")
	}
	t.note += "; forks refused at the process limit"
	return nil
}

const hogSrc = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) { size_t step = 64 << 20, total = 0;
for (int i = 0; i < 64; i++) { char *p = malloc(step); if (!p) { printf("alloc failed at %zu MiB\n", total >> 20); return 3; }
memset(p, 1, step); total += step; } printf("allocated %zu MiB\n", total >> 20); return 0; }`

func memoryHog(t *trial) error {
	if err := t.buildC(hogSrc); err != nil {
		return err
	}
	// 4 GiB wanted. With cgroups, no address-space limit: the cgroup must
	// stop it; without, RLIMIT_AS must.
	lim := sandboxes.Limits{Wall: 10 * time.Second, Memory: noLimitIf(t.env.active(sandboxes.LayerCgroups), 256<<20), RSS: 128 << 20}
	res, err := t.runProg(lim)
	if err != nil {
		return err
	}
	t.note = res.Describe() + " " + strings.TrimSpace(string(res.Stdout))
	if res.Killed == sandboxes.KillMemory || res.ExitCode == 3 {
		return nil
	}
	return fmt.Errorf("memory hog not stopped: %s, stdout %q", res.Describe(), clip(res.Stdout))
}

// noLimitIf returns sandboxes.NoLimit when cond holds, else v.
func noLimitIf(cond bool, v int64) int64 {
	if cond {
		return sandboxes.NoLimit
	}
	return v
}

func diskFiller(t *trial) error {
	err := t.buildC(`#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
static char buf[1 << 20];
int main(void) { memset(buf, 'x', sizeof buf); long total = 0; char name[32];
for (int i = 0; ; i++) { snprintf(name, sizeof name, "fill%d", i);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) { printf("open failed after %ld MiB: %s\n", total >> 20, strerror(errno)); return 0; }
  for (int j = 0; j < 16; j++) { ssize_t w = write(fd, buf, sizeof buf);
    if (w > 0 && w < (ssize_t)sizeof buf) w = write(fd, buf, sizeof buf); /* a short write: the next one says why */
    if (w != sizeof buf) { printf("write failed after %ld MiB: %s\n", total >> 20, strerror(errno)); return 0; }
    total += sizeof buf; }
  close(fd); } }`)
	if err != nil {
		return err
	}
	// The scratch pages are RAM: give the cgroup room for the scratch.
	res, err := t.runProg(sandboxes.Limits{Wall: 20 * time.Second, RSS: 8 << 30})
	if err != nil {
		return err
	}
	t.note = strings.TrimSpace(string(res.Stdout))
	if !strings.Contains(string(res.Stdout), "No space left on device") {
		return fmt.Errorf("disk filler: %s, stdout %q", res.Describe(), clip(res.Stdout))
	}
	return nil
}

func inodeBomb(t *trial) error {
	err := t.buildC(`#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
int main(void) { char name[32];
for (long i = 0; i < 10000000; i++) { snprintf(name, sizeof name, "n%ld", i);
  int fd = open(name, O_WRONLY | O_CREAT, 0600);
  if (fd < 0) { printf("create failed after %ld files: %s\n", i, strerror(errno)); return 0; } close(fd); }
puts("ten million files"); return 1; }`)
	if err != nil {
		return err
	}
	res, err := t.runProg(sandboxes.Limits{Wall: 20 * time.Second})
	if err != nil {
		return err
	}
	t.note = strings.TrimSpace(string(res.Stdout))
	if !strings.Contains(string(res.Stdout), "No space left on device") {
		return fmt.Errorf("inode bomb: %s, stdout %q", res.Describe(), clip(res.Stdout))
	}
	return nil
}

func hugeStdout(t *trial) error {
	err := t.buildC(`#include <string.h>
#include <stdlib.h>
#include <unistd.h>
static char buf[1 << 16];
int main(int c, char **v) { long n = atol(v[1]) << 20; memset(buf, 'y', sizeof buf);
for (long w = 0; n < 0 || w < n; w += sizeof buf) if (write(1, buf, sizeof buf) < 0) return 1; return 0; }`)
	if err != nil {
		return err
	}
	const cap = 1 << 20
	// Endless output, kill at the cap.
	res, err := t.run(sandboxes.Spec{Argv: []string{"./prog", "-1"}, KillOnOutputCap: true,
		Limits: sandboxes.Limits{Wall: 10 * time.Second, Output: cap}})
	if err != nil {
		return err
	}
	if res.Killed != sandboxes.KillOutput || len(res.Stdout) > cap || !res.StdoutTruncated {
		return fmt.Errorf("endless output: %s, %d bytes kept", res.Describe(), len(res.Stdout))
	}
	// 64 MiB, the excess discarded.
	res, err = t.run(sandboxes.Spec{Argv: []string{"./prog", "64"}, Limits: sandboxes.Limits{Wall: 10 * time.Second, Output: cap}})
	if err != nil {
		return err
	}
	if !res.OK() || len(res.Stdout) != cap || !res.StdoutTruncated {
		return fmt.Errorf("64 MiB output: %s, %d bytes kept", res.Describe(), len(res.Stdout))
	}
	t.note = "killed at the cap; 64 MiB kept to 1 MiB"
	return nil
}

func network(t *trial) error {
	err := t.buildC(`#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netlink.h>
static int ok = 0;
static void say(const char *what, int r) { if (r >= 0) { printf("%s: SUCCEEDED\n", what); ok++; } else printf("%s: %s\n", what, strerror(errno)); }
int main(int c, char **v) {
  struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_addr.s_addr = htonl(0x7f000001);
  a.sin_port = htons(atoi(v[1]));
  int s = socket(AF_INET, SOCK_STREAM, 0); say("tcp socket", s);
  if (s >= 0) say("tcp connect loopback", connect(s, (struct sockaddr *)&a, sizeof a));
  a.sin_port = htons(atoi(v[2]));
  int u = socket(AF_INET, SOCK_DGRAM, 0); say("udp socket", u);
  if (u >= 0) { int r = sendto(u, "KILN-UDP", 8, 0, (struct sockaddr *)&a, sizeof a); printf("udp sendto loopback: %s\n", r >= 0 ? "sent" : strerror(errno)); }
  struct sockaddr_in any = {0}; any.sin_family = AF_INET; any.sin_port = htons(8080);
  int l = socket(AF_INET, SOCK_STREAM, 0);
  if (l >= 0) say("tcp bind", bind(l, (struct sockaddr *)&any, sizeof any));
  say("ipv6 socket", socket(AF_INET6, SOCK_STREAM, 0));
  say("netlink socket", socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE));
  say("packet socket", socket(AF_PACKET, SOCK_RAW, 0));
  say("unix socket", socket(AF_UNIX, SOCK_STREAM, 0));
  return 0; }`)
	if err != nil {
		return err
	}
	tport := strconv.Itoa(t.env.tcp.Addr().(*net.TCPAddr).Port)
	uport := strconv.Itoa(t.env.udp.LocalAddr().(*net.UDPAddr).Port)
	res, err := t.runProg(sandboxes.Limits{Wall: 5 * time.Second}, tport, uport)
	if err != nil {
		return err
	}
	out := string(res.Stdout)
	t.note = strings.Join(strings.Fields(strings.ReplaceAll(out, "\n", "; ")), " ")
	if !res.OK() {
		return fmt.Errorf("%s: %s", res.Describe(), clip(res.Stderr))
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, "SUCCEEDED") && !strings.HasPrefix(line, "unix socket") {
			return fmt.Errorf("network: %s", line)
		}
	}
	select {
	case <-t.env.accepted:
		return errors.New("the host TCP listener accepted a connection from the box")
	case <-time.After(100 * time.Millisecond):
	}
	if got := t.env.udpReceived(); got != "" {
		return fmt.Errorf("the host UDP listener received %q", got)
	}
	return nil
}

func writeOutside(t *trial) error {
	err := t.buildC(`#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
int main(int c, char **v) { int bad = 0;
for (int i = 1; i < c; i++) {
  int fd = open(v[i], O_WRONLY | O_CREAT | O_EXCL, 0666);
  if (fd >= 0) { write(fd, "x", 1); close(fd); printf("created %s\n", v[i]); continue; }
  printf("refused %s: %s\n", v[i], strerror(errno));
  char d[4200]; snprintf(d, sizeof d, "%s.d", v[i]);
  if (mkdir(d, 0777) == 0) printf("created dir %s\n", d);
}
return 0; }`)
	if err != nil {
		return err
	}
	uniq := filepath.Base(t.env.dir)
	targets := []string{
		filepath.Join(t.env.canary, "escaped"),
		"/escaped-" + uniq, "/usr/escaped-" + uniq, "/etc/escaped-" + uniq, "/dev/escaped-" + uniq,
		"/proc/escaped-" + uniq, "/dev/shm/escaped-" + uniq, "/var/tmp/escaped-" + uniq, "/tmp/escaped-" + uniq,
		filepath.Join(filepath.Dir(t.box.Dir()), "escaped-"+uniq),
		filepath.Join(filepath.Dir(filepath.Dir(t.box.Dir())), "escaped-"+uniq),
	}
	for _, p := range targets {
		t.attacked = append(t.attacked, p, p+".d")
	}
	res, err := t.runProg(sandboxes.Limits{Wall: 5 * time.Second}, targets...)
	if err != nil {
		return err
	}
	if !res.OK() {
		return fmt.Errorf("%s: %s", res.Describe(), clip(res.Stderr))
	}
	created := strings.Count(string(res.Stdout), "created ")
	t.note = fmt.Sprintf("%d host paths attacked, %d writes landed (inside the scratch, if any)", len(targets), created)
	return nil // the suite checks the host side
}

func readSecrets(t *trial) error {
	err := t.buildC(`#include <stdio.h>
#include <dirent.h>
extern char **environ;
static void dump(const char *p) { FILE *f = fopen(p, "r"); if (!f) { printf("%s: unreadable\n", p); return; }
  char b[4096]; size_t n; printf("%s: ", p); while ((n = fread(b, 1, sizeof b, f)) > 0) fwrite(b, 1, n, stdout);
  printf("\n"); fclose(f); }
int main(int c, char **v) {
  for (int i = 1; i < c; i++) dump(v[i]);
  for (char **e = environ; *e; e++) printf("env %s\n", *e);
  DIR *d = opendir("/proc"); struct dirent *de; char p[300];
  while (d && (de = readdir(d))) { if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
    snprintf(p, sizeof p, "/proc/%s/environ", de->d_name); dump(p);
    snprintf(p, sizeof p, "/proc/%s/cmdline", de->d_name); dump(p); }
  return 0; }`)
	if err != nil {
		return err
	}
	res, err := t.runProg(sandboxes.Limits{Wall: 5 * time.Second}, t.env.secretFile, "/etc/shadow", "/etc/passwd",
		"/etc/hostname", "/root/.bash_history", "/proc/1/environ", "/proc/self/environ", "/proc/1/root/etc/shadow")
	if err != nil {
		return err
	}
	if !res.OK() {
		return fmt.Errorf("%s: %s", res.Describe(), clip(res.Stderr))
	}
	t.note = fmt.Sprintf("%d bytes of output, checked for the planted secrets", len(res.Stdout))
	return nil // the suite checks outputs for the secrets
}

func symlinkPlant(t *trial) error {
	victim := filepath.Join(t.env.canary, "victim")
	res, err := t.run(sandboxes.Spec{Argv: []string{"sh", "-c",
		"ln -s " + t.env.secretFile + " out.txt; ln -s /etc/shadow prog.o; ln -s " + t.env.dir + " outdir; " +
			"ln -s " + victim + " input.c; ln -s ../../../../../../../../" + t.env.secretFile + " rel.txt; mkfifo pipe"},
		Limits: sandboxes.Limits{Wall: 5 * time.Second}})
	if err != nil {
		return err
	}
	if !res.OK() {
		return fmt.Errorf("plant: %s: %s", res.Describe(), clip(res.Stderr))
	}
	for _, name := range []string{"out.txt", "prog.o", "rel.txt", "pipe"} {
		data, err := t.box.ReadFile(name, 1<<20)
		t.outputs = append(t.outputs, data)
		if !errors.Is(err, sandboxes.ErrNotRegular) {
			return fmt.Errorf("reading back %s followed it: %q, %v", name, clip(data), err)
		}
	}
	if _, err := t.box.ReadFile("outdir/secret.txt", 1<<20); err == nil {
		return errors.New("read back through a planted directory link")
	}
	if err := t.box.WriteFile("input.c", []byte("int x;"), 0o644); err != nil {
		return fmt.Errorf("write over a planted link: %w", err)
	}
	t.attacked = append(t.attacked, victim)
	t.note = "read-back refused links and FIFOs; WriteFile replaced the link"
	return nil
}

func orphans(t *trial) error {
	err := t.buildC(`#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int main(int c, char **v) {
  for (int k = 0; k < 3; k++) { pid_t p = fork();
    if (p == 0) { setsid(); if (fork() == 0) { for (;;) { FILE *f = fopen("orphan.log", "a"); if (f) { fputs("tick\n", f); fclose(f); } usleep(10000); } }
      _exit(0); }
    waitpid(p, 0, 0); }
  puts("parent done"); if (atoi(v[1])) for (;;) pause(); return 0; }`)
	if err != nil {
		return err
	}
	// The parent exits at once, then: the parent hangs until the timeout.
	for _, mode := range []struct {
		arg  string
		want sandboxes.Outcome
	}{{"0", sandboxes.OutcomeExited}, {"1", sandboxes.OutcomeTimeout}} {
		res, err := t.runProg(sandboxes.Limits{Wall: time.Second}, mode.arg)
		if err != nil {
			return err
		}
		if err := expectOutcome(res, mode.want); err != nil {
			return fmt.Errorf("mode %s: %w", mode.arg, err)
		}
		if left := leftProcesses(t.box, t.env.active(sandboxes.LayerUID)); len(left) > 0 {
			return fmt.Errorf("mode %s: orphans alive after the run: %v", mode.arg, left)
		}
	}
	// Nothing writes after the run.
	before, _ := t.box.ReadFile("orphan.log", 64<<20)
	time.Sleep(100 * time.Millisecond)
	after, _ := t.box.ReadFile("orphan.log", 64<<20)
	if len(after) != len(before) {
		return errors.New("orphans still writing after the run ended")
	}
	t.note = "setsid double-forked orphans died with the run (exit and timeout)"
	return nil
}

func incbinSecret(t *trial) error {
	// Every compile step must fail to read the secret, or produce nothing
	// holding it.
	steps := []struct {
		name, file, src string
		argv            []string
		obj             string
	}{
		{"as .incbin", "inc.s", ".section .rodata\n.incbin \"" + t.env.secretFile + "\"\n", []string{"as", "-o", "inc.o", "inc.s"}, "inc.o"},
		{"as .incbin shadow", "sh.s", ".section .rodata\n.incbin \"/etc/shadow\"\n", []string{"as", "-o", "sh.o", "sh.s"}, "sh.o"},
		{"as .incbin environ", "env.s", ".section .rodata\n.incbin \"/proc/self/environ\"\n.incbin \"/proc/1/environ\"\n", []string{"as", "-o", "env.o", "env.s"}, "env.o"},
		{"gcc #include", "inc.c", "const char s[] = {\n#include \"" + t.env.secretFile + "\"\n};\n", []string{"gcc", "-c", "-o", "incc.o", "inc.c"}, "incc.o"},
		{"gcc -E", "pp.c", "#include \"" + t.env.secretFile + "\"\n", []string{"gcc", "-E", "pp.c"}, ""},
		{"gcc @file", "x.c", "int x;\n", []string{"gcc", "@" + t.env.secretFile, "-c", "x.c"}, ""},
	}
	var notes []string
	for _, s := range steps {
		res, err := t.compile(s.file, s.src, s.argv...)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if s.obj != "" {
			if data, err := t.box.ReadFile(s.obj, 64<<20); err == nil {
				t.outputs = append(t.outputs, data)
			}
		}
		if res.OK() {
			notes = append(notes, s.name+": built (secret-free)")
		} else {
			notes = append(notes, s.name+": failed")
		}
	}
	t.note = strings.Join(notes, ", ")
	return nil // the suite checks outputs and objects for the secrets
}

func macroBomb(t *trial) error {
	var b strings.Builder
	b.WriteString("#define A0 x+\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "#define A%d A%d A%d\n", i, i-1, i-1)
	}
	b.WriteString("int x;\nint main(void) { return A40 0; }\n")
	if err := t.box.WriteFile("bomb.c", []byte(b.String()), 0o644); err != nil {
		return err
	}
	res, err := t.run(sandboxes.Spec{Argv: []string{"gcc", "-c", "bomb.c"},
		Limits: sandboxes.Limits{Wall: 10 * time.Second, CPU: 10 * time.Second, Memory: 1 << 30, RSS: 1 << 30, Output: 64 << 10}})
	if err != nil {
		return err
	}
	t.note = res.Describe()
	if res.OK() {
		return errors.New("a 2^40-token macro compiled")
	}
	return nil
}

func fillBomb(t *trial) error {
	res, err := t.compile("fill.s", ".data\n.fill 0x40000000, 8, 0\n", "as", "-o", "fill.o", "fill.s")
	if err != nil {
		return err
	}
	t.note = res.Describe()
	if res.OK() {
		return errors.New("an 8 GiB .fill assembled")
	}
	if n := scratchBytes(t.box.Dir()); n > 256<<20 {
		return fmt.Errorf("scratch grew to %d MiB", n>>20)
	}
	return nil
}

func privilegedSyscalls(t *trial) error {
	err := t.buildC(`#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
static int bad = 0;
static void say(const char *what, long r) { if (r >= 0) { printf("%s: SUCCEEDED\n", what); bad++; } else printf("%s: %s\n", what, strerror(errno)); }
int main(void) { static char buf[256];
  say("ptrace traceme", ptrace(PTRACE_TRACEME, 0, 0, 0));
  say("ptrace attach 1", ptrace(PTRACE_ATTACH, 1, 0, 0));
  mkdir("d", 0700);
  say("mount tmpfs", mount("none", "d", "tmpfs", 0, 0));
  say("umount /proc", umount2("/proc", MNT_DETACH));
  say("unshare user", unshare(CLONE_NEWUSER));
  say("unshare mount", unshare(CLONE_NEWNS));
  int fd = open("/proc/self/ns/net", O_RDONLY); say("setns", fd < 0 ? -1 : setns(fd, 0));
  long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0); if (r == 0) _exit(0); say("clone newuser", r);
  say("bpf", syscall(SYS_bpf, 0, buf, 72));
  say("perf_event_open", syscall(SYS_perf_event_open, buf, 0, -1, -1, 0));
  say("add_key", syscall(SYS_add_key, "user", "kiln", "v", 1, -2));
  say("keyctl", syscall(SYS_keyctl, 0, -2, 0, 0, 0));
  say("io_uring_setup", syscall(SYS_io_uring_setup, 4, buf));
  say("userfaultfd", syscall(SYS_userfaultfd, 0));
  say("chroot", chroot("."));
  say("init_module", syscall(SYS_init_module, buf, 16, ""));
  say("kexec_load", syscall(SYS_kexec_load, 0, 0, 0, 0));
  say("process_vm_readv", syscall(SYS_process_vm_readv, 1, 0, 0, 0, 0, 0));
  printf("bad=%d\n", bad); return bad ? 1 : 0; }`)
	if err != nil {
		return err
	}
	res, err := t.runProg(sandboxes.Limits{Wall: 5 * time.Second})
	if err != nil {
		return err
	}
	if !res.OK() {
		return fmt.Errorf("%s: %s", res.Describe(), clip(res.Stdout))
	}
	t.note = fmt.Sprintf("%d privileged syscalls refused", strings.Count(string(res.Stdout), "\n")-1)
	return nil
}

func x32Syscall(t *trial) error {
	err := t.buildC(`#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(void) { long r = syscall(0x40000000 | SYS_getpid); printf("x32 getpid returned %ld\n", r); return 0; }`)
	if err != nil {
		return err
	}
	res, err := t.runProg(sandboxes.Limits{Wall: 5 * time.Second})
	if err != nil {
		return err
	}
	t.note = res.Describe()
	if res.Signal != syscall.SIGSYS {
		return fmt.Errorf("x32 syscall not killed: %s, stdout %q", res.Describe(), clip(res.Stdout))
	}
	return nil
}

func signalTrampoline(t *trial) error {
	err := t.buildC(`#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
int main(void) { int sigs[] = {SIGKILL, SIGTERM, SIGSEGV, SIGABRT, SIGSTOP, SIGQUIT};
  for (int i = 0; i < 6; i++) { int r = kill(1, sigs[i]); printf("kill(1, %d): %s\n", sigs[i], r ? strerror(errno) : "sent"); }
  kill(-1, SIGKILL); puts("survived"); return 0; }`)
	if err != nil {
		return err
	}
	// The run must end as the program chose, not as an infrastructure error.
	res, err := t.runProg(sandboxes.Limits{Wall: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("the box broke its own trampoline: %w", err)
	}
	t.note = res.Describe()
	if !res.OK() || !strings.Contains(string(res.Stdout), "survived") {
		return fmt.Errorf("%s, stdout %q", res.Describe(), clip(res.Stdout))
	}
	return nil
}
