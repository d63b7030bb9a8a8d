package ollamatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Version is the ollama module version kiln's api package pins (go.mod);
// the server is built from the same version.
const Version = "v0.17.4"

// ModelName is the tag the tiny model is created under.
const ModelName = "kiln-tiny"

// DefaultBinary is where setup.sh's ollama step installs the server:
// $HOME/.cache/kiln/ollama/<Version>/ollama.
func DefaultBinary() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "kiln", "ollama", Version, "ollama")
}

// Binary returns the ollama server binary: $KILN_OLLAMA_BIN, else
// DefaultBinary. Without one the test is skipped, or fails under CI
// (CI=true), where setup.sh builds it.
func Binary(t testing.TB) string {
	t.Helper()
	path := os.Getenv("KILN_OLLAMA_BIN")
	if path == "" {
		path = DefaultBinary()
	}
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("no ollama server at %s: build it with `./setup.sh ollama` (or set KILN_OLLAMA_BIN)", path)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// Options configure a server.
type Options struct {
	// NumParallel is OLLAMA_NUM_PARALLEL (0: the server's default).
	NumParallel int
	// Env adds variables to the server's environment.
	Env []string
}

// Server is a running `ollama serve` with the tiny model created.
type Server struct {
	// URL is the server root, http://127.0.0.1:PORT.
	URL string
	// Models is its OLLAMA_MODELS folder.
	Models string

	bin, addr string
	opts      Options
	mu        sync.Mutex
	cmd       *exec.Cmd
	done      chan struct{}
	log       *bytes.Buffer
	logMu     *sync.Mutex
}

// Start starts a server on a free port with an empty model folder,
// creates ModelName in it, and stops the server when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &Server{URL: "http://" + addr, Models: filepath.Join(dir, "models"), bin: bin, addr: addr, opts: opts,
		log: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("ollama serve log (tail):\n%s", s.LogTail(4000))
		}
	})
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	mf, err := WriteModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	create := exec.CommandContext(ctx, bin, "create", ModelName, "-f", mf)
	create.Env = append(os.Environ(), "OLLAMA_HOST="+addr)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("ollama create %s: %v\n%s\nserver log:\n%s", ModelName, err, out, s.LogTail(4000))
	}
	return s
}

// Restart starts the server process (again, after Kill) and waits until
// it answers /api/version.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("ollamatest: the server is running")
	}
	cmd := exec.Command(s.bin, "serve")
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+s.addr, "OLLAMA_MODELS="+s.Models, "OLLAMA_NOPRUNE=1",
		"OLLAMA_KEEP_ALIVE=5m", "HOME="+filepath.Dir(s.Models),
		// The CPU flash-attention path takes about 3x as long on the
		// tiny model's prompts (measured: 1,000 byte tokens 4.9 s with,
		// 1.4 s without, on a loaded 2-core machine).
		"OLLAMA_FLASH_ATTENTION=0")
	if s.opts.NumParallel > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("OLLAMA_NUM_PARALLEL=%d", s.opts.NumParallel))
	}
	cmd.Env = append(cmd.Env, s.opts.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Kill takes its runners too
	w := lockedBuffer{s.log, s.logMu}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("ollamatest: start %s serve: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("ollamatest: ollama serve exited at start:\n%s", s.LogTail(2000))
		default:
		}
		resp, err := http.Get(s.URL + "/api/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("ollamatest: ollama serve did not answer within 60 s:\n%s", s.LogTail(2000))
}

// Kill stops the server and its model runners at once (SIGKILL to the
// process group) and waits for it.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
	s.cmd = nil
}

// LogTail returns the last n bytes of the server's output.
func (s *Server) LogTail(n int) string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	b := s.log.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

type lockedBuffer struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
