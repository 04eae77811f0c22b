package randbytes

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/eintr"
)

// Read fills b with random bytes from getrandom(2): short reads are
// continued and EINTR retried. On a kernel without getrandom (before
// 3.17, ENOSYS) it reads /dev/urandom instead, as crypto/rand does. It
// returns an error naming the source when neither answers; b is then not
// random and must not be used.
func Read(b []byte) error {
	return read(b, unix.Getrandom)
}

// read is Read with its getrandom(2) (a test seam).
func read(b []byte, getrandom func([]byte, int) (int, error)) error {
	for len(b) > 0 {
		n, err := eintr.Retry2(func() (int, error) { return getrandom(b, 0) })
		if errors.Is(err, unix.ENOSYS) {
			return urandom(b)
		}
		if err != nil {
			return fmt.Errorf("randbytes: getrandom: %w", err)
		}
		if n <= 0 {
			return fmt.Errorf("randbytes: getrandom returned %d bytes of %d", n, len(b))
		}
		b = b[n:]
	}
	return nil
}

// urandom fills b from /dev/urandom.
func urandom(b []byte) error {
	const path = "/dev/urandom"
	fd, err := eintr.Retry2(func() (int, error) { return unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0) })
	if err != nil {
		return fmt.Errorf("randbytes: getrandom(2) is missing (kernel before 3.17) and %s cannot be opened: %w", path, err)
	}
	defer unix.Close(fd)
	for len(b) > 0 {
		n, err := eintr.Retry2(func() (int, error) { return unix.Read(fd, b) })
		if err != nil {
			return fmt.Errorf("randbytes: read %s: %w", path, err)
		}
		if n <= 0 {
			return fmt.Errorf("randbytes: read %s: %w", path, io.ErrUnexpectedEOF)
		}
		b = b[n:]
	}
	return nil
}

// Reader is an io.Reader over Read, for code written against one (such
// as a ULID's entropy source). It never returns a short read without an
// error.
var Reader io.Reader = reader{}

type reader struct{}

func (reader) Read(b []byte) (int, error) {
	if err := Read(b); err != nil {
		return 0, err
	}
	return len(b), nil
}
