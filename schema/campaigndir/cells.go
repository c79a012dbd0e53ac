package campaigndir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/perfdag/perfdag/schema"
)

// MaxAtlasLine bounds one atlas_v1 line (a row with a large extra map); longer is an error.
const MaxAtlasLine = 16 << 20

// WriteCell writes a cell's normalized.json (rows in the order given, one compact row per
// line inside the JSON array, so it is cheap to decode and still diffable) and status.txt,
// atomically each, and returns their relative paths. Readers accept the indented form older
// versions wrote: both are the same JSON array.
func WriteCell(dir, cell string, rows []schema.AtlasRow, status string) (CellFiles, error) {
	files, b, sb, err := EncodeCell(cell, rows, status)
	if err != nil {
		return files, err
	}
	if err := WriteFile(Abs(dir, files.Normalized), b); err != nil {
		return files, err
	}
	return files, WriteFile(Abs(dir, files.Status), sb)
}

// EncodeCell is what WriteCell writes for a cell, without writing it: the relative paths and
// the content of normalized.json and status.txt. A fixture generator (a benchmark writing a
// million rows) writes them itself, without WriteCell's per-file fsync.
func EncodeCell(cell string, rows []schema.AtlasRow, status string) (files CellFiles, normalized, statusTxt []byte, err error) {
	files = CellFiles{Cell: cell, Normalized: Normalized(cell), Status: CellStatus(cell)}
	b, err := encodeRows(rows)
	if err != nil {
		return files, nil, nil, fmt.Errorf("encode cell %s: %w", cell, err)
	}
	return files, b, []byte(status + "\n"), nil
}

// encodeRows is rows as a JSON array with one compact row per line.
func encodeRows(rows []schema.AtlasRow) ([]byte, error) {
	var buf bytes.Buffer
	enc := newRowEncoder(&buf)
	buf.WriteString("[")
	for i := range rows {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
		if err := enc.Encode(&rows[i]); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		buf.Truncate(buf.Len() - 1) // the encoder's newline
	}
	buf.WriteString("\n]\n")
	return buf.Bytes(), nil
}

// ReadCell reads a cell's rows and status through r (checked against their recorded
// digests), or straight from dir when r.Digest is nil (a step reading what it just wrote).
func ReadCell(r Reader, files CellFiles) ([]schema.AtlasRow, string, error) {
	rows, _, status, err := ReadCellLines(r, files)
	return rows, status, err
}

// ReadCellLines is ReadCell that also returns each row's atlas line — the bytes AtlasEncoder
// writes for it, without the newline — when the file already holds them (this version wrote
// it compact), for WriteLine to copy; lines is nil otherwise, and rows must be encoded.
func ReadCellLines(r Reader, files CellFiles) (rows []schema.AtlasRow, lines [][]byte, status string, err error) {
	return NewCellReader(r).Read(files)
}

// CellReader reads cells one after another, as ReadCellLines does, reusing its buffers: a pass
// over thousands of cells allocates little more than the rows' values. What Read returns is
// valid until the next Read.
type CellReader struct {
	r           Reader
	buf, status []byte
	rows        []schema.AtlasRow
	lines       [][]byte
}

// NewCellReader reads through r.
func NewCellReader(r Reader) *CellReader { return &CellReader{r: r} }

// Read reads one cell: see ReadCellLines.
func (c *CellReader) Read(files CellFiles) (rows []schema.AtlasRow, lines [][]byte, status string, err error) {
	c.buf, err = c.read(files.Normalized, c.buf)
	if err != nil {
		return nil, nil, "", fmt.Errorf("read cell %s: %w", files.Cell, err)
	}
	c.rows, c.lines, err = decodeRows(files.Normalized, c.buf, c.rows[:0], c.lines[:0])
	if err != nil {
		return nil, nil, "", err
	}
	c.status, err = c.read(files.Status, c.status)
	if err != nil {
		return nil, nil, "", fmt.Errorf("read cell %s: %w", files.Cell, err)
	}
	lines = c.lines
	if len(lines) == 0 {
		lines = nil // the rows must be encoded
	}
	return c.rows, lines, string(bytes.TrimSpace(c.status)), nil
}

// read reads rel into buf, checked against its recorded digest (none when r.Digest is nil: a
// step reading what it just wrote).
func (c *CellReader) read(rel string, buf []byte) ([]byte, error) {
	digest := ""
	if c.r.Digest != nil {
		d, ok := c.r.Digest(rel)
		if !ok {
			return nil, fmt.Errorf("read %s: %w", rel, ErrNotRecorded)
		}
		digest = d
	}
	return readFileInto(c.r.Dir, rel, digest, buf)
}

// AtlasEncoder writes atlas rows as JSON Lines: one compact object and a newline per row.
type AtlasEncoder struct {
	bw  *bufio.Writer
	enc *json.Encoder
}

// NewAtlasEncoder buffers writes to w; call Flush when done.
func NewAtlasEncoder(w io.Writer) *AtlasEncoder {
	bw := bufio.NewWriterSize(w, 1<<20)
	return &AtlasEncoder{bw: bw, enc: newRowEncoder(bw)}
}

// Encode writes one row.
func (e *AtlasEncoder) Encode(row *schema.AtlasRow) error { return e.enc.Encode(row) }

// WriteLine writes one row already encoded as Encode writes it, without the newline (a line
// ReadCellLines returned).
func (e *AtlasEncoder) WriteLine(line []byte) error {
	if _, err := e.bw.Write(line); err != nil {
		return err
	}
	return e.bw.WriteByte('\n')
}

// Flush writes buffered rows to the underlying writer.
func (e *AtlasEncoder) Flush() error { return e.bw.Flush() }

// AtlasDecoder reads atlas rows from JSON Lines one at a time, so an atlas of any size streams.
type AtlasDecoder struct {
	sc   *bufio.Scanner
	name string
	line int
}

// NewAtlasDecoder reads from r; name (usually the file path) prefixes every error.
func NewAtlasDecoder(r io.Reader, name string) *AtlasDecoder {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxAtlasLine)
	return &AtlasDecoder{sc: sc, name: name}
}

// Next decodes the next row into row (reset first); it returns io.EOF at the end. Blank
// lines are skipped; unknown fields are errors naming the file and line.
func (d *AtlasDecoder) Next(row *schema.AtlasRow) error {
	for d.sc.Scan() {
		d.line++
		b := bytes.TrimSpace(d.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if decodeRow(b, row) {
			return nil
		}
		if err := decodeRowV1(b, row); err != nil {
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
func (d *AtlasDecoder) Line() int { return d.line }

// OpenAtlas opens a recorded atlas for streaming, after checking its digest in one pass
// over the file (a large atlas is never held in memory).
func OpenAtlas(r Reader, rel string) (*os.File, error) {
	digest, ok := "", false
	if r.Digest != nil {
		digest, ok = r.Digest(rel)
	}
	if !ok {
		return nil, fmt.Errorf("read %s: %w", rel, ErrNotRecorded)
	}
	if digest != "" {
		got, err := DigestFile(r.Dir, rel)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rel, err)
		}
		if got != digest {
			return nil, &ChangedError{Rel: rel}
		}
	}
	f, err := os.Open(Abs(r.Dir, rel))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	return f, nil
}
