// Package linewriter turns what is written to an io.Writer into whole lines.
package linewriter

import (
	"bytes"
	"sync"
)

// Writer hands every complete line written to it, without its line end,
// to Each, in order; a trailing partial line is kept until its line end
// arrives. Writes may come from several goroutines.
type Writer struct {
	// Each gets one line; an error ends the Write that brought the line
	// (the lines after it stay for the next Write).
	Each func(line string) error
	mu   sync.Mutex
	buf  []byte
}

func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if err := w.Each(line); err != nil {
			return len(p), err
		}
	}
}
