package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// ReportPNG is the file name of the report's screenshot in a run folder.
const ReportPNG = "report.png"

// ErrNoBrowser means no headless Chromium was found: Screenshot and the
// report's browser test need one (Debian: apt-get install -y chromium).
var ErrNoBrowser = errors.New("report: no Chromium found (chromium, chromium-browser, google-chrome; Debian: apt-get install -y chromium)")

// Chromium returns the path of a Chromium or Chrome executable on PATH, or
// ErrNoBrowser.
func Chromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// HeadlessArgs are the flags every headless Chromium run here uses: no
// sandbox (it refuses to start as root otherwise, as in containers and
// CI), no GPU, and a virtual-time budget so that the page has loaded and
// its scripts have run before Chromium prints or captures it.
var HeadlessArgs = []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
	"--no-first-run", "--virtual-time-budget=10000"}

// Screenshot renders the HTML file at html in headless Chromium and writes
// the top of the page, 1280 × 2400 pixels (the answers, the summary and
// the first figures), as a PNG to png. It returns ErrNoBrowser without
// Chromium, and gives up after a minute.
func Screenshot(ctx context.Context, html, png string) error {
	bin, err := Chromium()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(html)
	if err != nil {
		return err
	}
	out, err := filepath.Abs(png)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// A profile folder of its own: Chromium refuses to share one between
	// two instances, and must not touch the user's.
	profile, err := os.MkdirTemp("", "concbench-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	args := append(append([]string{}, HeadlessArgs...), "--user-data-dir="+profile, "--window-size=1280,2400",
		"--screenshot="+out, "file://"+abs)
	cmd := exec.CommandContext(ctx, bin, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("report: screenshot with %s: %w\n%s", bin, err, tail(b, 10))
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		return fmt.Errorf("report: screenshot with %s wrote no image to %s", bin, out)
	}
	return nil
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			lines++
			if lines > n {
				return string(b[i+1:])
			}
		}
	}
	return string(b)
}
