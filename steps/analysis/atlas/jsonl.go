package atlas

import (
	"context"
	"fmt"
	"io"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Scan streams every row of a recorded atlas to fn (its digest checked first), stopping at
// fn's first error or when ctx is cancelled. The row pointer is reused between calls: copy
// what you keep.
func Scan(ctx context.Context, r campaigndir.Reader, rel string, fn func(*schema.AtlasRow) error) error {
	f, err := campaigndir.OpenAtlas(r, rel)
	if err != nil {
		return fmt.Errorf("read atlas: %w", err)
	}
	defer f.Close()
	return Decode(ctx, f, rel, fn)
}

// Decode streams atlas rows from r (named name in errors) to fn.
func Decode(ctx context.Context, r io.Reader, name string, fn func(*schema.AtlasRow) error) error {
	dec := campaigndir.NewAtlasDecoder(r, name)
	var row schema.AtlasRow
	for {
		if dec.Line()%4096 == 0 {
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
			return fmt.Errorf("%s:%d: %w", name, dec.Line(), err)
		}
	}
}

// ReadAll loads every row of a recorded atlas (for the report, which holds them anyway).
func ReadAll(ctx context.Context, r campaigndir.Reader, rel string) ([]schema.AtlasRow, error) {
	var rows []schema.AtlasRow
	err := Scan(ctx, r, rel, func(row *schema.AtlasRow) error {
		rows = append(rows, *row)
		return nil
	})
	return rows, err
}
