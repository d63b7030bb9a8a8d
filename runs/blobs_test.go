package runs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestBlobsRoundTrip(t *testing.T) {
	t.Parallel()
	b := openTest(t).Blobs()
	for _, data := range [][]byte{nil, []byte("hello"), make([]byte, 1<<20)} {
		h, err := b.Put(data)
		if err != nil {
			t.Fatal(err)
		}
		if h != Hash(data) || !validHash(h) {
			t.Fatalf("hash %q", h)
		}
		got, err := b.Get(h)
		if err != nil || string(got) != string(data) {
			t.Fatalf("get: %v", err)
		}
		if !b.Has(h) {
			t.Fatal("Has = false")
		}
		if h2, err := b.Put(data); err != nil || h2 != h {
			t.Fatalf("put again: %v", err)
		}
	}
	if h := Hash([]byte("hello")); h != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Fatalf("sha256(hello) = %s", h)
	}
	missing := Hash([]byte("never stored"))
	if _, err := b.Get(missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if b.Has(missing) {
		t.Fatal("Has(missing) = true")
	}
}

func TestBlobsBadHash(t *testing.T) {
	t.Parallel()
	b := openTest(t).Blobs()
	good := Hash([]byte("x"))
	for _, h := range []string{
		"", "abc", strings.ToUpper(good), good + "0", good[:63],
		"../../../../../../etc/passwd", "..", good[:62] + "/.", good[:60] + "../x",
		strings.Repeat("g", 64), "/" + good[1:],
	} {
		if _, err := b.Get(h); !errors.Is(err, ErrBadHash) {
			t.Errorf("Get(%q) = %v, want ErrBadHash", h, err)
		}
		if b.Has(h) {
			t.Errorf("Has(%q) = true", h)
		}
	}
}

func TestBlobsCorruptDetected(t *testing.T) {
	t.Parallel()
	b := openTest(t).Blobs()
	h, err := b.Put([]byte("original"))
	if err != nil {
		t.Fatal(err)
	}
	p := b.path(h)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(h); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt: %v", err)
	}
}

func TestBlobsConcurrentPut(t *testing.T) {
	t.Parallel()
	b := openTest(t).Blobs()
	data := []byte(strings.Repeat("same content ", 10000))
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := b.Put(data)
			if err == nil && h != Hash(data) {
				err = errors.New("wrong hash")
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := b.Get(Hash(data))
	if err != nil || string(got) != string(data) {
		t.Fatalf("get: %v", err)
	}
	entries, err := os.ReadDir(filepath.Dir(b.path(Hash(data))))
	if err != nil || len(entries) != 1 {
		t.Fatalf("shard holds %d entries (temp files left?) %v", len(entries), err)
	}
}
