package toolchain

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"
)

func TestScratchDetect(t *testing.T) {
	for i := 0; i < 2; i++ {
		start := time.Now()
		r, err := Detect(context.Background(), Config{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})), DeviceLibDir: "/tmp/tcx/dl", ProbeCache: "/tmp/tcx/probe.json"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(r.Report(), "", " ")
		fmt.Println(string(b), time.Since(start))
	}
}
