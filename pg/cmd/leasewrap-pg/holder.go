package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/pg/conn"
	"github.com/leasewrap/leasewrap/pg/lock"
	"github.com/leasewrap/leasewrap/pg/table"
)

type pgHolderCmd struct {
	Name  string `arg:"" help:"The lease name."`
	Slots int    `help:"Show every slot of a lease run with --slots N (NAME, NAME-1 … NAME-(N-1)): a JSON array; exit 0 when any is held." default:"1" placeholder:"N"`
	connFlags
}

func (c *pgHolderCmd) Help() string {
	return `Prints the row as JSON: table, kind, name, exists, held (state held and not
expired by the server's clock), holder, fence, state, ttl_seconds,
acquired_at, renewed_at, expires_at, server_time. Exit 0 held, 1 free (or
no row, or no table), 2 error (69 PostgreSQL unreachable, 77 refused).

Example:
  leasewrap pg holder nightly | jq -r .holder`
}

func (c *pgHolderCmd) Validate() error {
	if c.Slots < 1 {
		return fmt.Errorf("%w: --slots %d: at least one", cli.ErrUsage, c.Slots)
	}
	return nil
}

// rowJSON is a row as the admin verbs print it.
type rowJSON struct {
	Table  string `json:"table"`
	Exists bool   `json:"exists"`
	Held   bool   `json:"held"`
	Slot   *int   `json:"slot,omitempty"`
	*table.Row
}

// readRows reads the rows (kind, names) of c's table; an absent table
// has none. Nothing is created.
func (f *connFlags) readRows(ctx context.Context, kind string, names []string) ([]rowJSON, error) {
	st, err := f.store()
	if err != nil {
		return nil, err
	}
	st.ReadOnly()
	defer st.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*f.DialTimeout+10*time.Second)
	defer cancel()
	out := make([]rowJSON, len(names))
	err = st.DoRetry(ctx, func(c *conn.Conn) error {
		for i, n := range names {
			r, err := table.Read(ctx, c.Conn, st.Ident(), kind, n)
			if err != nil {
				return err
			}
			out[i] = rowJSON{Table: st.Ident(), Exists: r != nil, Held: r != nil && r.Live, Row: r}
			if r == nil {
				out[i].Row = &table.Row{Kind: kind, Name: n}
			}
		}
		return nil
	})
	if errors.Is(err, table.ErrAbsent) {
		for i, n := range names {
			out[i] = rowJSON{Table: st.Ident(), Row: &table.Row{Kind: kind, Name: n}}
		}
		return out, nil
	}
	return out, err
}

func (c *pgHolderCmd) Run(ctx context.Context, streams ioStreams) error {
	names := make([]string, c.Slots)
	for i := range names {
		names[i] = slotName(c.Name, i)
	}
	rows, err := c.readRows(ctx, lock.Kind, names)
	if err != nil {
		return adminError(err)
	}
	held := false
	for i := range rows {
		held = held || rows[i].Held
		if c.Slots > 1 {
			rows[i].Slot = &i
		}
	}
	var v any = rows
	if c.Slots == 1 {
		v = rows[0]
	}
	if err := writeJSON(streams.Out, v); err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	if !held {
		return &cli.ExitError{Code: cli.AdminHeld}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, strings.TrimSpace(string(b)))
	return err
}
