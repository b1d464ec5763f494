package loadgen_test

import (
	"fmt"
	"time"

	"concbench/loadgen"
)

// Example_config shows a configuration, its mode label, and what Validate
// says about a setting out of range. Run(ctx, cfg) would then drive the
// server at cfg.Addr and return a Result.
func Example_config() {
	cpu, _ := loadgen.ParseDurationDist("exp:10us")
	cfg := loadgen.Config{
		Addr:     "127.0.0.1:8080",
		Rate:     20000,
		Conns:    64,
		Duration: 10 * time.Second,
		Warmup:   time.Second,
		CPU:      cpu,
	}
	fmt.Println(cfg.Mode(), cfg.Validate())

	cfg.Depth = 4
	fmt.Println(cfg.Mode())

	closed := cfg
	closed.Closed = true
	fmt.Println(closed.Validate())
	closed.Rate = 0
	fmt.Println(closed.Mode())

	cfg.CPU = loadgen.Exp(float64(time.Minute))
	fmt.Println(cfg.Validate())
	// Output:
	// open-loop poisson <nil>
	// open-loop poisson, pipelined depth 4
	// loadgen: rate 20000 given with closed loop (accepted: 0; a closed loop has no rate, only Outstanding)
	// closed-loop (4 outstanding per connection), pipelined depth 4
	// loadgen: cpu: mean 1m0s out of range (accepted: 0..10s)
}
