package gate

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// ReferenceFile is the file, relative to the module's root, that names
// the CI gate's reference revision: "make gate-ci" (and so .ci/run)
// builds that revision and the current tree and measures both in the same
// job. The first line that is neither blank nor a comment (#) is the
// revision; the comments say why it is the reference.
const ReferenceFile = "results/baseline/reference"

// ReadReference returns the revision the reference file at path names.
func ReadReference(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("gate: the reference: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			return "", fmt.Errorf("gate: the reference %s: %q is not one revision", path, line)
		}
		return line, nil
	}
	return "", fmt.Errorf("gate: the reference %s names no revision (accepted: a commit on a line of its own)", path)
}
