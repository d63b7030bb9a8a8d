package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestServeWebhookFlags: --webhook-env names a variable that must hold an
// http(s) URL, which errors never quote; --stall-after must be >= 0. The
// daemon does not start on any of these.
func TestServeWebhookFlags(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"HOOK_FTP": "ftp://hooks.example/secret-token", "HOOK_OK": "https://hooks.example/secret-token"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--webhook-env", "HOOK_UNSET"}, "environment variable HOOK_UNSET is empty"},
		{[]string{"--webhook-env", "HOOK_FTP"}, "http or https"},
		{[]string{"--webhook-env", "HOOK_OK", "--stall-after", "-1s"}, "stall time must be >= 0"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"serve", "--data", t.TempDir()}, c.args...)
		code := run(context.Background(), args, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
			getenv: func(k string) string { return vars[k] }, soft: make(chan struct{})})
		if code != exitBadInput || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errb.String(), exitBadInput, c.want)
		}
		if strings.Contains(errb.String(), "secret-token") {
			t.Errorf("%v: the URL was printed: %s", c.args, errb.String())
		}
	}
}
