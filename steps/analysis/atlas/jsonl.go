package atlas

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/perfdag/perfdag/schema"
)

// maxLine bounds one JSONL line (a row with a large extra map); longer lines are an error.
const maxLine = 16 << 20

// Encoder writes atlas rows as JSON Lines: one compact object and a newline per row.
type Encoder struct {
	bw  *bufio.Writer
	enc *json.Encoder
}

// NewEncoder buffers writes to w; call Flush when done.
func NewEncoder(w io.Writer) *Encoder {
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &Encoder{bw: bw, enc: enc}
}

// Encode writes one row.
func (e *Encoder) Encode(row *schema.AtlasRow) error { return e.enc.Encode(row) }

// Flush writes buffered rows to the underlying writer.
func (e *Encoder) Flush() error { return e.bw.Flush() }

// Decoder reads atlas rows from JSON Lines one at a time, so an atlas of any size streams.
type Decoder struct {
	sc   *bufio.Scanner
	name string
	line int
}

// NewDecoder reads from r; name (usually the file path) prefixes every error.
func NewDecoder(r io.Reader, name string) *Decoder {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &Decoder{sc: sc, name: name}
}

// Next decodes the next row into row (reset first); it returns io.EOF at the end.
// Blank lines are skipped; unknown fields are errors naming the file and line.
func (d *Decoder) Next(row *schema.AtlasRow) error {
	for d.sc.Scan() {
		d.line++
		b := bytes.TrimSpace(d.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		*row = schema.AtlasRow{}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(row); err != nil {
			return fmt.Errorf("%s:%d: %w", d.name, d.line, err)
		}
		return nil
	}
	if err := d.sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", d.name, d.line+1, err)
	}
	return io.EOF
}

// Line is the line number of the row Next returned last.
func (d *Decoder) Line() int { return d.line }

// ScanFile streams every row of an atlas.jsonl file to fn, stopping at fn's first error or
// when ctx is cancelled. The row pointer is reused between calls: copy what you keep.
func ScanFile(ctx context.Context, path string, fn func(*schema.AtlasRow) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read atlas: %w", err)
	}
	defer f.Close()
	dec := NewDecoder(f, path)
	var row schema.AtlasRow
	for {
		if dec.line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		err := dec.Next(&row)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&row); err != nil {
			return fmt.Errorf("%s:%d: %w", path, dec.Line(), err)
		}
	}
}
