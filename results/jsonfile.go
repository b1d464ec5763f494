package results

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// WriteJSON writes v as indented JSON to path (atomically, as WriteFile), or
// to stdout when path is "-".
func WriteJSON(path string, stdout io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err := stdout.Write(b)
		return err
	}
	return WriteFile(path, b)
}

// ReadJSON reads a JSON file written by WriteJSON.
func ReadJSON[T any](path string) (*T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &v, nil
}

// WriteWith creates path and writes it with fn (figures and tables drawn to
// a writer).
func WriteWith(path string, fn func(io.Writer) error) error {
	fl, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(fl); err != nil {
		fl.Close()
		return err
	}
	return fl.Close()
}
