package runs

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkClaimFinish measures one task's store traffic in the campaign
// loop: Claim, SaveAnswer, Finish (three durable commits), serially and with
// 8 concurrent workers.
func BenchmarkClaimFinish(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprint("workers=", workers), func(b *testing.B) {
			ctx := context.Background()
			s := openTest(b)
			c := mustCampaign(b, s, "bench")
			for done := 0; done < b.N; done += 1000 {
				mustAdd(b, s, c.ID, func() []Task {
					ts := mkTasks(0, min(1000, b.N-done))
					for i := range ts {
						ts[i].Key = fmt.Sprint(done + i)
					}
					return ts
				}())
			}
			var n atomic.Int64
			b.ResetTimer()
			run := func() error {
				l, err := s.Claim(ctx, c.ID, "w", time.Hour)
				if err != nil {
					return err
				}
				a, err := s.SaveAnswer(ctx, l, testAttempt(l.Task.Key, l.Number))
				if err != nil {
					return err
				}
				n.Add(1)
				return s.Finish(ctx, l, a, testVerdict(true))
			}
			if workers == 1 {
				for i := 0; i < b.N; i++ {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				// SetParallelism multiplies by GOMAXPROCS; divide it back out.
				b.SetParallelism(max(1, workers/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := run(); err != nil && !errors.Is(err, ErrNoTask) {
							b.Error(err)
							return
						}
					}
				})
			}
			b.StopTimer()
			b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
