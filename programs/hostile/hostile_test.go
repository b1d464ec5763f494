package hostile

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"concbench/internal/concbenchtest"
	"concbench/internal/testenv"
	"concbench/programs/serverconf"
)

func TestMain(m *testing.M) { os.Exit(concbenchtest.Main(m)) }

// TestHostileRun runs both attacks end to end against netpoll, small, with
// a shortened victim: a row per attack, the bound held and the slow
// headers closed for their timeout.
func TestHostileRun(t *testing.T) {
	testenv.EndToEnd(t)
	bin := concbenchtest.Binary(t)
	v := victimFor
	victimFor = 100 * time.Millisecond
	t.Cleanup(func() { victimFor = v })
	for _, tc := range []struct {
		name   string
		config func(c *Config)
		server string
		want   []string
	}{
		{name: "amplify", config: func(c *Config) { c.Attack, c.Conns, c.PerConn, c.Size = "amplify", 4, 4, 65536 },
			server: "np=--model netpoll", want: []string{"4 attackers × 4 requests for 64 KiB", "np    ", " true "}},
		{name: "slowheader", config: func(c *Config) { c.Attack, c.Conns, c.During = "slowheader", 4, 100*time.Millisecond },
			server: "np=--model netpoll --header-timeout 1s", want: []string{"4 attackers each sending", "np    "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.ServerBinary = bin
			tc.config(&c)
			var err error
			if c.Configs, err = serverconf.Parse([]string{tc.server}); err != nil {
				t.Fatal(err)
			}
			var stdout bytes.Buffer
			err = Run(context.Background(), c, &stdout, io.Discard)
			if err != nil {
				t.Fatalf("hostile: %v\n%s", err, stdout.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			if tc.name == "slowheader" {
				// The row: victim p99, p99 attacked, closed after, timeouts, …
				row := strings.Fields(strings.Split(strings.TrimSpace(stdout.String()), "\n")[2])
				if len(row) != 7 || row[4] != "4" {
					t.Errorf("want 4 header timeouts in the row %q", row)
				}
			}
		})
	}
}
