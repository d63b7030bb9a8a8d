package jobs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// ReadKeys reads public nkeys from the file at path, one a line; blank
// lines and # comments are skipped. A file that lists none is an error.
func ReadKeys(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no key", path)
	}
	return out, nil
}
