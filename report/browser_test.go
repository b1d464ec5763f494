package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"concbench/results/resultstest"
)

// TestReportInBrowser opens the synthetic run's report.html in headless
// Chromium, as a reader would: every figure must load (a script added to a
// copy of the page counts the images the browser could not decode), every
// local link must point at a file of the run folder, and the page's text
// must hold the answers and the summary table. It also takes the
// screenshot (report.png) that concbench bench and figures keep. Without
// Chromium it skips, saying how to get it; make test installs nothing.
func TestReportInBrowser(t *testing.T) {
	bin, err := Chromium()
	if err != nil {
		t.Skipf("%v: the browser test did not run", err)
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	if _, err := resultstest.WriteRun(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderRun(dir, Options{Formats: []string{"svg"}}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, ReportHTML))
	if err != nil {
		t.Fatal(err)
	}

	// Local links: every href that is not a fragment, data: or a remote
	// address names a file of the run folder.
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(string(page), -1) {
		href := m[1]
		if strings.HasPrefix(href, "#") || strings.Contains(href, "://") || strings.HasPrefix(href, "data:") {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, href)); err != nil {
			t.Errorf("broken link %q: %v", href, err)
		}
	}

	probe := strings.Replace(string(page), "</body>", `<script>
window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  const broken = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt);
  document.title = 'images=' + imgs.length + ' broken=' + broken.length + ' ' + broken.join('|');
});
</script>
</body>`, 1)
	probePath := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(probePath, []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append([]string{}, HeadlessArgs...), "--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+probePath)
	dom, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		t.Fatalf("%s --dump-dom: %v", bin, err)
	}
	title := regexp.MustCompile(`<title>([^<]*)</title>`).FindSubmatch(dom)
	if title == nil {
		t.Fatalf("no title in the page Chromium loaded:\n%.2000s", dom)
	}
	var images, broken int
	if _, err := fmt.Sscanf(string(title[1]), "images=%d broken=%d", &images, &broken); err != nil || images == 0 || broken != 0 {
		t.Errorf("figures in the browser: %q (want every image loaded)", title[1])
	}
	for _, want := range []string{"Answers", "is highest", "Summary", "leaderfollowers/lifo", "capacity (req/s)", "Validity"} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("the page as Chromium rendered it lacks %q", want)
		}
	}

	png := filepath.Join(dir, ReportPNG)
	if err := Screenshot(ctx, filepath.Join(dir, ReportHTML), png); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(png)
	if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Errorf("%s is not a PNG (%d bytes, %v)", png, len(b), err)
	}
}
