package soak

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"concbench/harness"
	"concbench/internal/concbenchtest"
	"concbench/internal/testenv"
	"concbench/loadgen"
)

func TestMain(m *testing.M) { os.Exit(concbenchtest.Main(m)) }

// TestSoakJudge: a row passes only when nothing was lost, duplicated,
// mismatched or failed, every money operation's outcome is known and the
// money found is the money expected; each failure is named.
func TestSoakJudge(t *testing.T) {
	clean := func() *loadgen.Result {
		return &loadgen.Result{
			Requests: loadgen.Counts{Sent: 1000, Completed: 990, OK: 985, Abandoned: 10, Reconnects: 3},
			Errors:   map[string]int64{"status_insufficient_funds": 5},
			Ledger:   &loadgen.Ledger{Amount: 2, Deposits: 40, Withdrawals: 30},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(*loadgen.Result)
		found  int64
		want   string // "ok", or what the verdict must name
	}{
		{name: "clean", change: func(*loadgen.Result) {}, found: 120, want: "ok"},
		{name: "money", change: func(*loadgen.Result) {}, found: 119, want: "money: the ledger holds 119, expected 120 (-1)"},
		{name: "lost", change: func(r *loadgen.Result) { r.Requests.Completed--; r.Errors["timeout"] = 1 }, found: 120, want: "1 lost"},
		{name: "mismatch", change: func(r *loadgen.Result) { r.Requests.OK--; r.Errors["verify_total"] = 1 }, found: 120, want: "1 mismatches"},
		{name: "duplicate", change: func(r *loadgen.Result) { r.Errors["verify_duplicate"] = 2 }, found: 120, want: "2 duplicates"},
		{name: "status", change: func(r *loadgen.Result) { r.Requests.OK--; r.Errors["status_unavailable"] = 1 }, found: 120, want: "1 errors"},
		{name: "unknown", change: func(r *loadgen.Result) { r.Ledger.Unknown = 1 }, found: 120, want: "1 money operations of unknown outcome"},
		{name: "unsent", change: func(r *loadgen.Result) { r.Requests.Unsent = 4 }, found: 120, want: "4 requests never sent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clean()
			tc.change(r)
			var row row
			row.judge(r, 100, tc.found, nil)
			if v := row.verdict(); tc.want == "ok" && v != "ok" || tc.want != "ok" && !strings.Contains(v, tc.want) {
				t.Errorf("verdict %q, want %q", v, tc.want)
			}
			if row.failed() != (tc.want != "ok") {
				t.Errorf("failed() = %t for verdict %q", row.failed(), row.verdict())
			}
			if tc.name == "clean" && (row.ok != 990 || row.expected != 120 || row.abandoned != 10 || row.reconn != 3) {
				t.Errorf("row %+v: want 990 ok (the refusals included), 120 expected, 10 abandoned, 3 reconnects", row)
			}
		})
	}
}

// soakTestRequests is TestSoak's requests per configuration: few
// enough that make test stays cheap under the race detector on 2 CPUs,
// where the generator, instrumented, is the slowest part (make soak runs
// 10^7).
const soakTestRequests = 100_000

// TestSoak soaks every default configuration, soakTestRequests each,
// through Run: every row verified and ok, the money conserved.
func TestSoak(t *testing.T) {
	testenv.EndToEnd(t)
	c := Default()
	c.ServerBinary, c.Requests, c.KillEvery, c.Progress = concbenchtest.Binary(t), soakTestRequests, 2000, 0
	var stdout bytes.Buffer
	err := Run(context.Background(), c, &stdout, io.Discard)
	if err != nil {
		t.Fatalf("soak: %v\n%s", err, stdout.String())
	}
	out := stdout.String()
	table := out[strings.Index(out, "\nconfiguration "):]
	for _, c := range append(harness.Families(), harness.Config{Name: Chain}) {
		i := strings.Index(table, "\n"+c.Name+" ")
		if i < 0 {
			t.Errorf("no row for %s:\n%s", c.Name, out)
			continue
		}
		row := strings.Fields(strings.SplitN(table[i+1:], "\n", 2)[0])
		if row[len(row)-1] == "ok" {
			if row[1] != strconv.Itoa(soakTestRequests) || row[9] != row[10] {
				t.Errorf("row %q: want %d requests and the money expected found", row, soakTestRequests)
			}
			continue
		}
		if row[1] != "-" || !strings.Contains(strings.Join(row, " "), "unavailable:") {
			t.Errorf("row %q: want ok, or unavailable on this machine", row)
		}
	}
}
